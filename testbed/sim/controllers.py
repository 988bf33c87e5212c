"""Simulated Flux and Argo CD controllers, answering reconcile requests as the real ones do.

Flux: a new `reconcile.fluxcd.io/requestedAt` gets `status.lastHandledReconcileAt` and a `Ready`
condition; Argo CD: the `argocd.argoproj.io/refresh` annotation is removed (with its
`refresh-timestamp`, unless a newer request came meanwhile), and a top-level
`operation` is cleared with `status.operationState` written. How an object's controller behaves
comes from its annotation `sim.kai-chatops/reconcile` (sync: `sim.kai-chatops/sync`): `succeed`,
`fail`, `fail:MESSAGE`, `retry:MESSAGE`, `stall:MESSAGE`, `slow:2s` (`Reconciling` first, the
result after that long) or `never`; without it, the controllers' default. They follow the
store's watch callbacks as asyncio tasks. Flux and KEDA here, and with `kai` a KAI release's
operator status pass (`testbed.sim.kai_operator`) at every change of KAI's objects and workloads;
Argo CD in `testbed.sim.argo_controller`, the shared store access in
`testbed.sim.controller_base`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from testbed.sim import controller_answers as answers
from testbed.sim import kai_operator, keda_controller
from testbed.sim.argo_controller import ArgoCDController
from testbed.sim.controller_answers import Behaviour, parse_behaviour
from testbed.sim.controller_base import RECONCILE, ControlledStore, location
from testbed.sim.controller_base import annotations_of as _annotations
from testbed.sim.flux_events import flux_event
from testbed.sim.kai_releases import KaiRelease
from testbed.sim.objects import timestamp
from testbed.sim.resources import ResourceType
from testbed.sim.selectors import Selector

log = logging.getLogger(__name__)

REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
FLUX_TYPES = (
    ("helm.toolkit.fluxcd.io", "v2", "helmreleases"),
    ("kustomize.toolkit.fluxcd.io", "v1", "kustomizations"),
    ("source.toolkit.fluxcd.io", "v1", "gitrepositories"),
    ("source.toolkit.fluxcd.io", "v1", "helmrepositories"),
    ("source.toolkit.fluxcd.io", "v1", "ocirepositories"),
    ("source.toolkit.fluxcd.io", "v1", "helmcharts"),
    ("source.toolkit.fluxcd.io", "v1", "buckets"),
)
APPLICATIONS = ("argoproj.io", "v1alpha1", "applications")
Event = tuple[ResourceType, dict[str, Any]]


class Controllers(ArgoCDController):
    """The simulated Flux and Argo CD controllers of one store; `start()` then `stop()`."""

    def __init__(
        self,
        store: ControlledStore,
        *,
        default: Behaviour | None = None,
        keda: bool = False,
        kai: KaiRelease | None = None,
    ) -> None:
        super().__init__(store, default=default)
        self.keda = keda  # also answer KEDA pause annotations (the demo does; tests mostly not)
        self.kai = kai  # also write KAI's conditions as this release's operator does
        self._kai_writes: set[str] = set()  # resourceVersions of its own status writes
        self._unsubscribe: list[Callable[[], None]] = []
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._keda_seen: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}

    def start(self) -> None:
        """Follow the Flux and Argo CD types the store serves now (needs a running loop)."""
        loop = asyncio.get_running_loop()
        followed = (
            *FLUX_TYPES,
            APPLICATIONS,
            *(keda_controller.TYPES if self.keda else ()),
            *(kai_operator.FOLLOWED if self.kai else ()),
        )
        for group, version, plural in followed:
            rtype = self.store.find_type(group, version, plural)
            if rtype is None:
                continue

            def deliver(_: str, obj: dict[str, Any], rtype: ResourceType = rtype) -> None:
                loop.call_soon_threadsafe(self._queue.put_nowait, (rtype, obj))

            first, unsubscribe = self.store.watch(rtype, None, Selector(), "", deliver)
            self._unsubscribe.append(unsubscribe)
            for _, obj in first:
                self._queue.put_nowait((rtype, obj))
        self._spawn(self._follow())

    async def stop(self) -> None:
        """Stop following the store and cancel the reconciles in progress."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _follow(self) -> None:
        while True:
            rtype, obj = await self._queue.get()
            try:
                self._notice(rtype, obj)
            except Exception:  # a controller logs a failed reconcile and goes on with the next
                log.exception("simulated controllers: reconciling %s failed", rtype.plural)

    def _notice(self, rtype: ResourceType, obj: dict[str, Any]) -> None:
        if rtype.group == keda_controller.GROUP:
            self._notice_keda(rtype, obj)
        elif (rtype.group, rtype.version, rtype.plural) in kai_operator.FOLLOWED:
            self._notice_kai(obj)
        elif rtype.group == APPLICATIONS[0]:
            self._notice_application(rtype, obj)
        else:
            self._notice_flux(rtype, obj)

    # --- Flux ---------------------------------------------------------------------------

    def _notice_flux(self, rtype: ResourceType, obj: dict[str, Any]) -> None:
        token = _annotations(obj).get(REQUESTED_AT)
        if not token or token == _handled(obj):
            return
        key = (rtype.plural, *location(obj), str(token))
        self._claim(key, lambda: self._reconcile_flux(rtype, obj, str(token)))

    async def _reconcile_flux(self, rtype: ResourceType, seen: dict[str, Any], token: str) -> None:
        obj = self._current(rtype, seen)  # events queue up: act on the object as it is now
        if obj is None or _annotations(obj).get(REQUESTED_AT) != token or _handled(obj) == token:
            return
        behaviour = parse_behaviour(str(_annotations(obj).get(RECONCILE, "")), self.default)
        spec = obj.get("spec") or {}
        if behaviour.mode == "never" or (
            rtype.kind == "HelmRepository" and spec.get("type") == "oci"
        ):
            return
        if spec.get("suspend") is True:  # Flux still marks the request handled, and does nothing
            self._write_flux(rtype, obj, {"lastHandledReconcileAt": token})
            return
        if behaviour.delay > 0:
            now = timestamp(self.store.clock())
            busy = answers.progressing(obj, now, rtype.kind)
            self._write_flux(rtype, obj, {"conditions": busy})
            await asyncio.sleep(behaviour.delay)  # the simulated reconcile takes this long
        current = self._current(rtype, obj)
        if current is not None:
            self._write_flux(
                rtype,
                current,
                answers.flux_outcome(
                    rtype.kind, current, token, behaviour, timestamp(self.store.clock())
                ),
            )
            written = self._current(rtype, current)
            event = None if written is None else flux_event(rtype.kind, written, self.store.clock())
            if event is not None:
                self._record(event)

    def _write_flux(self, rtype: ResourceType, obj: dict[str, Any], status: dict[str, Any]) -> None:
        self._write(rtype, obj, {"status": status}, "status")

    # --- KEDA ---------------------------------------------------------------------------

    def _notice_keda(self, rtype: ResourceType, seen: dict[str, Any]) -> None:
        """Reconcile when the pause annotations change (KEDA's predicates), or on first sight:
        a status write alone is no reconcile, so a stale `Paused` stays as KEDA leaves it."""
        obj = self._current(rtype, seen)
        if obj is None:
            return
        key = (rtype.plural, *location(obj))
        annotations = keda_controller.pause_annotations(obj)
        if self._keda_seen.get(key) == annotations:
            return
        self._keda_seen[key] = annotations
        answer = keda_controller.reconcile(obj)
        for patch in answer.patches:
            self._write(rtype, obj, patch, "status")
        if answer.event is not None:
            self._record(keda_controller.pause_event(obj, *answer.event, self.store.clock()))

    # --- KAI ----------------------------------------------------------------------------

    def _notice_kai(self, obj: dict[str, Any]) -> None:
        """A status pass at every change but those of its own writes (v0.13's operator passed
        again at each of its own, #1229; the imitation does not loop)."""
        version = str((obj.get("metadata") or {}).get("resourceVersion", ""))
        if self.kai is None or version in self._kai_writes:
            return
        self._kai_writes = kai_operator.reconcile(self.store, self.kai)

    # --- Argo CD ------------------------------------------------------------------------


def _handled(obj: dict[str, Any]) -> Any:
    return (obj.get("status") or {}).get("lastHandledReconcileAt")
