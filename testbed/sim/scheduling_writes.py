"""What KAI's scheduler writes about a PodGroup it cannot place, for the simulated breakages:
the group's `schedulingConditions` (with `details.queueDetails` for a queue's limit or quota),
its pods' `PodScheduled` condition, and the `Unschedulable` Events on the group and its pods.

As KAI v0.12.0 writes them (tests/cluster/test_upstream_differential_kai.py holds these shapes to
the real scheduler): a reason's message has no final period and the condition's message is
`REASON: MESSAGE.`; Events come from `kai-scheduler`. Pure builders; breakages apply them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from testbed.sim.objects import timestamp

PODGROUP = "scheduling.run.ai/v2alpha2"
WORK_NS = "annia"


def pending_group(
    name: str,
    queue: str,
    gpus: int,
    pods: int,
    reason: str,
    message: str,
    details: dict[str, Any],
    now: Any,
) -> dict[str, Any]:
    condition = {
        "type": "UnschedulableOnNodePool",
        "nodePool": "default",
        "reason": "Unschedulable",
        "status": "True",
        "transitionID": "1",
        "lastTransitionTime": timestamp(now - timedelta(minutes=12)),
        "message": f"{reason}: {message}.",
        "reasons": [{"reason": reason, "message": message, "details": {"queueDetails": details}}],
    }
    requested = {"nvidia.com/gpu": str(gpus)}
    return {
        "apiVersion": PODGROUP,
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": WORK_NS, "labels": {"kai.scheduler/queue": queue}},
        "spec": {"minMember": pods, "queue": queue, "priorityClassName": "train"},
        "status": {
            "resourcesStatus": {"requested": requested},
            "schedulingConditions": [condition],
        },
    }


def queue_details(queue: str, requested: int) -> dict[str, Any]:
    """`details.queueDetails` as KAI v0.12.0 writes it: each list with CPU and memory beside
    the GPUs (a limit of -1: none), and the group's non-preemptible request."""

    def gpu(value: int, unlimited: bool = False) -> dict[str, str]:
        cpu, memory = ("-1m", "-1") if unlimited else ("0", "0")
        return {"cpu": cpu, "memory": memory, "nvidia.com/gpu": str(value)}

    return {
        "name": queue,
        "queueResourceLimits": gpu(8, unlimited=True),
        "queueDeservedResources": gpu(4),
        "queueAllocatedResources": gpu(8),
        "queueAllocatedNonPreemptibleResources": gpu(8),
        "queueRequestedResources": gpu(8 + requested),
        "podGroupRequestedResources": gpu(requested),
        "podGroupRequestedNonPreemptibleResources": gpu(0),
    }


def group_event(group: dict[str, Any], now: Any) -> dict[str, Any]:
    """The Normal `Unschedulable` Event KAI's scheduler records on a PodGroup it cannot place,
    with its scheduling condition's message (as on each of its pods, as a Warning)."""
    meta = group["metadata"]
    message = group["status"]["schedulingConditions"][0]["message"]
    event = recorded_event(
        meta["namespace"],
        "PodGroup",
        meta["name"],
        "Unschedulable",
        message,
        3,
        now,
        "kai-scheduler",
    )
    event["type"] = "Normal"
    event["involvedObject"]["apiVersion"] = PODGROUP
    return event


def pending_pod(name: str, group: str, queue: str, gpus: int, message: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": WORK_NS,
            "labels": {"kai.scheduler/queue": queue},
            "annotations": {"pod-group-name": group},
        },
        "spec": {
            "schedulerName": "kai-scheduler",
            "containers": [
                {
                    "name": "worker",
                    "image": "ghcr.io/annia/worker:1.4.2",
                    "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
                }
            ],
        },
        "status": {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": message,
                }
            ],
        },
    }


def recorded_event(
    namespace: str,
    kind: str,
    name: str,
    reason: str,
    message: str,
    count: int,
    when: Any,
    component: str = "kubelet",
) -> dict[str, Any]:
    at = timestamp(when)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"sim-{name}.{reason.lower()}", "namespace": namespace},
        "involvedObject": {"kind": kind, "name": name, "namespace": namespace, "apiVersion": "v1"},
        "type": "Warning",
        "reason": reason,
        "message": message,
        "count": count,
        "firstTimestamp": at,
        "lastTimestamp": at,
        "source": {"component": component},
        "reportingComponent": component,
    }
