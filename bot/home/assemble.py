"""From what each feature's read returns to the Home tab's lines: what is paused or suspended,
by whom; which KAI queues are starved or over quota; the active alerts and the changes waiting
for approval.

Pure: the pause and suspend reading itself is `bot.rules.held` (shared with `/kai changes`
and the reminders of forgotten pauses); here the order the tab and the command show them
in, the queues as the starvation alert judges them (`bot.workloads.starvation`), and the one
reading of the alert desk's state shape for the tab (`alert_lines`, from its public read).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from bot.access.approvals import Approval
from bot.alerts.model import AlertState, ClusterAlerts, Phase, Severity
from bot.alerts.render import what_fires
from bot.core.durations import format_duration
from bot.home.model import AlertLine, AlertPhase, ApprovalLine, HeldObject, QueueMark
from bot.rules.held import paused_objects, suspended_objects
from bot.workloads.quantities import show
from bot.workloads.starvation import STARVED, QueueStarvation

__all__ = [
    "alert_lines",
    "approval_lines",
    "ordered",
    "paused_objects",
    "queue_marks",
    "suspended_objects",
]

_STATES: dict[Phase, AlertPhase] = {
    Phase.FIRING: "firing",
    Phase.ACKNOWLEDGED: "acknowledged",
    Phase.SILENCED: "silenced",
}


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


def alert_lines(states: Sequence[ClusterAlerts]) -> list[AlertLine]:
    """The active alerts as the Home tab lists them: critical first, then oldest first.

    The one place that reads the alert desk's state shape for the tab.
    """
    active = [a for state in states for a in state.alerts.values() if a.is_active]
    active.sort(key=lambda a: (a.observation.severity is not Severity.CRITICAL, a.first_seen))
    return [_alert_line(alert) for alert in active]


def _alert_line(alert: AlertState) -> AlertLine:
    seen = alert.observation
    silenced = alert.phase is Phase.SILENCED
    return AlertLine(
        alert_id=alert.alert_id,
        cluster=alert.where,
        critical=seen.severity is Severity.CRITICAL,
        subject=what_fires(seen.key),
        title=seen.title,
        state=_STATES.get(alert.phase, "firing"),
        since=alert.firing_since,
        by=alert.silenced_by if silenced else alert.acked_by,
        until=alert.silenced_until if silenced else None,
        reason=alert.silence_reason if silenced else "",
    )


def approval_lines(records: Iterable[Approval], now: datetime) -> list[ApprovalLine]:
    """The changes still waiting for a second operator at `now`, soonest to expire first."""
    waiting = sorted(
        (r for r in records if r.state == "waiting" and not r.is_expired(now)),
        key=lambda r: r.expires_at,
    )
    return [ApprovalLine(r.id, r.requested_by, r.what, r.expires_at) for r in waiting]
