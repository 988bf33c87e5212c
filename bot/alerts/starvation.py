"""The queue starvation alert: one warning per starved KAI leaf queue (docs/design.md §2 "Queue
starvation"), in the words of an alert.

Pure. Which queues are starved is `bot.workloads.starvation`'s decision; this module names the
longest-waiting group (and how long) and the queues allocated over their quota (who holds the
GPUs). The wait is the alert's own hold (`Observation.waited_out`): it fires when the wait
reaches `alerts.starved_after`, with no `hold` added, and resolves, like every alert, once it
has been clear for `hold`.
"""

from __future__ import annotations

from datetime import timedelta

from bot.alerts.model import AlertKey, Observation, Severity
from bot.core.durations import format_duration
from bot.workloads.quantities import show
from bot.workloads.queues import QueueRow
from bot.workloads.starvation import Starved

KIND = "Queue"
CONDITION = "Starved"
_CHECK_FIRST = (
    "The queues allocated over their quota hold the GPUs {queue} is owed: KAI reclaims them "
    "only from their preemptible jobs, so non-preemptible ones keep them until they end. The "
    "thread lists {queue}'s pending groups with the scheduler's reasons; `{command} pending "
    "{namespace}` and `{command} queues` show them now."
)


def starvation_alerts(
    cluster: str, starved: tuple[Starved, ...] | list[Starved], *, after: timedelta, command: str
) -> list[Observation]:
    """One warning per starved queue of `cluster`; `command` is the configured slash command."""
    return [_observation(cluster, s, after, command) for s in starved]


def _observation(cluster: str, starved: Starved, after: timedelta, command: str) -> Observation:
    queue, longest = starved.queue, starved.longest
    group = longest.group
    waited = format_duration(longest.waited, "coarse")
    reason = next((r.reason for r in group.reasons if r.reason), "") or "Unschedulable"
    return Observation(
        key=AlertKey(cluster, KIND, queue.name, CONDITION),
        severity=Severity.WARNING,
        title=f"queue {queue.name} starved: {group.namespace}/{group.name} waiting {waited}",
        reason=reason,
        message=_message(starved, after),
        check_first=_CHECK_FIRST.format(
            queue=queue.name, command=command, namespace=group.namespace or "--all-namespaces"
        ),
        since=longest.since,
        waited_out=True,
    )


def _message(starved: Starved, after: timedelta) -> str:
    queue, longest = starved.queue, starved.longest
    count = len(starved.waiting)
    groups = f"{count} PodGroup{'s' if count != 1 else ''}"
    lines = [
        f"Queue {queue.name} has {show(queue.allocated or 0.0)} of its {show(queue.quota)} GPUs "
        f"(quota) allocated, and {groups} of it waited {format_duration(after, 'coarse')} or "
        f"longer: the longest, {longest.group.namespace}/{longest.group.name} (pool "
        f"{longest.group.node_pool}), for {format_duration(longest.waited, 'coarse')}.",
        over_quota_line(starved.over_quota),
    ]
    return "\n".join(lines)


def over_quota_line(over: tuple[QueueRow, ...]) -> str:
    """`Allocated over quota: annia 8 of 4 GPUs, …` or that none is."""
    if not over:
        return "No queue is allocated over its quota: the GPUs are free or do not fit."
    held = ", ".join(f"{q.name} {show(q.allocated)} of {show(q.quota)} GPUs" for q in over)
    return f"Allocated over quota (who holds the GPUs): {held}."
