"""Why one pod is not running, as `/kai why NAMESPACE/POD` tells it.

Pure. Follows the pod's `pod-group-name` annotation to its PodGroup and queue, reads the group's
scheduling reasons, a Failed BindRequest of the pod's name, and the Warning events the
scheduler, binder and pod-grouper wrote on the pod (kai-workloads.md §2, §4, §5); ends with one
line saying what to do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from bot.core import conditions
from bot.core.models import RawObject
from bot.workloads.pending import PendingGroup, is_stale, read_pending
from bot.workloads.queues import gpu_numbers, queue_rows
from bot.workloads.reasons import (
    PREEMPTION_DELAY,
    advice,
    missing_queue_advice,
    unschedulable_without_reason,
)

POD_GROUP_ANNOTATION = "pod-group-name"
NODE_POOL_LABEL = "kai.scheduler/node-pool"
KAI_COMPONENTS = ("kai-scheduler", "binder", "pod-grouper")


@dataclass(frozen=True)
class Explanation:
    """Everything `/kai why` says about one pod."""

    pod: str  # namespace/name
    phase: str
    scheduler: str
    by_kai: bool
    conditions: tuple[
        str, ...
    ]  # PodScheduled / PodBound as `PodScheduled False (Unschedulable): …`
    group: str = ""
    queue: str = ""
    queue_line: str = ""
    node_pool: str = ""
    reasons: tuple[str, ...] = ()  # `OverLimit: <message>`
    bind_failure: str = ""
    events: tuple[str, ...] = ()
    advice: str = ""


def explain(
    pod: RawObject,
    *,
    kai_scheduler: str,
    group: RawObject | None,
    queue: RawObject | None,
    bind_request: RawObject | None,
    events: Sequence[RawObject],
    command: str,
) -> Explanation:
    """The answer for `pod`, from what was read about it (None: absent); the advice names
    `command`, the configured slash command, where it suggests one."""
    name = f"{conditions.object_namespace(pod)}/{conditions.object_name(pod)}"
    phase = conditions.as_text(conditions.status(pod).get("phase")) or "Unknown"
    scheduler = conditions.as_text(conditions.spec(pod).get("schedulerName")) or "default-scheduler"
    base = Explanation(name, phase, scheduler, scheduler == kai_scheduler, _pod_conditions(pod))
    if not base.by_kai:
        return base
    group_name = conditions.as_text(conditions.annotations_of(pod).get(POD_GROUP_ANNOTATION))
    pending = _pending_of(group)
    failure = _bind_failure(bind_request)
    queue_name = conditions.as_text(conditions.spec(group).get("queue")) if group else ""
    return dataclasses.replace(
        base,
        group=group_name,
        queue=queue_name,
        queue_line=queue_line(queue, queue_name),
        node_pool=_node_pool(pod, pending),
        reasons=_reason_lines(pending),
        bind_failure=failure,
        events=tuple(_event_line(e) for e in events if _is_kai_warning(e)),
        advice=_advice(
            phase,
            group_name,
            group,
            pending,
            failure,
            _Queue(queue_name, missing=bool(queue_name) and queue is None),
            command,
        ),
    )


def queue_line(queue: RawObject | None, name: str) -> str:
    """`annia (Annia workers): GPU quota 4, limit 8, over-quota weight 1, allocated 8, …`."""
    if not name:
        return ""
    if queue is None:
        return f"{name}: this Queue does not exist"
    row = queue_rows([queue])[0]
    title = f"{name} ({row.display_name})" if row.display_name else name
    return f"{title}: {gpu_numbers(row)}"


def _pod_conditions(pod: RawObject) -> tuple[str, ...]:
    lines = []
    for wanted in ("PodScheduled", "PodBound"):
        condition = conditions.find_condition(conditions.list_conditions(pod), wanted)
        if condition is None:
            continue
        reason = conditions.condition_reason(condition)
        text = f"{wanted} {conditions.condition_status(condition)}" + (
            f" ({reason})" if reason else ""
        )
        message = conditions.condition_message(condition)
        lines.append(f"{text}: {message}" if message else text)
    return tuple(lines)


def _pending_of(group: RawObject | None) -> list[PendingGroup]:
    """The group's scheduling conditions, unless stale (its pods all run)."""
    if group is None or is_stale(group):
        return []
    return read_pending([group])[0]


