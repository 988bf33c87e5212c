"""From objects as read to the Home tab's lines: what is paused or suspended, by whom, and
which KAI queues are starved or over quota.

Pure: the pause and suspend reading itself is `bot.rules.held` (shared with `/kai changes`
and the reminders of forgotten pauses); here the order the tab and the command show them
in, and the queues as the starvation alert judges them (`bot.workloads.starvation`).
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.core.durations import format_duration
from bot.home.model import HeldObject, QueueMark
from bot.rules.held import paused_objects, suspended_objects
from bot.workloads.quantities import show
from bot.workloads.starvation import STARVED, QueueStarvation

__all__ = ["ordered", "paused_objects", "queue_marks", "suspended_objects"]


def ordered(held: Iterable[HeldObject]) -> list[HeldObject]:
    """By cluster, then kind, namespace and name: the same order on every refresh."""
    return sorted(held, key=lambda h: (h.cluster, h.what, h.kind, h.namespace, h.name))


def queue_marks(found: QueueStarvation) -> tuple[QueueMark, ...]:
    """The starved queues (with their longest wait), then the queues over quota, by name."""
    starved = {s.queue.name: s for s in found.starved}
    marked = found.marks()
    marks = []
    for row in found.rows:
        mark = marked.get(row.name)
        if mark is None:
            continue
        waiting = ""
        if mark == STARVED:
            longest = starved[row.name].longest
            group = f"{longest.group.namespace}/{longest.group.name}"
            waiting = f"{group} for {format_duration(longest.waited, 'coarse')}"
        numbers = (show(row.allocated or 0.0), show(row.quota))
        marks.append(
            QueueMark(row.name, "starved" if mark == STARVED else "over quota", *numbers, waiting)
        )
    return tuple(sorted(marks, key=lambda m: (m.mark != STARVED, m.name)))
