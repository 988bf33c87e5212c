"""The simulated Argo CD application controller: refresh passes and sync operations.

A refresh removes `argocd.argoproj.io/refresh` with its `refresh-timestamp` (unless a newer
request came during the pass, which then gets a pass of its own); an `operation` is carried out
and cleared, leaving `status.operationState`. Behaviour from `sim.kai-chatops/reconcile`
(refresh) and `sim.kai-chatops/sync` (operation), as `testbed.sim.controllers` describes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from testbed.sim import controller_answers as answers
from testbed.sim import status as st
from testbed.sim.controller_answers import Behaviour, parse_behaviour
from testbed.sim.controller_base import RECONCILE, ControlledStore, ControllerBase, location
from testbed.sim.controller_base import annotations_of as _annotations
from testbed.sim.objects import timestamp
from testbed.sim.resources import ResourceType

SYNC = "sim.kai-chatops/sync"
REFRESH = "argocd.argoproj.io/refresh"
REFRESH_TIMESTAMP = "argocd.argoproj.io/refresh-timestamp"


class ArgoCDController(ControllerBase):
    """Argo CD's side of the simulated controllers."""

    def __init__(self, store: ControlledStore, *, default: Behaviour | None = None) -> None:
        super().__init__(store, default=default)
        # every refresh pass that ended: (namespace, name, the refresh-timestamp it served)
        self.refreshed: list[tuple[str, str, str]] = []

    def _notice_application(self, rtype: ResourceType, obj: dict[str, Any]) -> None:
        where = location(obj)
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
            self.refreshed.append((*location(obj), str(_annotations(obj).get(REFRESH_TIMESTAMP))))
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
