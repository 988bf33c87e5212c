"""Planning a Flux suspend or resume: the merge patch, why nothing is written, when it ends.

Pure (docs/design.md §2 "Flux reconcile"): suspend merge-patches `spec.suspend: true`, resume
`spec.suspend: false` (a reconcile follows, as `flux resume` waits for one), each with our record
under `kai-chatops/` (who, when, why, until; resume deletes it). fluxcd/flux2 cmd/flux/suspend.go
and resume.go patch `spec.suspend` the same way (resume.go's `setUnsuspended` writes false, which
Go's `omitempty` sends as a deletion; docs/design.md asks for the explicit false, as Argo CD writes
it).
Unlike `flux suspend`, an object already suspended is refused rather than patched again, so
nobody's record of why is overwritten. No I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from bot.access.outcomes import AuditOutcome
from bot.core import conditions
from bot.core.models import RawObject
from bot.gitops.plan import FluxReport
from bot.gitops.target import GitopsTarget, audit_outcome
from bot.rules import flux_suspend
from bot.rules.flux_suspend import SuspendRecord, read_suspend_record

SuspendAction = Literal["suspend", "resume"]
ALREADY_SUSPENDED = "it is already suspended"
NOT_SUSPENDED = "it is not suspended"


@dataclass(frozen=True)
class SuspendPlan:
    """A suspend or resume decided from the object as read; `refusal` set: write nothing."""

    action: SuspendAction
    target: GitopsTarget
    before: SuspendRecord
    patch: Mapping[str, Any] = field(default_factory=dict)
    until: datetime | None = None
    refusal: str = ""

    def patch_body(self, resource_version: str) -> dict[str, Any]:
        """The merge patch; with the resourceVersion read, a concurrent change answers 409."""
        metadata = dict(self.patch.get("metadata") or {})
        if resource_version:
            metadata["resourceVersion"] = resource_version
        return {**self.patch, "metadata": metadata}


@dataclass(frozen=True)
class SuspendOutcome:
    """What a suspend or resume did: the object as written (None: refused, nothing written),
    and for a resume the reconcile that followed."""

    plan: SuspendPlan
    written: RawObject | None = None
    reconcile: FluxReport | None = None

    @property
    def outcome(self) -> AuditOutcome:
        """The audit word: a suspend written is `ok`; a resume ends as its reconcile does."""
        return "ok" if self.reconcile is None else audit_outcome(self.reconcile.outcome)


@dataclass(frozen=True)
class ExpiredSuspend:
    """A timed suspend of ours whose `suspend-until` has passed."""

    target: GitopsTarget
    record: SuspendRecord
    until: datetime
    suspended_at: datetime | None

    @property
    def length(self) -> timedelta | None:
        """How long it was meant to last (`suspend-until` minus `suspended-at`)."""
        return self.until - self.suspended_at if self.suspended_at is not None else None


def plan_suspend(
    obj: RawObject,
    target: GitopsTarget,
    *,
    user: str,
    reason: str,
    duration: timedelta | None,
    now: datetime,
) -> SuspendPlan:
    """`spec.suspend: true` and our record; stale keys of an older record are deleted."""
    before = read_suspend_record(obj)
    if before.suspended:
        return SuspendPlan("suspend", target, before, refusal=ALREADY_SUSPENDED)
    until = now + duration if duration is not None else None
    wanted: dict[str, str | None] = {
        flux_suspend.SUSPENDED_BY: user,
        flux_suspend.SUSPENDED_AT: conditions.format_timestamp(now),
        flux_suspend.SUSPEND_REASON: reason or None,
        flux_suspend.SUSPEND_UNTIL: conditions.format_timestamp(until)
        if until is not None
        else None,
    }
    present = conditions.annotations_of(obj)
    annotations = {k: v for k, v in wanted.items() if v is not None or k in present}
    patch = {"spec": {"suspend": True}, "metadata": {"annotations": annotations}}
    return SuspendPlan("suspend", target, before, patch, until)


def plan_resume(obj: RawObject, target: GitopsTarget) -> SuspendPlan:
    """`spec.suspend: false`, and our record deleted (merge-patch null)."""
    before = read_suspend_record(obj)
    if not before.suspended:
        return SuspendPlan("resume", target, before, refusal=NOT_SUSPENDED)
    present = conditions.annotations_of(obj)
    stale = {key: None for key in flux_suspend.RECORD_KEYS if key in present}
    patch: dict[str, Any] = {"spec": {"suspend": False}}
    if stale:
        patch["metadata"] = {"annotations": stale}
    return SuspendPlan("resume", target, before, patch)


def find_expired_suspend(obj: RawObject, cluster: str, now: datetime) -> ExpiredSuspend | None:
    """The object's timed suspend when it is ours, still in force and past `suspend-until`.

    Ours and in force: `spec.suspend` true and `suspended-by` set, as we write them. A resume by
    hand, or a record changed by hand (no `suspend-until`, a later one), is left alone: the
    object as it now stands decides.
    """
    found = read_suspend_record(obj)
    until = conditions.parse_timestamp(found.until)
    if not found.is_ours or until is None or until > now:
        return None
    target = GitopsTarget(
        str(obj.get("kind", "")),
        conditions.object_namespace(obj) or "",
        conditions.object_name(obj),
        cluster,
    )
    return ExpiredSuspend(target, found, until, conditions.parse_timestamp(found.at))


def next_due(objs: Sequence[RawObject], now: datetime) -> datetime | None:
    """The soonest `suspend-until` still ahead among our timed suspends in force."""
    dues = []
    for obj in objs:
        found = read_suspend_record(obj)
        until = conditions.parse_timestamp(found.until)
        if found.is_ours and until is not None and until > now:
            dues.append(until)
    return min(dues, default=None)
