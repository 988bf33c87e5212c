"""From objects as read to the Home tab's lines: what is paused or suspended, by whom, and
which KAI queues are starved or over quota.

Pure: the pause is read as KEDA reads it (`bot.rules.keda`: the annotation, not the lagging
condition), the suspend as Flux does (`spec.suspend`), with our `kai-chatops/` record beside it;
the queues as the starvation alert judges them (`bot.workloads.starvation`).
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.core import conditions as c
from bot.core.durations import format_duration
from bot.core.models import RawObject
from bot.home.model import HeldObject, QueueMark
from bot.rules import keda
from bot.rules.flux_suspend import read_suspend_record
from bot.workloads.quantities import show
from bot.workloads.starvation import STARVED, QueueStarvation


def paused_objects(objs: Iterable[RawObject], cluster: str) -> list[HeldObject]:
    """The ScaledJobs and ScaledObjects KEDA treats as paused."""
    held = []
    for obj in objs:
        state = keda.read_pause_state(obj)
        if state.paused:
            held.append(
                HeldObject(
                    "paused",
                    state.kind,
                    c.object_namespace(obj) or "",
                    c.object_name(obj),
                    cluster,
                    state.paused_by or "",
                    state.paused_at or "",
                    state.reason or "",
                    state.until or "",
                )
            )
    return held


def suspended_objects(objs: Iterable[RawObject], cluster: str) -> list[HeldObject]:
    """The Flux objects with `spec.suspend: true`."""
    held = []
    for obj in objs:
        found = read_suspend_record(obj)
        if found.suspended:
            where = (c.object_namespace(obj) or "", c.object_name(obj))
            kind = c.as_text(obj.get("kind"))
            record = (found.by, found.at, found.reason, found.until)
            held.append(HeldObject("suspended", kind, *where, cluster, *record))
    return held


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
