"""Planning Flux reconciles and Argo CD refreshes and syncs, and reading how far they got.

Pure (docs/design.md §2 "Flux reconcile", "Argo CD"): takes objects as read and `now`, returns the
patches to send, the refusals to give, and what a controller's status says. No I/O, no clock.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.core import conditions, durations, errors
from bot.core.models import RawObject
from bot.gitops import kinds
from bot.gitops.target import REQUESTED_BY, REQUESTED_WHEN, GitopsTarget, StepState, command_for
from bot.rules import flux

# fluxcd/pkg apis/meta/annotations.go (requestedAt, forceAt); helm-controller api/v2 (resetAt).
REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
FORCE_AT = "reconcile.fluxcd.io/forceAt"
RESET_AT = "reconcile.fluxcd.io/resetAt"
_MAX_SOURCE_DEPTH = 3  # HelmRepository -> HelmChart -> HelmRelease is the longest chain


# --- Flux -----------------------------------------------------------------------------------


def new_token(now: datetime, taken: Collection[str] = ()) -> str:
    """A fresh `requestedAt` token: `now` as Go's RFC3339Nano in UTC, unlike any in `taken`.

    Nanoseconds below the clock's microseconds keep it unique when the clock stands still.
    """
    moment = now.astimezone(UTC)
    for extra in range(1000):
        token = _rfc3339_nano(moment, moment.microsecond * 1000 + extra)
        if token not in taken:
            return token
    raise AssertionError("a thousand tokens taken in one microsecond")


def _rfc3339_nano(moment: datetime, nanos: int) -> str:
    fraction = f"{nanos:09d}".rstrip("0")
    return f"{moment:%Y-%m-%dT%H:%M:%S}" + (f".{fraction}" if fraction else "") + "Z"


def taken_tokens(obj: RawObject) -> set[str]:
    """Tokens a new request must differ from: the current request and the last handled one."""
    return {
        conditions.as_text(conditions.annotations_of(obj).get(REQUESTED_AT)),
        last_handled(obj),
    } - {""}


def check_reconcilable(
    obj: RawObject,
    target: GitopsTarget,
    *,
    command: str = "/kai",
    default_cluster: str | None = None,
) -> None:
    """Refuse what Flux would not act on: a suspended object, an OCI HelmRepository.

    `command` is the configured slash command: a suspended object's refusal names our own
    resume (`/kai resume hr NS/NAME`, with `--cluster` off `default_cluster`), not the flux CLI's.

    Raises:
        UserError: saying why, and for a suspended object how to resume it.
    """
    if is_static(obj):
        raise errors.UserError(f"{target.describe()} {STATIC_NOTE}; nothing was changed.")
    if conditions.spec(obj).get("suspend") is True:
        default = target.cluster if default_cluster is None else default_cluster
        resume = command_for("resume", target, command, default)
        raise errors.UserError(
            f"{target.describe()} on {target.cluster} is suspended (spec.suspend: true), so Flux "
            f"would ignore a reconcile; nothing was changed. To resume it: `{resume}` (Flux then "
            "reconciles it, and kai-chatops reports the result), or remove `suspend: true` in "
            "Git if it is set there."
        )


STATIC_NOTE = (
    "is a HelmRepository of type oci: Flux does not reconcile it (charts are pulled by each "
    "HelmChart), so it cannot be reconciled on demand"
)


def is_static(obj: RawObject) -> bool:
    """An OCI HelmRepository, which source-controller never reconciles (`flux` calls it static)."""
    return obj.get("kind") == "HelmRepository" and conditions.spec(obj).get("type") == "oci"


def direct_source(obj: RawObject, target: GitopsTarget) -> GitopsTarget | None:
    """The source `--with-source` reconciles before `target` (as `flux reconcile` picks it).

    Kustomization: `spec.sourceRef`. HelmRelease: `spec.chartRef`, else its HelmChart
    (`status.helmChart`, or `<ns>-<name>` in the chart source's namespace). HelmChart:
    `spec.sourceRef`. Sources have none.

    Raises:
        UserError: the reference names a kind the bot cannot reconcile.
    """
    spec = conditions.spec(obj)
    if target.kind in ("Kustomization", "HelmChart"):
        return _ref_target(conditions.as_mapping(spec.get("sourceRef")), target)
    if target.kind != "HelmRelease":
        return None
    if spec.get("chartRef"):
        return _ref_target(conditions.as_mapping(spec.get("chartRef")), target)
    chart_ns, _, chart_name = conditions.as_text(conditions.status(obj).get("helmChart")).partition(
        "/"
    )
    if chart_ns and chart_name:
        return GitopsTarget("HelmChart", chart_ns, chart_name, target.cluster)
    source = conditions.as_mapping(
        conditions.as_mapping(conditions.as_mapping(spec.get("chart")).get("spec")).get("sourceRef")
    )
    namespace = conditions.as_text(source.get("namespace")) or target.namespace
    return GitopsTarget("HelmChart", namespace, f"{target.namespace}-{target.name}", target.cluster)


def _ref_target(ref: Mapping[str, Any], owner: GitopsTarget) -> GitopsTarget | None:
    kind, name = conditions.as_text(ref.get("kind")), conditions.as_text(ref.get("name"))
    if not kind or not name:
        return None
    if kind not in kinds.FLUX:
        raise errors.UserError(
            f"{owner.describe()} takes its source from a {kind}, which kai-chatops cannot "
            "reconcile; reconcile without --with-source."
        )
    return GitopsTarget(
        kind, conditions.as_text(ref.get("namespace")) or owner.namespace, name, owner.cluster
    )


def is_chain_complete(length: int) -> bool:
    """Whether a source chain is as long as Flux's ever are (a loop in references ends here)."""
    return length >= _MAX_SOURCE_DEPTH


def flux_request_patch(
    token: str, user_id: str, *, force: bool = False, reset: bool = False
) -> dict[str, Any]:
    """The merge patch asking Flux to reconcile now; other annotations stay as they are.

    `force` / `reset` (HelmRelease) add `forceAt` / `resetAt` with the same token: helm-controller
    acts on them only when they equal `requestedAt` (fluxcd/pkg apis/meta/annotations.go
    `HandleAnnotationRequest`), as `flux reconcile hr --force|--reset` writes them
    (fluxcd/flux2 cmd/flux/reconcile.go `requestReconciliation`).
    """
    annotations = {REQUESTED_AT: token, REQUESTED_BY: f"slack:{user_id}", REQUESTED_WHEN: token}
    if force:
        annotations[FORCE_AT] = token
    if reset:
        annotations[RESET_AT] = token
    return {"metadata": {"annotations": annotations}}


def last_handled(obj: RawObject) -> str:
    """`status.lastHandledReconcileAt`, "" when Flux has never handled a request."""
    return conditions.as_text(conditions.status(obj).get("lastHandledReconcileAt"))


class FluxPhase(enum.Enum):
    NOT_HANDLED = "the controller has not picked up the request yet"
    RECONCILING = "the controller is reconciling"
    DONE = "done"


def flux_phase(obj: RawObject, handled_before: str) -> FluxPhase:
    """How far Flux is with a request made when `lastHandledReconcileAt` was `handled_before`.

    Handled once the field changes, whatever it changes to: a newer request by someone else
    answers ours too (fluxcd/flux2 cmd/flux/reconcile.go `reconciliationHandled`).
    """
    if last_handled(obj) == handled_before:
        return FluxPhase.NOT_HANDLED
    if retry_of(obj) in (Retry.STALLED, Retry.RETRYING):
        return FluxPhase.DONE  # the attempt ended in failure: say so now, not at the timeout
    conds = conditions.list_conditions(obj)
    if conditions.is_condition_true(
        conditions.find_condition(conds, "Reconciling")
    ) or _is_generation_behind(obj):
        return FluxPhase.RECONCILING
    return FluxPhase.DONE


class Retry(enum.Enum):
    """Whether Flux tries a failed attempt again (docs/design.md §2 "Flux reconcile")."""

    NONE = ""  # not a failure
    RETRYING = "Flux retries"
    AT_INTERVAL = "Flux tries again at its next interval"
    STALLED = "Flux will not retry until the object changes"


def retry_of(obj: RawObject) -> Retry:
    """How a failed attempt goes on, in Flux's conditions (fluxcd/pkg apis/meta/conditions.go):
    `Stalled` True: stopped until the object changes; `Ready` False with `Reconciling` True for
    reason `ProgressingWithRetry`: retried (helm-controller internal/reconcile/
    atomic_release.go); `Ready` False with no `Reconciling`, at the current generation: failed,
    requeued at the object's interval (kustomize-controller, source-controller)."""
    conds = conditions.list_conditions(obj)
    if conditions.is_condition_true(conditions.find_condition(conds, "Stalled")):
        return Retry.STALLED
    if conditions.condition_status(conditions.find_condition(conds, "Ready")) != "False":
        return Retry.NONE
    reconciling = conditions.find_condition(conds, "Reconciling")
    if conditions.is_condition_true(reconciling):
        retrying = conditions.condition_reason(reconciling) == flux.RETRYING
        return Retry.RETRYING if retrying else Retry.NONE
    return Retry.NONE if _is_generation_behind(obj) else Retry.AT_INTERVAL


def _is_generation_behind(obj: RawObject) -> bool:
    observed = conditions.as_int(conditions.status(obj).get("observedGeneration"))
    generation = conditions.object_generation(obj)
    return observed is not None and generation is not None and observed < generation


@dataclass(frozen=True)
class StepResult:
    """How one reconcile ended, in Flux's words (`ready`, `reason`, `message` verbatim)."""

    target: GitopsTarget
    state: StepState
    ready: str = ""  # the Ready condition's status: True, False, Unknown, or "" when absent
    reason: str = ""
    message: str = ""
    revision: str = ""
    note: str = ""  # ours: why it timed out or was skipped, what the object says now
    token: str = ""
    retry: str = ""  # a failure: whether Flux tries again (`Retry`'s words)


def judge_flux(obj: RawObject, target: GitopsTarget, token: str) -> StepResult:
    """The result once `flux_phase` is DONE, as `flux reconcile` ends: Ready True succeeded;
    Ready False or Unknown, or Stalled, failed ("reconciliation failed: '<Ready message>'"),
    with whether Flux retries; no Ready condition is unknown ("status can't be determined")."""
    conds = conditions.list_conditions(obj)
    ready = conditions.find_condition(conds, "Ready")
    stalled = conditions.find_condition(conds, "Stalled")
    status = conditions.condition_status(ready) or ""
    state: StepState = "unknown"
    if status == "True":
        state = "succeeded"
    elif status or conditions.is_condition_true(stalled):
        state = "failed"
    shown = ready if ready is not None or stalled is None else stalled
    no_ready = "status can't be determined: Flux reports no Ready condition"
    note = "" if ready is not None else no_ready
    retry = retry_of(obj).value if state == "failed" else ""
    return StepResult(
        target,
        state,
        status,
        conditions.condition_reason(shown),
        conditions.condition_message(shown),
        applied_revision(obj),
        note,
        token,
        retry,
    )


def judge_flux_timeout(
    obj: RawObject | None, target: GitopsTarget, token: str, handled_before: str, waited: str
) -> StepResult:
    """The result when the wait ran out: what phase it was in and what the object says now."""
    if obj is None:
        return StepResult(
            target, "failed", note="the object was deleted while waiting", token=token
        )
    phase = flux_phase(obj, handled_before)
    now = flux.assess_flux_object(obj)
    handled = last_handled(obj) or "never"
    if phase is FluxPhase.NOT_HANDLED:
        why = f"Flux has not handled the request (lastHandledReconcileAt: {handled})"
    else:
        why = "Flux handled the request but is still reconciling"
    note = f"no result within {waited}: {why}. It says now: {now.health.value}, {now.headline}"
    detail = now.detail if now.detail != now.headline else ""
    return StepResult(target, "timed out", message=detail, note=note, token=token)


def judge_flux_unread(target: GitopsTarget, token: str, error: str) -> StepResult:
    """The result when the request was written but the object could not be read afterwards:
    Flux may well act on it, so it is neither done nor failed."""
    note = f"requested, but the object could not be read since: {error}"
    return StepResult(target, "not read back", note=note, token=token)


def judge_flux_request_error(target: GitopsTarget, error: errors.KubeError) -> StepResult:
    """The result when the reconcile request itself failed: refused (nothing written), or got
    no answer (it may have been written)."""
    if isinstance(error, errors.KubeWriteUnknown):
        note = f"the reconcile request got no answer, so it may or may not have been made: {error}"
        return StepResult(target, "not read back", note=note)
    return StepResult(target, "failed", note=f"the reconcile could not be requested: {error}")


@dataclass(frozen=True)
class FluxReport:
    """Every step of one reconcile, sources first, and how long it took in seconds."""

    steps: tuple[StepResult, ...]
    elapsed: float

    @property
    def outcome(self) -> StepState:
        """The first step that did not succeed decides; skipped sources do not count."""
        for step in self.steps:
            if step.state not in ("succeeded", "skipped"):
                return step.state
        return "succeeded"


def format_wait(seconds: float) -> str:
    """A wait as people read it: `5m`, `1m30s`, `0.5s`."""
    if seconds < 1:
        return f"{seconds:.1f}s"
    return durations.format_duration(timedelta(seconds=round(seconds)))


def applied_revision(obj: RawObject) -> str:
    """The revision the object is at: Kustomization's applied, HelmRelease's chart, a source's."""
    status = conditions.status(obj)
    applied = conditions.as_text(status.get("lastAppliedRevision"))
    if applied:
        return applied
    history = status.get("history")
    if isinstance(history, list) and history:
        latest = conditions.as_mapping(history[0])
        chart, version = (
            conditions.as_text(latest.get("chartName")),
            conditions.as_text(latest.get("chartVersion")),
        )
        if version:
            return f"{chart}@{version}" if chart else version
    artifact = conditions.as_text(conditions.as_mapping(status.get("artifact")).get("revision"))
    return artifact or conditions.as_text(status.get("lastAttemptedRevision"))
