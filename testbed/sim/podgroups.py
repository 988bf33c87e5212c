"""KAI PodGroups and their pods as the scheduler and the pod-grouper leave them in the simulated
cluster (kai-workloads.md §1, §2): one waiting with a scheduling condition, and one that runs,
its conditions cleared by KAI v0.17.0 and left by older releases (`sim.kai.clears_conditions`;
KAI-Scheduler pkg/scheduler/cache/status_updater/default_status_updater.go
`clearPodGroupSchedulingCondition`, v0.17.0).
"""

from __future__ import annotations

from typing import Any

from testbed.sim.scheduling_writes import PODGROUP, WORK_NS, pending_group, pending_pod
from testbed.sim.simulator import Simulator

__all__ = ["PODGROUP", "WORK_NS", "pending_group", "pending_pod", "scheduled"]


def scheduled(sim: Simulator, group: str, namespace: str, requested: dict[str, str]) -> None:
    """The group runs, what it requested allocated: KAI v0.17 clears its scheduling conditions,
    older releases leave them (its pods run all the same)."""
    status: dict[str, Any] = {"resourcesStatus": {"requested": requested, "allocated": requested}}
    if sim.kai.clears_conditions:
        status["schedulingConditions"] = None
    sim.patch_status(PODGROUP, "PodGroup", group, namespace, status)
