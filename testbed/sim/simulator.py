"""`Simulator`: a local Kubernetes API server for tests, benchmarks and `kai-chatops demo`.

Owns the store, the request log, the faults and the HTTP server's lifecycle, writes a
kubeconfig for it, loads scenarios, and offers direct (no HTTP) reads and writes that go
through the same store semantics: every write gets a resourceVersion and reaches watchers.
Optionally runs simulated Flux and Argo CD controllers (`testbed.sim.controllers`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from testbed.sim import kai_releases
from testbed.sim import status as st
from testbed.sim.controller_answers import Behaviour
from testbed.sim.controllers import Controllers
from testbed.sim.faults import Faults, RecordedRequest
from testbed.sim.impersonation import Impersonation
from testbed.sim.objects import timestamp
from testbed.sim.podlogs import PodLogs
from testbed.sim.resources import ResourceType
from testbed.sim.scenarios import load_documents
from testbed.sim.server import ApiServer
from testbed.sim.store import Clock, Store, utc_now

_OriginalKey = tuple[str, str, str, str]  # (group, plural, namespace or "", name)


class Simulator:
    """A simulated cluster served over HTTP on 127.0.0.1 (see the package docstring)."""

    def __init__(
        self,
        *,
        scenarios: Sequence[str] = (),
        clock: Clock = utc_now,
        history: int = 1000,
        controllers: bool = False,
        bookmark_every: float = 1.0,
        kai_release: str | None = None,
        gone_every: float = 0.5,
    ) -> None:
        """`history`: changes kept for watches and list snapshots (older ones are compacted);
        `bookmark_every`: seconds an idle watch that allows bookmarks waits for one;
        `gone_every`: seconds an idle watch waits before it looks whether its client went away
        (each look wakes the stream: a fleet's thousands of watches on one simulator cost it
        most of a core at half a second);
        `kai_release`: the KAI release whose objects the scenarios hold and whose writes the
        KAI actions make (`testbed.sim.kai_releases`: v0.12, v0.13, v0.16, v0.17, the default).

        Raises:
            ValueError: a KAI release the imitation does not play.
        """
        self.kai = kai_releases.release(kai_release)
        self.store = Store(clock=clock, history=history)
        self.bookmark_every = bookmark_every
        self.gone_every = gone_every
        self.controllers: Controllers | None = None
        self._with_controllers = controllers
        self.requests: list[RecordedRequest] = []
        self.faults = Faults()
        # Whether the bot may impersonate, and the impersonated people's RBAC (`grant`).
        self.impersonation = Impersonation()
        self.logs = PodLogs()  # what `pods/log` answers; `write_log` fills it
        self._server: ApiServer | None = None
        self._host, self._port = "127.0.0.1", 0
        self._originals: dict[_OriginalKey, dict[str, Any]] = {}
        for scenario in scenarios:
            self.load_scenario(scenario)

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT` (the last one after `stop()`, so a restart keeps it).

        Raises:
            RuntimeError: before the first `start()`.
        """
        if not self._port:
            raise RuntimeError("the simulator has not been started")
        return f"http://{self._host}:{self._port}"

    @property
    def is_running(self) -> bool:
        return self._server is not None

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Serve the API; port 0 picks a free port, or the previous one after a `stop()`."""
        if self._server is not None:
            return
        server = ApiServer(
            self.store,
            self.requests,
            self.faults,
            self.logs,
            bookmark_every=self.bookmark_every,
            impersonation=self.impersonation,
            gone_every=self.gone_every,
        )
        self._port = await server.start(host, port or self._port)
        self._host, self._server = host, server
        if self._with_controllers:
            self.start_controllers()

    async def more_urls(self, count: int) -> list[str]:
        """`count` more addresses of this same server (a port each): a fleet of clusters on one
        simulator, each at an address of its own as each real cluster is, so their thousands
        of connections do not all share one port's TCP connections and TIME_WAITs."""
        assert self._server is not None, "start() first"
        ports = [await self._server.listen_also(self._host) for _ in range(count)]
        return [f"http://{self._host}:{port}" for port in ports]

    async def stop(self) -> None:
        """Stop serving: open watches end and connections are refused until `start()`.

        Simulated controllers keep running (they work on the store, as controllers outlive an
        API server restart); leaving the `async with` block stops them.
        """
        if self._server is not None:
            server, self._server = self._server, None
            await server.stop()

    async def __aenter__(self) -> Simulator:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()
        await self.stop_controllers()

    def start_controllers(
        self, default: Behaviour | None = None, *, keda: bool = False
    ) -> Controllers:
        """Run simulated Flux and Argo CD controllers (`testbed.sim.controllers`) on this loop.

        `default` is what they do for objects without a `sim.kai-chatops/...` annotation.
        """
        if self.controllers is None:
            self.controllers = Controllers(self.store, default=default, keda=keda)
            self.controllers.start()
        return self.controllers

    async def stop_controllers(self) -> None:
        """Stop the simulated controllers, if they run."""
        if self.controllers is not None:
            controllers, self.controllers = self.controllers, None
            await controllers.stop()

    @property
    def open_watches(self) -> int:
        """Watch streams still open; each is logged in `requests` once it ends."""
        return 0 if self._server is None else self._server.open_watches

    def end_watches(self) -> None:
        """End every open watch stream now (the client sees its stream end early)."""
        if self._server is not None:
            self._server.end_watches()

    def clear_requests(self) -> None:
        """Forget the recorded requests (e.g. after setup, before counting)."""
        self.requests.clear()

    def write_kubeconfig(
        self, path: str, context: str = "sim", *, more_contexts: Sequence[str] = ()
    ) -> str:
        """Write a kubeconfig for this simulator (plain http, no credentials); returns the path.

        `more_contexts` adds contexts by those names on this same server: a fleet of clusters
        for one service, all answered by this simulator.
        """
        names = [context, *more_contexts]
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": n, "cluster": {"server": self.url}} for n in names],
            "users": [{"name": n, "user": {}} for n in names],
            "contexts": [{"name": n, "context": {"cluster": n, "user": n}} for n in names],
            "current-context": context,
        }
        target = Path(path).expanduser()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        return str(target)

    # --- scenarios -------------------------------------------------------------------------

    def load_scenario(self, name_or_path: str) -> None:
        """Create (or replace) a scenario's objects and remember them as the state to heal to.

        Raises:
            ValueError: for an unknown scenario or a malformed file.
            ApiError: for an object of a kind the simulated cluster does not serve.
        """
        now = timestamp(self.store.clock())
        for document in kai_releases.reshape(load_documents(name_or_path), self.kai):
            stored = self.apply(_stamped(document, now))
            rtype = self._type_of(stored)
            self._originals[_key(rtype, stored)] = stored

    def original(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None:
        """An object as the loaded scenarios created it, or None if they did not."""
        rtype = self.store.resolve(api_version, kind)
        found = self._originals.get((rtype.group, rtype.plural, namespace or "", name))
        return copy.deepcopy(found)

    # --- direct access (no HTTP) -----------------------------------------------------------

    def apply(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Create or replace an object whole (status included); returns it as stored.

        Raises:
            ApiError: 404 for a kind that is not served, 400/422 for a malformed object.
        """
        rtype = self._type_of(obj)
        namespace = (obj.get("metadata") or {}).get("namespace")
        try:
            return self.store.create(rtype, namespace, obj, mode="seed")
        except st.ApiError as exc:
            if exc.reason != "AlreadyExists":
                raise
        name = obj["metadata"]["name"]
        return self.store.replace(rtype, namespace, name, obj, mode="seed")

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None:
        """An object (`kind` may be a Kind, plural or short name), or None if absent."""
        try:
            return self.store.get(self.store.resolve(api_version, kind), namespace, name)
        except st.ApiError as exc:
            if exc.code == 404:
                return None
            raise

    def delete(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None:
        """Delete an object; returns its last state, or None if it was absent."""
        try:
            return self.store.delete(self.store.resolve(api_version, kind), namespace, name)
        except st.ApiError as exc:
            if exc.code == 404:
                return None
            raise

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        patch: Mapping[str, Any],
    ) -> dict[str, Any]:
        """Merge-patch any part of an object (spec changes bump its generation).

        Raises:
            ApiError: 404 when the object or its kind is absent.
        """
        rtype = self.store.resolve(api_version, kind)
        return self.store.patch(rtype, namespace, name, "merge", dict(patch), mode="seed")

    def patch_status(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        status: Mapping[str, Any],
    ) -> dict[str, Any]:
        """Merge-patch an object's status, as its controller would.

        Raises:
            ApiError: 404 when the object or its kind is absent.
        """
        rtype = self.store.resolve(api_version, kind)
        body = {"status": dict(status)}
        return self.store.patch(rtype, namespace, name, "merge", body, mode="seed")

    def set_condition(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        type: str,
        status: str,
        reason: str,
        message: str,
        observed_generation: int | None = None,
    ) -> dict[str, Any]:
        """Set one `status.conditions[]` entry, replacing the one of the same type.

        `lastTransitionTime` is stamped with the simulator's clock whenever the condition
        changes. Without `observed_generation`, the object's current generation is written if
        its conditions carry `observedGeneration` at all (KAI, Flux), else none (KEDA, APIService).

        Raises:
            ApiError: 404 when the object or its kind is absent.
        """
        current = self.get(api_version, kind, name, namespace)
        if current is None:
            rtype = self.store.resolve(api_version, kind)
            raise st.not_found(rtype.plural, rtype.group, name)
        conditions = list((current.get("status") or {}).get("conditions") or [])
        wanted: dict[str, Any] = {"type": type, "status": status, "reason": reason}
        wanted["message"] = message
        generation = _observed(conditions, current, observed_generation)
        if generation is not None:
            wanted["observedGeneration"] = generation
        index = next((i for i, c in enumerate(conditions) if c.get("type") == type), None)
        old = conditions[index] if index is not None else {}
        if {k: old.get(k) for k in wanted} == wanted:
            return current
        wanted["lastTransitionTime"] = timestamp(self.store.clock())
        if index is None:
            conditions.append(wanted)
        else:
            conditions[index] = wanted
        return self.patch_status(api_version, kind, name, namespace, {"conditions": conditions})

    def write_log(
        self,
        namespace: str,
        pod: str,
        container: str,
        lines: Sequence[str],
        *,
        previous: bool = False,
    ) -> None:
        """Set what a container printed (its previous instance with `previous`), one line each."""
        self.logs.write(
            namespace, pod, container, "".join(f"{line}\n" for line in lines), previous=previous
        )

    def _type_of(self, obj: Mapping[str, Any]) -> ResourceType:
        return self.store.resolve(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))


def _key(rtype: ResourceType, obj: Mapping[str, Any]) -> _OriginalKey:
    metadata = obj["metadata"]
    return (rtype.group, rtype.plural, metadata.get("namespace", ""), metadata["name"])


def _observed(
    conditions: list[dict[str, Any]], obj: Mapping[str, Any], given: int | None
) -> int | None:
    if given is not None:
        return given
    if any("observedGeneration" in c for c in conditions):
        return int(obj["metadata"].get("generation", 1))
    return None


def _stamped(document: Mapping[str, Any], now: str) -> dict[str, Any]:
    """A scenario object whose conditions without a lastTransitionTime get `now`."""
    obj = copy.deepcopy(dict(document))
    for condition in (obj.get("status") or {}).get("conditions") or []:
        condition.setdefault("lastTransitionTime", now)
    return obj
