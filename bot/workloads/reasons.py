"""The KAI scheduler's reasons for not scheduling a PodGroup, each with a line of what to do.

Pure. Reads one `status.schedulingConditions[].reasons[]` entry (kai-workloads.md §1: the API
constants `NonPreemptibleOverQuota`, `OverLimit`, `QueueDoesNotExist`, `PreemptionDelayNotElapsed`,
and free text such as `PodSchedulingErrors`), with `details.queueDetails` read as numbers.
KAI-Scheduler pkg/apis/scheduling/v2alpha2/podgroup_types.go declares them per release:
`QueueDoesNotExist` from v0.13.0 (pkg/scheduler/cache/cluster_info/cluster_info.go
`validatePodgroupQueue`: `Queue '<q>' does not exist`; v0.12 skips such a group and says
nothing), `PreemptionDelayNotElapsed` from v0.17.0 (pkg/scheduler/actions/utils/input_jobs.go
`recordPreemptionDelayFitError`: the group found no room and may not evict others yet).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.core import conditions
from bot.workloads.quantities import gpus, show

PREEMPTION_DELAY = "PreemptionDelayNotElapsed"


@dataclass(frozen=True)
class QueueNumbers:
    """GPUs from `details.queueDetails` (None where the scheduler did not say)."""

    queue: str
    limit: float | None = None
    deserved: float | None = None
    allocated: float | None = None
    allocated_non_preemptible: float | None = None
    requested_by_queue: float | None = None
    requested_by_job: float | None = None


@dataclass(frozen=True)
class Reason:
    """One reason the scheduler gave, as written, with its queue numbers when present."""

    reason: str
    message: str
    numbers: QueueNumbers | None = None


def read_reason(entry: Mapping[str, Any]) -> Reason:
    """One `reasons[]` entry."""
    details = conditions.as_mapping(conditions.as_mapping(entry.get("details")).get("queueDetails"))
    numbers = None
    if details:
        numbers = QueueNumbers(
            queue=conditions.as_text(details.get("name")),
            limit=gpus(details.get("queueResourceLimits")),
            deserved=gpus(details.get("queueDeservedResources")),
            allocated=gpus(details.get("queueAllocatedResources")),
            allocated_non_preemptible=gpus(details.get("queueAllocatedNonPreemptibleResources")),
            requested_by_queue=gpus(details.get("queueRequestedResources")),
            requested_by_job=gpus(details.get("podGroupRequestedResources")),
        )
    return Reason(
        conditions.as_text(entry.get("reason")), conditions.as_text(entry.get("message")), numbers
    )


def advice(
    reason: Reason, queue: str = "", *, command: str, delay_ends: datetime | None = None
) -> str:
    """What to do about one reason, in plain words, with the queue's numbers where known
    (`command`: the configured slash command, for the advice that suggests one; `delay_ends`:
    when the group's preemption delay ends, where known)."""
    if reason.reason == PREEMPTION_DELAY:
        return preemption_delay_advice(delay_ends)
    numbers = reason.numbers or QueueNumbers(queue)
    name = numbers.queue or queue or "its queue"
    write = _ADVICE.get(reason.reason)
    if write is not None:
        return write(reason, numbers, name)
    said = reason.message or reason.reason
    return f"the scheduler says: {said}" if said else unschedulable_without_reason(command)


def _over_limit(reason: Reason, numbers: QueueNumbers, name: str) -> str:
    used = ""
    if numbers.limit is not None:
        asks = numbers.requested_by_job
        more = f"; this job asks {show(asks)} more" if asks else ""
        used = f" ({show(numbers.allocated)} of {show(numbers.limit)} GPUs allocated{more})"
    return (
        f"queue {name} is at its GPU limit{used}: wait for its jobs to finish, "
        f"or raise spec.resources.gpu.limit of Queue {name}"
    )


def _over_quota(reason: Reason, numbers: QueueNumbers, name: str) -> str:
    used = ""
    if numbers.deserved is not None:
        held = show(numbers.allocated_non_preemptible)
        used = f" ({held} of {show(numbers.deserved)} GPUs held by non-preemptible jobs)"
    return (
        f"queue {name} has no quota left for non-preemptible jobs{used}: make the job "
        "preemptible (PodGroup spec.preemptibility), wait, or raise "
        f"spec.resources.gpu.quota of Queue {name}"
    )


def _no_queue(reason: Reason, numbers: QueueNumbers, name: str) -> str:
    return missing_queue_advice(name)


def missing_queue_advice(queue: str) -> str:
    """A group whose queue does not exist: the scheduler leaves it alone until it does."""
    return (
        f"its queue {queue} does not exist, so the scheduler will not place it: create Queue "
        f"{queue} (a leaf queue), or resubmit the workload labelled kai.scheduler/queue=<an "
        "existing leaf queue> (a PodGroup's queue never changes once it exists)"
    )


def preemption_delay_advice(ends: datetime | None) -> str:
    """A group within its preemption delay (KAI v0.17.0): no room for it in free GPUs, and it
    may not evict others to make some until the delay has passed."""
    until = f"until {ends:%Y-%m-%d %H:%M:%S} UTC" if ends else "until its delay has passed"
    return (
        "there is no room for it in free GPUs, and its preemption delay (spec.preemptionDelay, "
        "or the pod annotation kai.scheduler/preemption-delay) keeps it from evicting other "
        f"workloads to make room {until}: it is tried again every cycle and may preempt or "
        "reclaim from then; the delay counts from its creation and starts again after each "
        "eviction. Wait, or submit it without the delay"
    )


def _no_node(reason: Reason, numbers: QueueNumbers, name: str) -> str:
    return (
        f"no node can take its pods ({reason.message}): free GPUs on the node pool, add nodes, "
        "or ask for fewer GPUs per pod"
    )


def _topology(reason: Reason, numbers: QueueNumbers, name: str) -> str:
    return (
        "its topology domain is too small: relax topologyConstraint (requiredTopologyLevel) or "
        "ask for fewer pods"
    )


_ADVICE: dict[str, Callable[[Reason, QueueNumbers, str], str]] = {
    "OverLimit": _over_limit,
    "NonPreemptibleOverQuota": _over_quota,
    "QueueDoesNotExist": _no_queue,
    "PodSchedulingErrors": _no_node,
    "Not enough resources for the workload": _topology,
}


def unschedulable_without_reason(command: str) -> str:
    """The advice for a PodGroup the scheduler gave no reason for (`command`: the configured
    slash command)."""
    return (
        "the scheduler gave no reason: its queue is not a leaf queue or its parent queue is "
        f"missing (`{command} queues`); put the job in a leaf queue"
    )
