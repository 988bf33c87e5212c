"""The simulator's Flux, Argo CD, KEDA and KAI operator stand-ins, run against a real API server.

The cluster tier (tests/cluster/) has a real kube-apiserver but no Flux, Argo CD or KEDA: this
process plays them, answering `requestedAt`, `refresh`, `operation` and the pause annotations
exactly as `testbed.sim.controllers` does inside the simulator, through the official client, so
what the bot sees differs only in what the real server itself decides. With `--kai-release` it
also writes kai-config's and the SchedulingShards' conditions as that KAI release's operator
does (`testbed.sim.kai_operator`: v0.12, v0.13, v0.16, v0.17), from the operand workloads it
finds. Run it as a process of its own:
`python -m testbed.apicontrollers --kubeconfig PATH [--keda] [--kai-release v0.17]`; it prints
`ready` once it follows every type, and stops on SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from kubernetes import client, config, dynamic
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from testbed.sim import kai_releases
from testbed.sim import status as st
from testbed.sim.controllers import Controllers
from testbed.sim.kai_releases import KaiRelease
from testbed.sim.resources import ResourceType
from testbed.sim.selectors import Selector

Callback = Callable[[str, dict[str, Any]], None]
_PATCH_TYPES = {"merge": "application/merge-patch+json", "json": "application/json-patch+json"}


class ApiServerStore:
    """A real API server behind the interface the simulated controllers use (as an admin or a
    controller identity: whatever the kubeconfig says)."""

    def __init__(self, api: client.ApiClient) -> None:
        self._api = api
        # Discovery cached in a directory of this process's own: the client's default file is
        # named by host:port, so a simulator on a reused loopback port would be told the types
        # of another one (a list of a type it does not serve answered 404).
        self._discovery = tempfile.TemporaryDirectory(prefix="kai-apicontrollers-")
        cache = str(Path(self._discovery.name) / "discovery.json")
        self._dynamic = dynamic.DynamicClient(api, cache_file=cache)  # type: ignore[no-untyped-call]
        self._stops: list[threading.Event] = []
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)

    def find_type(self, group: str, version: str, plural: str) -> ResourceType | None:
        api_version = f"{group}/{version}" if group else version
        try:
            found = self._dynamic.resources.get(api_version=api_version, name=plural)
        except ResourceNotFoundError:
            return None
        singular = str(getattr(found, "singular_name", "") or plural)
        return ResourceType(group, version, plural, singular, found.kind, found.namespaced)

    def get(self, rtype: ResourceType, namespace: str | None, name: str) -> dict[str, Any]:
        return self._call(lambda: self._resource(rtype).get(name=name, namespace=namespace or None))

    def items(self, rtype: ResourceType, namespace: str | None) -> list[dict[str, Any]]:
        listed = self._call(lambda: self._resource(rtype).get(namespace=namespace or None))
        return list(listed.get("items") or [])

    def create(self, rtype: ResourceType, namespace: str | None, body: Any) -> dict[str, Any]:
        resource = self._resource(rtype)
        return self._call(lambda: resource.create(body=body, namespace=namespace or None))

    def patch(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        patch_type: Literal["merge", "json"],
        patch: Any,
        *,
        mode: Literal["main", "status"] = "main",
    ) -> dict[str, Any]:
        resource = self._resource(rtype)
        target = resource.status if mode == "status" else resource
        return self._call(
            lambda: target.patch(
                body=patch,
                name=name,
                namespace=namespace or None,
                content_type=_PATCH_TYPES[patch_type],
            )
        )

    def watch(
        self,
        rtype: ResourceType,
        namespace: str | None,
        selector: Selector,
        since: str,
        callback: Callback,
    ) -> tuple[list[tuple[str, dict[str, Any]]], Callable[[], None]]:
        """List now, then follow from that list's resourceVersion in a thread (relisting when
        the server answers 410), calling `callback` for each change. Only empty selectors."""
        assert not selector.labels and not selector.fields, "the controllers select nothing"
        listed = self._resource(rtype).get(namespace=namespace or None).to_dict()
        first = [("ADDED", item) for item in listed.get("items") or []]
        stop = threading.Event()
        self._stops.append(stop)
        since_rv = str(listed["metadata"]["resourceVersion"])
        follower = threading.Thread(
            target=self._follow, args=(rtype, since_rv, callback, stop), daemon=True
        )
        follower.start()
        return first, stop.set

    def close(self) -> None:
        for stop in self._stops:
            stop.set()

    def _follow(
        self, rtype: ResourceType, since: str, callback: Callback, stop: threading.Event
    ) -> None:
        resource = self._resource(rtype)
        while not stop.is_set():
            try:
                for event in resource.watch(resource_version=since, timeout=5):
                    if stop.is_set():
                        return
                    obj = event["raw_object"]
                    since = str(obj.get("metadata", {}).get("resourceVersion", since))
                    if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                        callback(event["type"], obj)
            except client.ApiException as exc:
                if exc.status != 410:
                    print(f"watch {rtype.plural}: {exc.status} {exc.reason}", file=sys.stderr)
                    stop.wait(1.0)  # a controller backs off, then follows again
                    continue
                listed = resource.get().to_dict()  # expired: start again from now
                since = str(listed["metadata"]["resourceVersion"])
                for item in listed.get("items") or []:
                    callback("ADDED", item)

    def _resource(self, rtype: ResourceType) -> Any:
        return self._dynamic.resources.get(api_version=rtype.api_version, name=rtype.plural)

    @staticmethod
    def _call(request: Callable[[], Any]) -> dict[str, Any]:
        """The answer as a plain dict; a refusal as the simulator's ApiError (the controllers
        treat 404 as "deleted meanwhile")."""
        try:
            answer: dict[str, Any] = request().to_dict()
        except client.ApiException as exc:
            raise st.ApiError(int(exc.status or 500), str(exc.reason or "")) from exc
        return answer


async def run(kubeconfig: str, *, keda: bool, kai: KaiRelease | None = None) -> int:
    api = config.new_client_from_config(config_file=kubeconfig)  # type: ignore[no-untyped-call]
    store = ApiServerStore(api)
    controllers = Controllers(store, keda=keda, kai=kai)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    controllers.start()
    print("ready", flush=True)
    try:
        await stopping.wait()
    finally:
        await controllers.stop()
        store.close()
        api.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.apicontrollers", description=__doc__)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--keda", action="store_true", help="also answer KEDA pause annotations")
    parser.add_argument(
        "--kai-release",
        choices=sorted(kai_releases.RELEASES),
        help="also write KAI's conditions as this release's operator does",
    )
    args = parser.parse_args(argv)
    kai = kai_releases.release(args.kai_release) if args.kai_release else None
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(run(args.kubeconfig, keda=args.keda, kai=kai))
    return 0


if __name__ == "__main__":
    sys.exit(main())