def _reason_lines(pending: Sequence[PendingGroup]) -> tuple[str, ...]:
    lines = [
        f"{r.reason}: {r.message}" if r.reason else r.message for g in pending for r in g.reasons
    ]
    return tuple(lines or [g.message for g in pending if g.message])


def _node_pool(pod: RawObject, pending: Sequence[PendingGroup]) -> str:
    label = conditions.as_text(conditions.labels_of(pod).get(NODE_POOL_LABEL))
    return label or (pending[0].node_pool if pending else "default")


def _bind_failure(bind_request: RawObject | None) -> str:
    """`to node gpu-node-7: nodes "gpu-node-7" not found` for a Failed BindRequest, else ""."""
    if bind_request is None:
        return ""
    status = conditions.status(bind_request)
    if conditions.as_text(status.get("phase")) != "Failed":
        return ""
    node = conditions.as_text(conditions.spec(bind_request).get("selectedNode"))
    reason = conditions.as_text(status.get("reason")) or "no reason given"
    return f"to node {node}: {reason}" if node else reason


def _is_kai_warning(event: RawObject) -> bool:
    source = conditions.as_text(conditions.as_mapping(event.get("source")).get("component"))
    reporter = conditions.as_text(event.get("reportingComponent"))
    return conditions.as_text(event.get("type")) == "Warning" and bool(
        {source, reporter} & set(KAI_COMPONENTS)
    )


def _event_line(event: RawObject) -> str:
    count = conditions.as_int(event.get("count")) or 1
    times = f" ×{count}" if count > 1 else ""
    message = conditions.as_text(event.get("message")).strip()
    return f"{conditions.as_text(event.get('reason'))}{times}: {message}"


@dataclass(frozen=True)
class _Queue:
    name: str
    missing: bool  # named by the group, and not there


def _advice(
    phase: str,
    group_name: str,
    group: RawObject | None,
    pending: Sequence[PendingGroup],
    bind_failure: str,
    queue: _Queue,
    command: str,
) -> str:
    """The one line of what to do: the first reason's advice (a preemption delay's first: it
    says why KAI makes no room), else what the state implies; a queue that does not exist is
    said even where the scheduler said nothing (KAI v0.12 skips such a group in silence)."""
    if phase in ("Running", "Succeeded"):
        return f"it is {phase.lower()}: nothing is blocking it"
    if not group_name:
        return (
            "it has no pod-group-name annotation: the pod-grouper has not handled it; is it "
            f"running? (`{command} diagnose kai`)"
        )
    if group is None:
        return f"its PodGroup {group_name} does not exist: the pod-grouper has not created it yet"
    reasons = [r for g in pending for r in g.reasons]
    delayed = [r for r in reasons if r.reason == PREEMPTION_DELAY]
    if reasons:
        ends = pending[0].delay_ends
        return advice((delayed or reasons)[0], queue.name, command=command, delay_ends=ends)
    if bind_failure:
        return (
            f"binding failed ({bind_failure}); the scheduler retries on its next cycle: if it "
            f"repeats, check that node and the binder's log (`{command} diagnose kai`)"
        )
    if queue.missing:
        return missing_queue_advice(queue.name)
    if pending:
        return unschedulable_without_reason(command)
    gang = conditions.as_int(conditions.spec(group).get("minMember")) or 1
    return (
        "the scheduler has not reported on it yet: it may wait for the rest of its gang "
        f"(minMember {gang}); see the PodGroup's events"
    )
