"""What the simulated controllers share: the store they act on, one task per piece of work,
writes that shrug off an object deleted meanwhile.

The store is the simulator's, or a real API server reached through the official client
(`testbed.apicontrollers`). No controller logic here: `testbed.sim.controllers` (Flux, KEDA)
and `testbed.sim.argo_controller` (Argo CD) build on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, Protocol

from testbed.sim import status as st
from testbed.sim.controller_answers import Behaviour
from testbed.sim.resources import ResourceType
from testbed.sim.selectors import Selector

RECONCILE = "sim.kai-chatops/reconcile"


class ControlledStore(Protocol):
    """What the controllers need of an API server: the simulator's store, or a real server
    reached through the official client (`testbed.apicontrollers`)."""

    clock: Callable[[], datetime]

    def find_type(self, group: str, version: str, plural: str) -> ResourceType | None: ...

    def get(self, rtype: ResourceType, namespace: str | None, name: str) -> dict[str, Any]: ...

    def create(self, rtype: ResourceType, namespace: str | None, body: Any) -> dict[str, Any]: ...

    def items(self, rtype: ResourceType, namespace: str | None) -> list[dict[str, Any]]: ...

    def patch(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        patch_type: Literal["merge", "json"],
        patch: Any,
        *,
        mode: Literal["main", "status"] = "main",
    ) -> dict[str, Any]: ...

    def watch(
        self,
        rtype: ResourceType,
        namespace: str | None,
        selector: Selector,
        since: str,
        callback: Callable[[str, dict[str, Any]], None],
    ) -> tuple[list[tuple[str, dict[str, Any]]], Callable[[], None]]: ...


class ControllerBase:
    """The store, the default behaviour, and the work under way (one task per key)."""

    def __init__(self, store: ControlledStore, *, default: Behaviour | None = None) -> None:
        self.store = store
        self.default = default or Behaviour()
        self._busy: set[tuple[str, ...]] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _claim(self, key: tuple[str, ...], start: Callable[[], Any]) -> None:
        """Run `start()` as a task unless the same work is already running."""
        if key in self._busy:
            return
        self._busy.add(key)

        async def run() -> None:
            try:
                await start()
            finally:
                self._busy.discard(key)

        self._spawn(run())

    def _write(
        self,
        rtype: ResourceType,
        obj: dict[str, Any],
        patch: Any,
        mode: Literal["main", "status"],
    ) -> None:
        """A merge patch (a dict) or a JSON patch (a list of operations)."""
        namespace, name = location(obj)
        kind: Literal["merge", "json"] = "json" if isinstance(patch, list) else "merge"
        try:
            self.store.patch(rtype, namespace, name, kind, patch, mode=mode)
        except st.ApiError as exc:
            if exc.code != 404:  # deleted meanwhile: nothing left to reconcile
                raise

    def _record(self, event: dict[str, Any]) -> None:
        """Create an Event, as a controller's recorder does (an API server that serves no Events
        gets none). Its name is `<object>.<hex nanoseconds>`: two Events of one object at the
        same moment of a test's clock that stands still would share it, which a clock that
        moves never makes them do, so the second is named a nanosecond later."""
        events = self.store.find_type("", "v1", "events")
        if events is None:
            return
        meta = event["metadata"]
        base, _, nanos = str(meta["name"]).rpartition(".")
        for later in range(1000):
            named = {**event, "metadata": {**meta, "name": f"{base}.{int(nanos, 16) + later:x}"}}
            try:
                self.store.create(events, meta["namespace"], named)
                return
            except st.ApiError as exc:
                if exc.code != 409:
                    raise

    def _current(self, rtype: ResourceType, obj: dict[str, Any]) -> dict[str, Any] | None:
        namespace, name = location(obj)
        try:
            return self.store.get(rtype, namespace, name)
        except st.ApiError:  # deleted meanwhile: nothing left to reconcile
            return None


def annotations_of(obj: dict[str, Any]) -> dict[str, Any]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def location(obj: dict[str, Any]) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace", "")), str(metadata.get("name", ""))
