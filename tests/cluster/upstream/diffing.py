"""What the differential tests compare: the parts of an object or an Event a controller decides,
with what differs between two clusters for no reason of theirs taken out (names, uids, times,
counts, temporary paths).

`shape` turns a message into its template: the names given become `<name>`, numbers `N`, a
kustomize-controller temporary directory `<tmp>`. Two controllers agree when the templates do.
`Recorded` tells the Events a change made on one side (new ones, and old ones counted up).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from controlplane import poll
from seeding import Seeder

from testbed.sim import Simulator
from testbed.sim.selectors import Selector

_TMP = re.compile(r"/tmp/kustomization-\d+/[^\s':]*")


def shape(text: str, names: Iterable[str] = ()) -> str:
    """The message's template: each of `names` (longest first) `<name>`, numbers `N`."""
    out = _TMP.sub("<tmp>", text)
    for name in sorted(set(names), key=len, reverse=True):
        if name:
            out = out.replace(name, "<name>")
    return re.sub(r"\d+(?:\.\d+)?", "N", out)


def condition(obj: Mapping[str, Any] | None, type_: str) -> dict[str, Any]:
    """The condition `type_` of the object's status ({} when absent)."""
    items = ((obj or {}).get("status") or {}).get("conditions") or []
    return next((dict(c) for c in items if c.get("type") == type_), {})


def decided(found: Mapping[str, Any], names: Iterable[str] = ()) -> dict[str, Any]:
    """A condition as its controller decides it: type, status, reason, message's template (not
    its times, not the generation it observed)."""
    message = str(found.get("message", ""))
    return {
        "type": found.get("type"),
        "status": found.get("status"),
        "reason": found.get("reason"),
        "message": shape(message, names),
    }


def event_view(event: Mapping[str, Any], names: Iterable[str] = ()) -> dict[str, Any]:
    """An Event as a reader sees it: who recorded it, of what, what it says (the template),
    and the keys of its annotations."""
    involved = event.get("involvedObject") or {}
    source = event.get("source") or {}
    return {
        "type": event.get("type"),
        "reason": event.get("reason"),
        "message": shape(str(event.get("message", "")), names),
        "kind": involved.get("kind"),
        "apiVersion": involved.get("apiVersion"),
        "source": source.get("component"),
        "reportingComponent": event.get("reportingComponent"),
        "annotations": sorted((event.get("metadata") or {}).get("annotations") or {}),
    }


def copy_for_simulator(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A real object as the simulator takes it: its spec, labels, annotations and status, none
    of what the real server assigned."""
    meta = obj.get("metadata") or {}
    kept = {k: meta[k] for k in ("name", "namespace", "labels", "annotations") if meta.get(k)}
    copied = {k: v for k, v in obj.items() if k not in ("metadata",)}
    copied["metadata"] = kept
    return copied


class Recorded:
    """The Events about one object on one side, from now on: `since()` lists those recorded
    (or counted up) after this was made."""

    def __init__(self, list_events: Callable[[], list[dict[str, Any]]], name: str) -> None:
        self._list = list_events
        self.name = name
        self._before = self._counts()

    def _counts(self) -> dict[str, int]:
        return {
            e["metadata"]["name"]: int(e.get("count") or 1)
            for e in self._list()
            if (e.get("involvedObject") or {}).get("name") == self.name
        }

    def since(self) -> list[dict[str, Any]]:
        ours = [e for e in self._list() if (e.get("involvedObject") or {}).get("name") == self.name]
        return [
            e for e in ours if int(e.get("count") or 1) > self._before.get(e["metadata"]["name"], 0)
        ]


def real_events(seeder: Seeder, namespace: str) -> list[dict[str, Any]]:
    """The Events of a namespace on the real server."""
    events = seeder.dynamic.resources.get(api_version="v1", kind="Event")
    return list(events.get(namespace=namespace).to_dict()["items"])


def simulated_events(sim: Simulator, namespace: str) -> list[dict[str, Any]]:
    """The Events of a namespace in the simulator."""
    rtype = sim.store.resolve("v1", "Event")
    return list(sim.store.list_objects(rtype, namespace)["items"])


State = tuple[Any, ...]


class RealStates:
    """The states (`state(obj)`) a real object goes through from now on, read by a watch in a
    thread; `wait_for` stops it."""

    def __init__(
        self, seeder: Seeder, api: str, kind: str, name: str, namespace: str,
        state: Callable[[dict[str, Any]], State],
    ) -> None:  # fmt: skip
        self.resource = seeder.dynamic.resources.get(api_version=api, kind=kind)
        self.name, self.namespace, self.state = name, namespace, state
        self.seen: list[State] = []
        since = self.resource.get(name=name, namespace=namespace).metadata.resourceVersion
        self._stop = threading.Event()
        threading.Thread(target=self._follow, args=(since,), daemon=True).start()

    def _follow(self, since: str) -> None:
        while not self._stop.is_set():
            try:
                events = self.resource.watch(
                    namespace=self.namespace, resource_version=since, timeout=2
                )
                for event in events:
                    obj = event["raw_object"]
                    since = obj["metadata"]["resourceVersion"]
                    if obj["metadata"]["name"] == self.name:
                        self.seen.append(self.state(obj))
                    if self._stop.is_set():
                        return
            except Exception:  # the server went away (the session ends): nothing more to see
                if self._stop.wait(0.2):
                    return

    def wait_for(
        self, wanted: set[State], keep: Callable[[State], bool], deadline_s: float = 30
    ) -> set[State]:
        """Poll until every state of `wanted` was seen among those `keep` keeps; those then."""

        def kept() -> set[State]:
            return {s for s in self.seen if keep(s)}

        try:
            poll(f"{self.name} through {wanted}", lambda: wanted <= kept() or None, deadline_s)
        finally:
            self._stop.set()
        return kept()


def simulated_states(
    sim: Simulator, api: str, kind: str, name: str, namespace: str,
    state: Callable[[dict[str, Any]], State],
) -> tuple[list[State], Callable[[], None]]:  # fmt: skip
    """The states a simulated object goes through from now on (the store's own watch), and
    the function that stops following it."""
    rtype = sim.store.resolve(api, kind)
    seen: list[State] = []

    def changed(_: str, obj: dict[str, Any]) -> None:
        if obj["metadata"]["name"] == name:
            seen.append(state(obj))

    _, stop = sim.store.watch(rtype, namespace, Selector(), sim.store.resource_version, changed)
    return seen, stop
