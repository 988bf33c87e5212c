"""Planning a KEDA pause or resume: which annotations to write or delete, and when it ends.

Pure: takes the object as read and `now`, returns what to patch (docs/design.md §2 "KEDA pause").
Pause
writes `autoscaling.keda.sh/paused: "true"` plus our `kai-chatops/` record; resume deletes the
pause keys and the record (merge-patch null), never writes "false". No I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from bot.core import conditions, errors
from bot.core.models import RawObject, Verdict
from bot.kube import kinds
from bot.rules import keda
from bot.rules.keda import PauseState

PauseAction = Literal["pause", "resume"]
RECORD_KEYS = (keda.PAUSED_BY, keda.PAUSED_AT, keda.PAUSE_REASON, keda.PAUSE_UNTIL)
_REFS = {"ScaledJob": kinds.SCALED_JOB, "ScaledObject": kinds.SCALED_OBJECT}


@dataclass(frozen=True)
class KedaTarget:
    """One ScaledJob or ScaledObject on one cluster."""

    kind: str  # "ScaledJob" or "ScaledObject"
    namespace: str
    name: str
    cluster: str

    def __post_init__(self) -> None:
        if self.kind not in _REFS:  # a Confirm or approval record we did not write
            raise errors.UserError(f"{self.kind!r} is not a KEDA kind; nothing was changed.")

    @property
    def ref(self) -> kinds.ResourceRef:
        return _REFS[self.kind]

    @property
    def other_kind(self) -> str:
        return "ScaledObject" if self.kind == "ScaledJob" else "ScaledJob"

    def describe(self) -> str:
        """`ScaledJob annia/annia-worker on sim`."""
        return f"{self.kind} {self.namespace}/{self.name} on {self.cluster}"


@dataclass(frozen=True)
class Plan:
    """A pause or resume decided from the object as read.

    `annotations` is the merge patch's annotations (a value to write, None to delete); when
    `nothing_to_do` says why (already paused, not paused), nothing is written at all.
    """

    action: PauseAction
    target: KedaTarget
    before: PauseState
    annotations: Mapping[str, str | None] = field(default_factory=dict)
    until: datetime | None = None
    nothing_to_do: str | None = None

    def patch_body(self, resource_version: str | None) -> dict[str, object]:
        """The merge patch; with the resourceVersion read, a concurrent change answers 409."""
        metadata: dict[str, object] = {"annotations": dict(self.annotations)}
        if resource_version:
            metadata["resourceVersion"] = resource_version
        return {"metadata": metadata}


@dataclass(frozen=True)
class PauseOutcome:
    """What applying a plan did: the state read back after the write, and whether KEDA followed.

    `after` is None when nothing was written. `acknowledged` says whether KEDA's `Paused`
    condition matched the annotation within the wait. `read_error` set: the write was accepted
    but the object could not be read back after it (`after` is then what the patch returned),
    so how it ended is not known.
    """

    plan: Plan
    after: PauseState | None = None
    acknowledged: bool = False
    waited: float = 0.0
    read_error: str = ""

    @property
    def audit_outcome(self) -> Literal["ok", "unknown"]:
        """The audit word of a written change: `unknown` when it could not be read back."""
        return "unknown" if self.read_error else "ok"

    @property
    def audit_note(self) -> str:
        """How a written change ended, in words, for its audit line."""
        if self.read_error:
            return f"written, but not read back: {self.read_error}"
        if not self.took_effect:
            return "changed by someone else meanwhile"
        return "done" if self.acknowledged else "not acknowledged by KEDA"

    @property
    def written(self) -> bool:
        return self.after is not None

    @property
    def took_effect(self) -> bool:
        """Whether the annotations read back say what the plan asked for."""
        wanted = self.plan.action == "pause"
        return self.after is not None and self.after.paused is wanted


@dataclass(frozen=True)
class KedaRow:
    """One line of the `/kai scaledjobs` listing."""

    kind: str
    namespace: str
    name: str
    verdict: Verdict
    state: PauseState


@dataclass(frozen=True)
class ExpiredPause:
    """A timed pause of ours whose `pause-until` has passed."""

    target: KedaTarget
    state: PauseState
    until: datetime
    paused_at: datetime | None

    @property
    def length(self) -> timedelta | None:
        """How long it was meant to last (`pause-until` minus `paused-at`)."""
        return self.until - self.paused_at if self.paused_at is not None else None


def check_namespace(namespace: str, allowed: Sequence[str]) -> None:
    """Raises NotAllowed unless pause and resume are allowed in `namespace` (`keda.namespaces`)."""
    if namespace in allowed:
        return
    where = ", ".join(allowed) if allowed else "none (keda.namespaces is empty)"
    raise errors.NotAllowed(
        f"Pause and resume are not allowed in namespace {namespace!r}; allowed namespaces "
        f"(keda.namespaces): {where}. Nothing was changed."
    )


def plan_pause(
    target: KedaTarget,
    obj: RawObject,
    *,
    user: str,
    reason: str,
    duration: timedelta | None,
    now: datetime,
) -> Plan:
    """Pause: `paused: "true"` and our record; stale record keys are deleted, not left behind."""
    state = keda.read_pause_state(obj)
    if state.paused:
        return Plan("pause", target, state, nothing_to_do="it is already paused")
    until = now + duration if duration is not None else None
    wanted: dict[str, str | None] = {
        keda.PAUSED: "true",
        keda.PAUSED_BY: user,
        keda.PAUSED_AT: conditions.format_timestamp(now),
        keda.PAUSE_REASON: reason or None,
        keda.PAUSE_UNTIL: conditions.format_timestamp(until) if until is not None else None,
    }
    present = conditions.annotations_of(obj)
    patch = {k: v for k, v in wanted.items() if v is not None or k in present}
    return Plan("pause", target, state, patch, until)


def plan_resume(target: KedaTarget, obj: RawObject) -> Plan:
    """Resume: delete the pause keys (ScaledObject: `paused-replicas` too) and our record."""
    state = keda.read_pause_state(obj)
    if not state.paused:
        why = "it is not paused"
        if state.paused_directions:
            directions = " and ".join(state.paused_directions)
            why += f" (only {directions} is paused by its own annotation, which resume leaves)"
        return Plan("resume", target, state, nothing_to_do=why)
    keys = [keda.PAUSED, *RECORD_KEYS]
    if target.kind == "ScaledObject":
        keys.insert(1, keda.PAUSED_REPLICAS)
    present = conditions.annotations_of(obj)
    return Plan("resume", target, state, {k: None for k in keys if k in present})


def summarise(obj: RawObject) -> KedaRow:
    """The listing row of a ScaledJob or ScaledObject: its verdict and its pause state."""
    verdict = keda.evaluate_keda_object(obj)
    state = keda.read_pause_state(obj)
    return KedaRow(state.kind, verdict.namespace or "", verdict.name, verdict, state)


def find_expired_pause(obj: RawObject, cluster: str, now: datetime) -> ExpiredPause | None:
    """The object's timed pause when it is ours, still in force and past `pause-until`.

    Ours and in force: `paused` is exactly "true" and `paused-by` is set, as we write them. A
    resume by hand (the key gone), a pause changed by hand (another value, no `pause-until`, a
    later one) is left alone: the annotations as they now stand decide.
    """
    state = keda.read_pause_state(obj)
    until = conditions.parse_timestamp(state.until)
    if state.paused_value != "true" or not state.paused_by or until is None or until > now:
        return None
    namespace = conditions.object_namespace(obj) or ""
    target = KedaTarget(state.kind, namespace, conditions.object_name(obj), cluster)
    return ExpiredPause(target, state, until, conditions.parse_timestamp(state.paused_at))


def next_due(objs: Sequence[RawObject], now: datetime) -> datetime | None:
    """The soonest `pause-until` still ahead among our timed pauses in force (None: none)."""
    dues = []
    for obj in objs:
        state = keda.read_pause_state(obj)
        until = conditions.parse_timestamp(state.until)
        if state.paused_value == "true" and state.paused_by and until is not None and until > now:
            dues.append(until)
    return min(dues, default=None)
