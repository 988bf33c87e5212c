"""Simulated Flux and Argo CD controllers, answering reconcile requests as the real ones do.

Flux: a new `reconcile.fluxcd.io/requestedAt` gets `status.lastHandledReconcileAt` and a `Ready`
condition; Argo CD: the `argocd.argoproj.io/refresh` annotation is removed (with its
`refresh-timestamp`, unless a newer request came meanwhile), and a top-level
`operation` is cleared with `status.operationState` written. How an object's controller behaves
comes from its annotation `sim.kai-chatops/reconcile` (sync: `sim.kai-chatops/sync`): `succeed`,
`fail`, `fail:MESSAGE`, `slow:2s` (`Reconciling` first, the result after that long) or `never`;
without it, the controllers' default. They follow the store's watch callbacks as asyncio tasks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, Protocol

from testbed.sim import controller_answers as answers
from testbed.sim import keda_controller
from testbed.sim import status as st
from testbed.sim.controller_answers import Behaviour, parse_behaviour
from testbed.sim.objects import timestamp
from testbed.sim.resources import ResourceType
from testbed.sim.selectors import Selector

RECONCILE = "sim.kai-chatops/reconcile"
SYNC = "sim.kai-chatops/sync"
REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
REFRESH = "argocd.argoproj.io/refresh"
REFRESH_TIMESTAMP = "argocd.argoproj.io/refresh-timestamp"
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


class ControlledStore(Protocol):
    """What the controllers need of an API server: the simulator's store, or a real server
    reached through the official client (`testbed.apicontrollers`)."""

    clock: Callable[[], datetime]

    def find_type(self, group: str, version: str, plural: str) -> ResourceType | None: ...

    def get(self, rtype: ResourceType, namespace: str | None, name: str) -> dict[str, Any]: ...

    def create(self, rtype: ResourceType, namespace: str | None, body: Any) -> dict[str, Any]: ...

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


class Controllers:
    """The simulated Flux and Argo CD controllers of one store; `start()` then `stop()`."""

    def __init__(
        self, store: ControlledStore, *, default: Behaviour | None = None, keda: bool = False
    ) -> None:
        self.store = store
        self.default = default or Behaviour()
        self.keda = keda  # also answer KEDA pause annotations (the demo does; tests mostly not)
        self._unsubscribe: list[Callable[[], None]] = []
        self._busy: set[tuple[str, ...]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        # every refresh pass that ended: (namespace, name, the refresh-timestamp it served)
        self.refreshed: list[tuple[str, str, str]] = []

    def start(self) -> None:
        """Follow the Flux and Argo CD types the store serves now (needs a running loop)."""
        loop = asyncio.get_running_loop()
        followed = (*FLUX_TYPES, APPLICATIONS, *(keda_controller.TYPES if self.keda else ()))
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
            if rtype.group == keda_controller.GROUP:
                self._notice_keda(rtype, obj)
            elif rtype.group == APPLICATIONS[0]:
                self._notice_application(rtype, obj)
            else:
                self._notice_flux(rtype, obj)

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

    # --- Flux ---------------------------------------------------------------------------

    def _notice_flux(self, rtype: ResourceType, obj: dict[str, Any]) -> None:
        token = _annotations(obj).get(REQUESTED_AT)
        if not token or token == _handled(obj):
            return
        key = (rtype.plural, *_where(obj), str(token))
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
            self._write_flux(rtype, obj, {"conditions": answers.progressing(obj, now)})
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

    def _write_flux(self, rtype: ResourceType, obj: dict[str, Any], status: dict[str, Any]) -> None:
        self._write(rtype, obj, {"status": status}, "status")

    # --- KEDA ---------------------------------------------------------------------------

    def _notice_keda(self, rtype: ResourceType, seen: dict[str, Any]) -> None:
        obj = self._current(rtype, seen)
        patch = (
            None if obj is None else keda_controller.paused_status_patch(obj, self.store.clock())
        )
        if obj is not None and patch is not None:
            self._write(rtype, obj, patch, "status")

    # --- Argo CD ------------------------------------------------------------------------

    def _notice_application(self, rtype: ResourceType, obj: dict[str, Any]) -> None:
        where = _where(obj)
        if REFRESH in _annotations(obj):
            self._claim(("refresh", *where), lambda: self._refresh(rtype, obj))
        if obj.get("operation"):
            self._claim(("operation", *where), lambda: self._operate(rtype, obj))

    async def _refresh(self, rtype: ResourceType, seen: dict[str, Any]) -> None:
        """Refresh passes until no request is left: a request made during a pass (a new
        `refresh-timestamp`) survives that pass's removal and gets a pass of its own."""
        obj = self._current(rtype, seen)
        while obj is not None and REFRESH in _annotations(obj):
            behaviour = parse_behaviour(str(_annotations(obj).get(RECONCILE, "")), self.default)
            if behaviour.mode == "never":
                return
            await asyncio.sleep(behaviour.delay)
            now = timestamp(self.store.clock())
            self._patch_app(rtype, obj, {"status": {"reconciledAt": now}})
            self.refreshed.append((*_where(obj), str(_annotations(obj).get(REFRESH_TIMESTAMP))))
            obj = None if self._remove_refresh(rtype, obj) else self._current(rtype, obj)

    def _remove_refresh(self, rtype: ResourceType, orig: dict[str, Any]) -> bool:
        """Remove `refresh` and the timestamp the pass started from, as argo-cd
        controller/appcontroller.go `handleRefreshAnnotation` does; False when a newer request
        arrived meanwhile (the timestamp's `test` failed and both annotations stay)."""
        try:
            self._patch_app(rtype, orig, answers.refresh_removal(_annotations(orig)))
            return True
        except st.ApiError as exc:
            if exc.code != 422:
                raise
        before = _annotations(orig)
        current = self._current(rtype, orig)
        if REFRESH_TIMESTAMP not in before or current is None:
            return True  # removed by someone else meanwhile
        now = _annotations(current)
        stamp = now.get(REFRESH_TIMESTAMP)
        if REFRESH in now and stamp is not None and stamp != before[REFRESH_TIMESTAMP]:
            return False
        try:  # some other change (the annotation removed by hand): remove what is there now
            self._patch_app(rtype, current, answers.refresh_removal(now))
        except st.ApiError as exc:
            if exc.code != 422:
                raise
        return True

    async def _operate(self, rtype: ResourceType, seen: dict[str, Any]) -> None:
        """Run the operation as argo-cd controller/sync.go does, with the operation's own sync
        options (`CreateNamespace=true` creates the destination namespace) and retries (up to
        `operation.retry.limit`, at once: backoff is not simulated). `blocked` leaves it Running,
        held by a sync window."""
        obj = self._current(rtype, seen)
        if obj is None or not obj.get("operation"):
            return
        behaviour = parse_behaviour(str(_annotations(obj).get(SYNC, "")), self.default)
        if behaviour.mode == "never":
            return
        started = timestamp(self.store.clock())
        running = {"operation": obj["operation"], "phase": "Running", "startedAt": started}
        blocked = behaviour.mode == "blocked"
        running["message"] = (
            answers.BLOCKED_BY_WINDOW if blocked else "one or more tasks are running"
        )
        self._patch_app(rtype, obj, answers.replace_status(obj, {"operationState": running}))
        if blocked:
            return
        for attempt in range(answers.retry_limit(obj["operation"]) + 1):
            await asyncio.sleep(behaviour.delay)  # the simulated sync takes this long
            current = self._current(rtype, obj)
            if current is None or not current.get("operation"):
                return
            failure, running = self._attempt_sync(current, behaviour, running)
            if failure is None or attempt == answers.retry_limit(obj["operation"]):
                now = timestamp(self.store.clock())
                self._patch_app(
                    rtype, current, answers.sync_outcome(current, running, failure, now)
                )
                return
            running = {**running, "retryCount": attempt + 1}
            running["message"] = f"{failure}. Retrying attempt #{attempt + 1}."
            self._patch_app(
                rtype, current, answers.replace_status(current, {"operationState": running})
            )

    def _attempt_sync(
        self, app: dict[str, Any], behaviour: Behaviour, running: dict[str, Any]
    ) -> tuple[str | None, dict[str, Any]]:
        """One try: the failure (None: it worked) and the running state with what it did."""
        failure = answers.sync_failure(behaviour)
        namespace = str(((app.get("spec") or {}).get("destination") or {}).get("namespace") or "")
        if failure is not None or not namespace or self._namespace_exists(namespace):
            return failure, running
        if "CreateNamespace=true" not in answers.sync_options(app["operation"]):
            return answers.namespace_failure(namespace), running
        self._create_namespace(namespace)
        resources = [answers.created_namespace(namespace)]
        return None, {**running, "syncResult": {"resources": resources}}

    def _namespace_exists(self, name: str) -> bool:
        namespaces = self.store.find_type("", "v1", "namespaces")
        return (
            namespaces is None
            or self._current(namespaces, {"metadata": {"name": name}}) is not None
        )

    def _create_namespace(self, name: str) -> None:
        namespaces = self.store.find_type("", "v1", "namespaces")
        if namespaces is not None:
            body = {"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}
            self.store.create(namespaces, None, body)

    def is_refreshing(self, namespace: str, name: str) -> bool:
        """Whether a refresh pass of that Application is under way."""
        return ("refresh", namespace, name) in self._busy

    def _patch_app(self, rtype: ResourceType, obj: dict[str, Any], patch: Any) -> None:
        self._write(rtype, obj, patch, "main")  # Applications have no status subresource

    def _write(
        self,
        rtype: ResourceType,
        obj: dict[str, Any],
        patch: Any,
        mode: Literal["main", "status"],
    ) -> None:
        """A merge patch (a dict) or a JSON patch (a list of operations)."""
        namespace, name = _where(obj)
        kind: Literal["merge", "json"] = "json" if isinstance(patch, list) else "merge"
        try:
            self.store.patch(rtype, namespace, name, kind, patch, mode=mode)
        except st.ApiError as exc:
            if exc.code != 404:  # deleted meanwhile: nothing left to reconcile
                raise

    def _current(self, rtype: ResourceType, obj: dict[str, Any]) -> dict[str, Any] | None:
        namespace, name = _where(obj)
        try:
            return self.store.get(rtype, namespace, name)
        except st.ApiError:  # deleted meanwhile: nothing left to reconcile
            return None


def _annotations(obj: dict[str, Any]) -> dict[str, Any]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def _where(obj: dict[str, Any]) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace", "")), str(metadata.get("name", ""))


def _handled(obj: dict[str, Any]) -> Any:
    return (obj.get("status") or {}).get("lastHandledReconcileAt")
