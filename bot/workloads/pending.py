"""Which PodGroups wait to be scheduled, and why, as `/kai pending` lists them.

Pure. A group is pending when the scheduler wrote a `status.schedulingConditions` entry
(kai-workloads.md §1), unless its pods all run: KAI before v0.17 never cleared those conditions,
so a group whose `status.resourcesStatus.allocated` already covers what it `requested` (the
pod-group-controller's sums over its pods) is stale and left out. Oldest first. Only `spec`,
`metadata` and those two `status` fields are read, so the v0.17.0 shape (`status.phase` and the
pod counts removed, #1650) reads as the old one. KAI v0.17.0 stamps the evicted group's
`kai.scheduler/last-eviction-timestamp` (pkg/scheduler/cache/status_updater/
default_status_updater.go `setPodGroupLastEvictionTimeStamp`): a group evicted back to pending
waits since then, and its `spec.preemptionDelay` counts from the later of its creation and that
eviction (pkg/scheduler/api/podgroup_info/job_info.go `PreemptionDelayEnd`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.core import conditions
from bot.core.durations import parse_go_duration
from bot.core.models import RawObject
from bot.workloads.quantities import parse_quantity
from bot.workloads.reasons import Reason, read_reason

LAST_EVICTION = "kai.scheduler/last-eviction-timestamp"  # KAI v0.17.0, on the PodGroup


@dataclass(frozen=True)
class PendingGroup:
    """One PodGroup the scheduler could not place, with every reason it gave."""

    namespace: str
    name: str
    queue: str
    node_pool: str
    since: datetime | None
    reasons: tuple[Reason, ...]
    message: str  # the condition's summary, when it gives no reasons[]
    # The condition's own `lastTransitionTime`: KAI sets it when it writes a new condition
    # (`setPodGroupSchedulingCondition`), so it says since when this wait has lasted.
    condition_since: datetime | None = None
    # KAI v0.17.0: when it was last evicted, and when its preemption delay lets it evict others.
    evicted_at: datetime | None = None
    delay_ends: datetime | None = None

    @property
    def waiting_since(self) -> datetime | None:
        """Since when this wait has lasted: the condition's transition, else the group's
        creation, but never before its last eviction (it ran until then); the queue
        starvation alert counts from here."""
        return _latest(self.condition_since or self.since, self.evicted_at)


def read_pending(groups: Sequence[RawObject]) -> tuple[list[PendingGroup], int]:
    """The pending groups, oldest first, and how many were left out as stale."""
    pending: list[PendingGroup] = []
    stale = 0
    for group in groups:
        scheduling = conditions.status(group).get("schedulingConditions") or []
        if not scheduling:
            continue
        if is_stale(group):
            stale += 1
            continue
        pending += [_pending(group, condition) for condition in scheduling]
    pending.sort(key=lambda g: (g.since is None, g.since or datetime.min, g.namespace, g.name))
    return pending, stale


def is_stale(group: RawObject) -> bool:
    """Whether everything the group requested is allocated: its pods run, whatever the condition."""
    resources = conditions.as_mapping(conditions.status(group).get("resourcesStatus"))
    requested = conditions.as_mapping(resources.get("requested"))
    allocated = conditions.as_mapping(resources.get("allocated"))
    if not requested:
        return False
    for key, value in requested.items():
        want, have = parse_quantity(value), parse_quantity(allocated.get(key))
        if want is None or (want > 0 and (have is None or have < want)):
            return False
    return True


def _pending(group: RawObject, condition: RawObject) -> PendingGroup:
    transition = conditions.parse_timestamp(condition.get("lastTransitionTime"))
    created = conditions.creation_time(group)
    evicted = conditions.parse_timestamp(conditions.annotations_of(group).get(LAST_EVICTION))
    return PendingGroup(
        namespace=conditions.object_namespace(group) or "",
        name=conditions.object_name(group),
        queue=conditions.as_text(conditions.spec(group).get("queue")),
        node_pool=conditions.as_text(condition.get("nodePool")) or "default",
        since=_latest(_earliest(created, transition), evicted),
        reasons=tuple(read_reason(r) for r in condition.get("reasons") or []),
        message=conditions.as_text(condition.get("message")),
        condition_since=transition,
        evicted_at=evicted,
        delay_ends=delay_end(group, created, evicted),
    )


def delay_end(
    group: RawObject, created: datetime | None, evicted: datetime | None
) -> datetime | None:
    """When the group's `spec.preemptionDelay` (KAI v0.17.0, #1832) lets it evict others: that
    long after the later of its creation and its last eviction; None without a delay."""
    text = conditions.as_text(conditions.spec(group).get("preemptionDelay"))
    try:
        delay = parse_go_duration(text) if text else timedelta()
    except ValueError:
        return None
    anchor = _latest(created, evicted)
    return anchor + delay if anchor is not None and delay > timedelta() else None


def _earliest(*moments: datetime | None) -> datetime | None:
    """When the group started waiting: its creation, or an older condition (a restored backup)."""
    known = [m for m in moments if m is not None]
    return min(known) if known else None


def _latest(*moments: datetime | None) -> datetime | None:
    known = [m for m in moments if m is not None]
    return max(known) if known else None
