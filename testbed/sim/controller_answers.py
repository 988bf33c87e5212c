"""What the simulated Flux and Argo CD controllers write back: pure status builders.

`Behaviour` (read from an object's `sim.kai-chatops/...` annotation) says whether a request
succeeds, fails or is never answered, and how long it takes; the functions here build the status
a real controller would leave. No store, no clock: `testbed.sim.controllers` does the writing.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Literal

_SLOW = re.compile(r"slow:(\d+(?:\.\d+)?)(ms|s)")
# retry: Flux fails and retries (Ready False, Reconciling ProgressingWithRetry); stall: Flux
# fails and stops (Stalled True, Ready False); blocked: an Argo CD sync window holds the operation.
Mode = Literal["succeed", "fail", "never", "retry", "stall", "blocked"]
_MODES: dict[str, Mode] = {
    "succeed": "succeed",
    "fail": "fail",
    "never": "never",
    "retry": "retry",
    "stall": "stall",
    "blocked": "blocked",
}
_WITH_MESSAGE: tuple[Mode, ...] = ("fail", "retry", "stall")
FORCE_AT = "reconcile.fluxcd.io/forceAt"
RESET_AT = "reconcile.fluxcd.io/resetAt"
# helm-controller api/v2: each request annotation and the status field that records it.
_HANDLED_REQUESTS = ((FORCE_AT, "lastHandledForceAt"), (RESET_AT, "lastHandledResetAt"))
RETRYING = "ProgressingWithRetry"
BLOCKED_BY_WINDOW = "Sync operation blocked by sync window"  # argo-cd controller/sync.go


@dataclass(frozen=True)
class Behaviour:
    """What a simulated controller does with one request."""

    mode: Mode = "succeed"
    delay: float = 0.0  # seconds spent reconciling before the result
    message: str = ""  # the failure message; empty: a realistic default


def parse_behaviour(value: str, default: Behaviour) -> Behaviour:
    """Read an annotation value (`succeed`, `fail[:MESSAGE]`, `retry[:MESSAGE]`,
    `stall[:MESSAGE]`, `slow:2s`, `never`, `blocked`); else default."""
    text = value.strip()
    if text in _MODES:
        return Behaviour(_MODES[text], default.delay)
    mode, colon, message = text.partition(":")
    if colon and mode in _WITH_MESSAGE:
        return Behaviour(_MODES[mode], default.delay, message.strip())
    slow = _SLOW.fullmatch(text)
    if slow:
        amount = float(slow.group(1)) / (1000 if slow.group(2) == "ms" else 1)
        return Behaviour("succeed", amount)
    return default


# A failed build, in kustomize-controller v1.9.6's words (internal/controller/
# kustomization_controller.go `build`: BuildFailed, its Reconciling condition then says what it
# was doing, and is ProgressingWithRetry): a kustomization.yaml naming a file that is not there.
_TMP = "/tmp/kustomization-2970878331/clusters/prod"
_BUILD_FAILED = (
    "kustomize build failed: accumulating resources: accumulation err='accumulating resources "
    f"from 'missing.yaml': open {_TMP}/missing.yaml: no such file or directory': must build at "
    f"directory: not a valid directory: evalsymlink failure on '{_TMP}/missing.yaml' : lstat "
    f"{_TMP}/missing.yaml: no such file or directory"
)
_FAILURES = {
    "HelmRelease": ("UpgradeFailed", "Helm upgrade failed: context deadline exceeded"),
    "Kustomization": ("BuildFailed", _BUILD_FAILED),
}
_SOURCE_FAILURE = ("FetchFailed", "failed to fetch artifact: connection refused")


def flux_outcome(
    kind: str, obj: dict[str, Any], token: str, behaviour: Behaviour, now: str
) -> dict[str, Any]:
    """The status a Flux controller leaves: request handled, generation observed, Ready set.

    `retry` leaves a failure being retried: Ready False and Reconciling True with reason
    `ProgressingWithRetry` (as helm-controller after a failed upgrade that it rolled back,
    internal/reconcile/atomic_release.go, and kustomize-controller after a failed build); `stall`
    a failure Flux will not retry until the object changes: Stalled True beside Ready False, no
    Reconciling (fluxcd/pkg runtime/conditions/check/fail.go: never both). A failed
    Kustomization leaves `status.observedGeneration` as it was: kustomize-controller moves it
    only once Ready is True (kustomization_controller.go `finalizeStatus`).
    """
    status = obj.get("status") or {}
    keep = [
        c for c in status.get("conditions") or [] if c.get("type") not in ("Reconciling", "Stalled")
    ]
    generation = (obj.get("metadata") or {}).get("generation", 1)
    if behaviour.mode in _WITH_MESSAGE:
        reason, message = _FAILURES.get(kind, _SOURCE_FAILURE)
        ready = {"status": "False", "reason": reason, "message": behaviour.message or message}
    else:
        ready = _ready_success(kind, keep, status)
    conditions = _set_condition(keep, "Ready", ready, generation, now)
    if kind == "HelmRelease":
        conditions = _set_condition(conditions, "Released", ready, generation, now)
    if behaviour.mode == "retry":
        doing = _retrying_message(kind, obj) or ready["message"]
        retrying = {"status": "True", "reason": RETRYING, "message": doing}
        conditions = _set_condition(conditions, "Reconciling", retrying, generation, now)
    if behaviour.mode == "stall":
        stalled = {"status": "True", "reason": ready["reason"], "message": ready["message"]}
        conditions = _set_condition(conditions, "Stalled", stalled, generation, now)
    failed_build = kind == "Kustomization" and ready["status"] == "False"
    observed = {} if failed_build else {"observedGeneration": generation}
    return {
        "lastHandledReconcileAt": token,
        **observed,
        "conditions": conditions,
        **handled_requests(obj),
    }


def _retrying_message(kind: str, obj: dict[str, Any]) -> str:
    """What kustomize-controller's Reconciling condition says while a failed build is retried:
    the step it was in (`Building manifests for revision R with a timeout of T`)."""
    if kind != "Kustomization":
        return ""
    status, spec = obj.get("status") or {}, obj.get("spec") or {}
    revision = status.get("lastAttemptedRevision") or status.get("lastAppliedRevision") or ""
    timeout = go_duration(str(spec.get("timeout") or spec.get("interval") or "5m"))
    return f"Building manifests for revision {revision} with a timeout of {timeout}"


def go_duration(text: str) -> str:
    """A Flux duration (`10m`, `1h30m`, `90s`) as Go's `Duration.String` prints it (`10m0s`)."""
    seconds = 0.0
    for amount, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", text):
        seconds += float(amount) * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[unit]
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def handled_requests(obj: dict[str, Any]) -> dict[str, str]:
    """`lastHandledForceAt` / `lastHandledResetAt`: set to the annotation whenever it is there,
    acted on or not (fluxcd/pkg apis/meta/annotations.go `HandleAnnotationRequest`)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return {field: str(annotations[key]) for key, field in _HANDLED_REQUESTS if key in annotations}


def _ready_success(
    kind: str, conditions: list[dict[str, Any]], status: dict[str, Any]
) -> dict[str, Any]:
    previous = next((c for c in conditions if c.get("type") == "Ready"), None)
    if previous is not None and previous.get("status") == "True":
        return {k: previous[k] for k in ("status", "reason", "message") if k in previous}
    revision = status.get("lastAppliedRevision") or (status.get("artifact") or {}).get(
        "revision", ""
    )
    if kind == "HelmRelease":
        return {"status": "True", "reason": "UpgradeSucceeded", "message": "Helm upgrade succeeded"}
    if kind == "Kustomization":
        message = f"Applied revision: {revision}"
        return {"status": "True", "reason": "ReconciliationSucceeded", "message": message}
    return {
        "status": "True",
        "reason": "Succeeded",
        "message": f"stored artifact for revision '{revision}'",
    }


def progressing(obj: dict[str, Any], now: str, kind: str = "") -> list[dict[str, Any]]:
    """Conditions while a reconcile runs: Reconciling True, Ready Unknown; a Kustomization's in
    kustomize-controller's words (`reconcile`: "Reconciliation in progress", then the step it
    is in, "Fetching manifests for revision R with a timeout of T")."""
    generation = (obj.get("metadata") or {}).get("generation", 1)
    conditions = list((obj.get("status") or {}).get("conditions") or [])
    doing, waiting_for = "reconciliation in progress", "reconciliation in progress"
    if kind == "Kustomization":
        doing = _retrying_message(kind, obj).replace("Building", "Fetching", 1)
        waiting_for = "Reconciliation in progress"
    busy = {"status": "True", "reason": "Progressing", "message": doing}
    conditions = _set_condition(conditions, "Reconciling", busy, generation, now)
    waiting = {"status": "Unknown", "reason": "Progressing", "message": waiting_for}
    return _set_condition(conditions, "Ready", waiting, generation, now)


def _set_condition(
    conditions: list[dict[str, Any]],
    type_: str,
    fields: dict[str, Any],
    generation: int,
    now: str,
) -> list[dict[str, Any]]:
    """Set one condition as apimachinery's `meta.SetStatusCondition` does: its
    `lastTransitionTime` moves only when its status changes (the field is required by the
    upstream CRDs' schema, so a real API server refuses a condition without it)."""
    previous = next((c for c in conditions if c.get("type") == type_), None)
    unchanged = previous is not None and previous.get("status") == fields.get("status")
    since = previous.get("lastTransitionTime") if unchanged and previous else None
    entry = {
        "type": type_,
        **fields,
        "observedGeneration": generation,
        "lastTransitionTime": since or now,
    }
    others = [copy.deepcopy(c) for c in conditions if c.get("type") != type_]
    return [entry, *others] if type_ == "Ready" else [*others, entry]


def sync_outcome(
    app: dict[str, Any], running: dict[str, Any], failure: str | None, finished: str
) -> list[dict[str, Any]]:
    """Argo CD's end of an operation: `operation` removed, `operationState` replaced whole.

    A failure after retries says how many (argo-cd controller/appcontroller.go
    `processRequestedAppOperation`: "... (retried N times).").
    """
    source = (app.get("spec") or {}).get("source") or {}
    revision = str(source.get("targetRevision") or "HEAD")
    result = {"revision": revision, "source": source, **running.get("syncResult", {})}
    state = {**running, "finishedAt": finished, "syncResult": result}
    fields: dict[str, Any] = {"operationState": state}
    if failure is not None:
        retried = int(running.get("retryCount") or 0)
        message = f"{failure} (retried {retried} times)." if retried else failure
        state.update(phase="Failed", message=message)
    else:
        state.update(phase="Succeeded", message="successfully synced (all tasks run)")
        synced = {**((app.get("status") or {}).get("sync") or {}), "status": "Synced"}
        fields.update(sync={**synced, "revision": revision}, reconciledAt=finished)
    return [{"op": "remove", "path": "/operation"}, *replace_status(app, fields)]


def sync_options(operation: dict[str, Any]) -> list[str]:
    """The options the controller honours: the operation's own, never the Application's."""
    return [str(o) for o in (operation.get("sync") or {}).get("syncOptions") or []]


def retry_limit(operation: dict[str, Any]) -> int:
    """How many times a failed sync is retried (`operation.retry.limit`; negative: forever,
    which the simulator caps so that a test cannot spin)."""
    limit = int((operation.get("retry") or {}).get("limit") or 0)
    return _ENDLESS_RETRIES if limit < 0 else limit


_ENDLESS_RETRIES = 10


def sync_failure(behaviour: Behaviour) -> str | None:
    """The failure the behaviour asks for, None when the sync is to succeed."""
    return (behaviour.message or _SYNC_FAILURE) if behaviour.mode == "fail" else None


def namespace_failure(namespace: str) -> str:
    """What Argo CD says when the destination namespace is absent and not to be created."""
    return f'one or more objects failed to apply, reason: namespaces "{namespace}" not found'


def created_namespace(namespace: str) -> dict[str, Any]:
    """The sync result entry of a namespace created by `CreateNamespace=true`."""
    return {
        "group": "",
        "version": "v1",
        "kind": "Namespace",
        "name": namespace,
        "status": "Synced",
        "message": f"namespace/{namespace} created",
        "syncPhase": "PreSync",
    }


_SYNC_FAILURE = "one or more objects failed to apply, reason: admission webhook denied the request"


def replace_status(obj: dict[str, Any], fields: dict[str, Any]) -> list[dict[str, Any]]:
    """JSON patch operations setting whole `status` fields, as Argo CD's controller does."""
    if not isinstance(obj.get("status"), dict):
        return [{"op": "add", "path": "/status", "value": fields}]
    return [
        {"op": "add", "path": f"/status/{key}", "value": value} for key, value in fields.items()
    ]


_REFRESH = "argocd.argoproj.io/refresh"
_REFRESH_TIMESTAMP = "argocd.argoproj.io/refresh-timestamp"


def refresh_removal(annotations: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON patch ending a refresh pass that started from `annotations`: test and remove
    the timestamp, remove `refresh` (argo-cd controller/appcontroller.go
    `removeRefreshAnnotationCombo`); a newer timestamp fails the test, so nothing is removed."""
    operations: list[dict[str, Any]] = []
    if _REFRESH_TIMESTAMP in annotations:
        path = "/metadata/annotations/" + _pointer_token(_REFRESH_TIMESTAMP)
        operations.append({"op": "test", "path": path, "value": annotations[_REFRESH_TIMESTAMP]})
        operations.append({"op": "remove", "path": path})
    if _REFRESH in annotations:
        operations.append(
            {"op": "remove", "path": "/metadata/annotations/" + _pointer_token(_REFRESH)}
        )
    return operations


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
