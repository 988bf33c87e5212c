"""Planning Argo CD refreshes and syncs over the plain Kubernetes API, and reading the result.

Pure (docs/design.md §2 "Argo CD"): refresh is the `argocd.argoproj.io/refresh` annotation, which
the
application controller removes when done; sync is the top-level `operation` field, which it
clears when the operation ends, leaving `status.operationState`. No I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.core import conditions, errors
from bot.core.models import RawObject
from bot.gitops import plan, windows
from bot.gitops.target import REQUESTED_BY, REQUESTED_WHEN, GitopsTarget, StepState

# argo-cd pkg/apis/application/v1alpha1/application_annotations.go
REFRESH = "argocd.argoproj.io/refresh"
REFRESH_TIMESTAMP = "argocd.argoproj.io/refresh-timestamp"
_BUSY_PHASES = ("Running", "Terminating")
# argo-cd controller/sync.go `SyncAppState`: a running operation a sync window holds says so.
BLOCKED_BY_WINDOW = "Sync operation blocked by sync window"


@dataclass(frozen=True)
class AppState:
    """What an Application says about itself, in Argo CD's words."""

    sync: str
    health: str
    revision: str
    reconciled_at: str
    phase: str  # status.operationState.phase: Running, Succeeded, Failed, Error, Terminating
    message: str
    synced_revision: str  # status.operationState.syncResult.revision
    errors: tuple[str, ...]  # status.conditions of an *Error type, as "Type: message"
    sync_options: tuple[str, ...] = ()  # spec.syncPolicy.syncOptions, carried into a sync
    retry_limit: int | None = None  # spec.syncPolicy.retry.limit, carried into a sync

    @property
    def is_synced_and_healthy(self) -> bool:
        return self.sync == "Synced" and self.health == "Healthy"


def read_app(app: RawObject) -> AppState:
    """The Application's sync, health, last operation and error conditions."""
    status = conditions.status(app)
    sync = conditions.as_mapping(status.get("sync"))
    operation = conditions.as_mapping(status.get("operationState"))
    errors_ = tuple(
        f"{conditions.as_text(cond.get('type'))}: {conditions.condition_message(cond)}"
        for cond in conditions.list_conditions(app)
        if conditions.as_text(cond.get("type")).endswith("Error")
    )
    health = conditions.as_mapping(status.get("health"))
    return AppState(
        sync=conditions.as_text(sync.get("status")) or "Unknown",
        health=conditions.as_text(health.get("status")) or "Unknown",
        revision=conditions.as_text(sync.get("revision")),
        reconciled_at=conditions.as_text(status.get("reconciledAt")),
        phase=conditions.as_text(operation.get("phase")),
        message=conditions.as_text(operation.get("message")),
        synced_revision=conditions.as_text(
            conditions.as_mapping(operation.get("syncResult")).get("revision")
        ),
        errors=errors_,
        sync_options=tuple(_sync_options(app)),
        retry_limit=conditions.as_int(_retry(app).get("limit")),
    )


def _sync_options(app: RawObject) -> list[str]:
    options = conditions.as_mapping(conditions.spec(app).get("syncPolicy")).get("syncOptions")
    return [str(option) for option in options] if isinstance(options, list) else []


def _retry(app: RawObject) -> Mapping[str, Any]:
    return conditions.as_mapping(
        conditions.as_mapping(conditions.spec(app).get("syncPolicy")).get("retry")
    )


def refresh_patch(
    hard: bool, user_id: str, now: datetime, app: RawObject | None = None
) -> dict[str, Any]:
    """The merge patch requesting a normal or hard refresh, with who asked and when.

    As Argo CD >= 3.5 writes it (argo-cd util/argo/argo.go `RefreshApp`): `refresh` together
    with `refresh-timestamp`, `now` in Go's RFC3339Nano, fresh on every attempt. The controller
    removes both with a JSON patch that first tests the timestamp it started from
    (controller/appcontroller.go `removeRefreshAnnotationCombo`), so a pass already running
    keeps a request made meanwhile instead of removing it; `app` (as read) keeps ours distinct
    from the timestamp it carries.
    """
    taken = (
        {conditions.as_text(conditions.annotations_of(app).get(REFRESH_TIMESTAMP))}
        if app
        else set()
    )
    annotations = {
        REFRESH: "hard" if hard else "normal",
        REFRESH_TIMESTAMP: plan.new_token(now, taken - {""}),
        REQUESTED_BY: f"slack:{user_id}",
        REQUESTED_WHEN: conditions.format_timestamp(now),
    }
    return {"metadata": {"annotations": annotations}}


def is_refresh_pending(app: RawObject) -> bool:
    """Whether the controller has yet to finish a refresh: it removes `refresh` (with the
    timestamp) at the end of a pass that started from our request or a later one."""
    return REFRESH in conditions.annotations_of(app)


