"""KAI PodGroups and their pods as the scheduler and the pod-grouper leave them in the simulated
cluster (kai-workloads.md §1, §2): one waiting with a scheduling condition, and one that runs,
its conditions cleared by KAI v0.17.0 and left by older releases (`sim.kai.clears_conditions`;
KAI-Scheduler pkg/scheduler/cache/status_updater/default_status_updater.go
`clearPodGroupSchedulingCondition`, v0.17.0).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from testbed.sim.objects import timestamp
from testbed.sim.simulator import Simulator

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


def scheduled(sim: Simulator, group: str, namespace: str, requested: dict[str, str]) -> None:
    """The group runs, what it requested allocated: KAI v0.17 clears its scheduling conditions,
    older releases leave them (its pods run all the same)."""
    status: dict[str, Any] = {"resourcesStatus": {"requested": requested, "allocated": requested}}
    if sim.kai.clears_conditions:
        status["schedulingConditions"] = None
    sim.patch_status(PODGROUP, "PodGroup", group, namespace, status)
