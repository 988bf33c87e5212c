"""Starved KAI queues and queues over quota (docs/design.md §2 "Queue starvation").

Pure. A leaf queue is starved when one of its PodGroups has been pending (`bot.workloads.pending`:
a scheduling condition, pods not all running) for `after` or longer, counted from the
condition's `lastTransitionTime` (else the group's creation), while the queue's allocated GPUs
are below its GPU quota. A queue is over quota when it holds more GPUs than its quota: those are
the GPUs a starved queue is owed. GPUs are `nvidia.com/gpu` plus DRA GPU classes
(`bot.workloads.quantities.gpus`); a quota of `-1` (unlimited) or none is no number to be below.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.workloads.pending import PendingGroup
from bot.workloads.quantities import UNLIMITED
from bot.workloads.queues import QueueRow

STARVED = "starved"
OVER_QUOTA = "over quota"


@dataclass(frozen=True)
class Waiting:
    """One pending PodGroup and how long it has waited."""

    group: PendingGroup
    since: datetime
    waited: timedelta


@dataclass(frozen=True)
class Starved:
    """A starved leaf queue: its groups that waited `after` or longer (longest first), and the
    queues allocated over their quota at the same moment."""

    queue: QueueRow
    waiting: tuple[Waiting, ...]
    over_quota: tuple[QueueRow, ...]

    @property
    def longest(self) -> Waiting:
        return self.waiting[0]


@dataclass(frozen=True)
class QueueStarvation:
    """One read of the queues (and, with the rule on, their pending groups), judged at `now`."""

    rows: tuple[QueueRow, ...]
    pending: tuple[PendingGroup, ...]
    starved: tuple[Starved, ...]

    def marks(self) -> dict[str, str]:
        """Each marked queue's mark: `starved` or `over quota` (a queue is never both)."""
        marks = {row.name: OVER_QUOTA for row in self.rows if is_over_quota(row)}
        marks.update({s.queue.name: STARVED for s in self.starved})
        return marks


def judge(
    rows: Sequence[QueueRow], pending: Sequence[PendingGroup], *, now: datetime, after: timedelta
) -> QueueStarvation:
    """The queues, their pending groups and which queues are starved (none when `after` is 0:
    the rule is off)."""
    starved = find_starved(rows, pending, now=now, after=after)
    return QueueStarvation(tuple(rows), tuple(pending), tuple(starved))


def find_starved(
    rows: Sequence[QueueRow], pending: Sequence[PendingGroup], *, now: datetime, after: timedelta
) -> list[Starved]:
    """Every starved leaf queue, by name."""
    if after <= timedelta(0):
        return []
    over = tuple(row for row in rows if row.is_leaf and is_over_quota(row))
    found = []
    for row in rows:
        if not row.is_leaf or not is_below_quota(row):
            continue
        waiting = [w for w in waits_of(row.name, pending, now) if w.waited >= after]
        if waiting:
            found.append(Starved(row, tuple(waiting), over))
    return sorted(found, key=lambda s: s.queue.name)


def waits_of(queue: str, pending: Sequence[PendingGroup], now: datetime) -> list[Waiting]:
    """The queue's pending groups, each once (its longest wait over its node pools), longest
    first; a group with no time to count from is left out."""
    longest: dict[tuple[str, str], Waiting] = {}
    for group in pending:
        since = group.waiting_since
        if group.queue != queue or since is None:
            continue
        key = (group.namespace, group.name)
        if key not in longest or since < longest[key].since:
            longest[key] = Waiting(group, since, now - since)
    return sorted(longest.values(), key=lambda w: (-w.waited, w.group.namespace, w.group.name))


def is_below_quota(row: QueueRow) -> bool:
    """Allocated GPUs (none written: 0) below a GPU quota that is a number above 0."""
    quota = row.quota
    if quota is None or quota == UNLIMITED or quota <= 0:
        return False
    return (row.allocated or 0.0) < quota


def is_over_quota(row: QueueRow) -> bool:
    """Allocated GPUs above a GPU quota that is a number (0 counts: any GPU is over it)."""
    quota = row.quota
    if quota is None or quota == UNLIMITED or quota < 0:
        return False
    return (row.allocated or 0.0) > quota