def check_syncable(app: RawObject, target: GitopsTarget) -> None:
    """Refuse a sync while another operation is set or running (Argo CD would not start it).

    Raises:
        UserError: saying which operation is in the way.
    """
    if app.get("operation"):
        initiated = conditions.as_mapping(
            conditions.as_mapping(app["operation"]).get("initiatedBy")
        )
        who = conditions.as_text(initiated.get("username"))
        by = f" (started by {who})" if who else ""
        raise errors.UserError(
            f"{target.describe()} on {target.cluster} already has an operation in progress{by}; "
            "nothing was changed. Wait for it to finish, then sync again."
        )
    state = read_app(app)
    if state.phase in _BUSY_PHASES:
        raise errors.UserError(
            f"{target.describe()} on {target.cluster} has an operation {state.phase}"
            + (f" ({state.message})" if state.message else "")
            + "; nothing was changed. Wait for it to finish, then sync again."
        )


def check_sync_windows(
    app: RawObject, project: RawObject | None, target: GitopsTarget, now: datetime
) -> None:
    """Refuse, before anything is written, a sync the AppProject's sync windows forbid at
    `now`, as Argo CD's API, CLI and UI refuse it (argo-cd server/application/application.go
    `Sync`: `SyncWindows.Matches(app).CanSync(true, nil)`). Written anyway, the operation would
    be held by the controller and run by itself when the window opens, blocking other syncs.

    Raises:
        UserError: the AppProject is missing, or a window forbids the sync (named).
    """
    where = f"{target.describe()} on {target.cluster}"
    name = windows.project_name(app)
    if project is None:
        raise errors.UserError(
            f"{where}: its AppProject {target.namespace}/{name} was not found, so Argo CD would "
            "not sync it; nothing was changed."
        )
    verdict = windows.check_manual_sync(windows.read_windows(project), app, now)
    if not verdict.allowed:
        raise errors.UserError(
            f"{where}: {verdict.reason()}, set in AppProject {name}; nothing was changed. "
            "Sync again when the window allows it, or ask an Argo CD admin to change the window."
        )


def sync_patch(app: RawObject, user_id: str, channel_id: str, now: datetime) -> dict[str, Any]:
    """The merge patch starting a sync, guarded by the resourceVersion that was read.

    As `argocd app sync` without flags (argo-cd server/application/application.go `Sync`): the
    app's target revision, hook strategy, no prune, and the Application's own
    `spec.syncPolicy.syncOptions` and `retry` copied into the operation, since the controller
    reads only the operation's (controller/sync.go: `ServerSideApply`, `CreateNamespace=true`).
    """
    version = conditions.as_text(conditions.metadata(app).get("resourceVersion"))
    annotations = {
        REQUESTED_BY: f"slack:{user_id}",
        REQUESTED_WHEN: conditions.format_timestamp(now),
    }
    reason = f"requested from Slack by {user_id}" + (f" in {channel_id}" if channel_id else "")
    sync: dict[str, Any] = {"syncStrategy": {"hook": {}}, "prune": False}
    operation: dict[str, Any] = {
        "initiatedBy": {"username": f"slack:{user_id}"},
        "info": [{"name": "Reason", "value": reason}],
        "sync": sync,
    }
    if _sync_options(app):
        sync["syncOptions"] = _sync_options(app)
    if _retry(app):
        operation["retry"] = dict(_retry(app))
    metadata: dict[str, Any] = {"annotations": annotations}
    if version:
        metadata["resourceVersion"] = version
    return {"metadata": metadata, "operation": operation}


def is_sync_pending(app: RawObject) -> bool:
    """Whether the controller has yet to finish the operation (it clears `operation` then)."""
    return bool(app.get("operation"))


def is_blocked_by_window(app: RawObject) -> bool:
    """Whether a sync window holds the running operation (it runs once the window allows)."""
    state = read_app(app)
    return state.phase == "Running" and state.message.startswith(BLOCKED_BY_WINDOW)


@dataclass(frozen=True)
class ArgoReport:
    """How a refresh or sync ended, with the Application as it stands afterwards."""

    target: GitopsTarget
    action: str  # "refresh", "hard refresh" or "sync"
    state: StepState
    app: AppState | None  # None: deleted while waiting, or (state "not read back") unread
    elapsed: float
    waited: str = ""  # the timeout, named in a timed-out report
    error: str = ""  # why the Application could not be read after the request


def unread_report(target: GitopsTarget, action: str, elapsed: float, error: str) -> ArgoReport:
    """A refresh or sync that was requested but whose Application could not be read since:
    Argo CD acts on it (a sync runs) whether or not we can see it."""
    return ArgoReport(target, action, "not read back", None, elapsed, error=error)


def judge_sync(app: RawObject) -> StepState:
    """A finished (or window-held) operation's outcome from `status.operationState`."""
    if is_blocked_by_window(app):
        return "blocked"
    phase = read_app(app).phase
    if phase == "Succeeded":
        return "succeeded"
    return "failed" if phase in ("Failed", "Error") else "unknown"
