"""Differential tests of KAI Scheduler v0.12.0 (issue 35 item 4): what its operator and scheduler
write, made to happen for real in the upstream tier, against what the simulated breakages write
as KAI would (testbed/sim/evictions.py `reclaim`, workload_breakage.py `starve` and
`gpu_quota_exhausted` with scheduling_writes.py, breakage.py `dependencies_missing`): the same
kinds of objects and Events, the same fields, the same words once names and numbers are taken
out (upstream/diffing.py `shape`).
"""

from __future__ import annotations

from typing import Any

import pytest
from controlplane import poll
from upstream import kai, workloads
from upstream.cluster import Upstream
from upstream.diffing import condition, decided, event_view, real_events, shape, simulated_events

from testbed.sim import Simulator, breakage, evictions
from testbed.sim.workload_breakage import _PENDING_JOBS, STARVED_GROUP, STARVED_JOB, WORK_NS

PODGROUP = kai.PODGROUP_API
NAMESPACE = "annia"


def scheduling(group: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """A PodGroup's scheduling condition as the scheduler decides it: its fields, its message's
    template, each reason's template and the keys of its queue details."""
    [found] = (group.get("status") or {}).get("schedulingConditions") or []
    return {
        "keys": sorted(found),
        "type": found["type"],
        "reason": found["reason"],
        "status": found["status"],
        "nodePool": found["nodePool"],
        "message": shape(found["message"], names),
        "reasons": [
            {
                "reason": r["reason"],
                "message": shape(r["message"], names),
                "details": _details(r.get("details") or {}),
            }
            for r in found.get("reasons") or []
        ],
    }


def _details(details: dict[str, Any]) -> dict[str, list[str]]:
    """Each resource list of `queueDetails`, by the resources it names (not their amounts)."""
    queue = details.get("queueDetails") or {}
    return {k: sorted(v) for k, v in sorted(queue.items()) if isinstance(v, dict)}


def pod_said(pod: dict[str, Any], names: list[str]) -> str:
    """The template of the pod's `PodScheduled` message."""
    scheduled = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    return shape(scheduled["message"], names)


def events_about(events: list[dict[str, Any]], objects: set[str], names: list[str]) -> list[Any]:
    """The scheduler's `Unschedulable` Events about the given objects, each template once, in
    order. (Not its `NotReady` "Job is not ready for scheduling. Waiting for N pods": that one
    comes only while a gang's pods are still being created, which the imitation skips.)"""
    views = {
        repr(v): v
        for v in (event_view(e, names) for e in events if e["involvedObject"]["name"] in objects)
        if v["source"] == "kai-scheduler" and v["reason"] == "Unschedulable"
    }
    return sorted(views.values(), key=repr)


async def test_a_reclaim_is_recorded_as_kais_scheduler_records_it(
    upstream: Upstream, sim: Simulator, made: workloads.Workloads
) -> None:
    holders = [made.job(f"diff-hold-{i}", "annia", gpus=1) for i in range(4)]
    made.wait_running(holders)
    made.wait_running([made.job("diff-take", "vision", gpus=2)])
    [real, *_] = [e for e in real_events(upstream.seeder, NAMESPACE) if e["reason"] == "Evict"]
    evictions.reclaim(sim)
    [imitated] = [e for e in simulated_events(sim, evictions.EVICTED_NS) if e["reason"] == "Evict"]

    real_names = [NAMESPACE, "annia", "vision", real["involvedObject"]["name"]]
    real_names += [real["metadata"]["annotations"]["evictor-pod-group-name"], *_pods(real)]
    sim_names = [evictions.EVICTED_NS, evictions.RECLAIMER_NS, evictions.EVICTED]
    sim_names += [evictions.RECLAIMER, *_pods(imitated)]
    assert event_view(imitated, sim_names) == event_view(real, real_names)
    assert _fields(imitated) == _fields(real)


def _fields(event: dict[str, Any]) -> list[str]:
    """The fields an Event carries (those with a value)."""
    return sorted(k for k, v in event.items() if v not in (None, {}, ""))


def _pods(event: dict[str, Any]) -> list[str]:
    """The evicted pod the message names (`Pod NS/NAME was preempted ...`)."""
    return [event["message"].split(" ", 2)[1]]


@pytest.fixture
def starved_gang(upstream: Upstream, made: workloads.Workloads) -> dict[str, Any]:
    """annia holds 3 of the node's 4 GPUs; vision's gang of 2 pods of 2 GPUs each (its own
    PodGroup, as KAI's docs make a gang by hand) finds room for none: the group, once the
    scheduler wrote why."""
    made.wait_running([made.pod(f"diff-run-{i}", "annia", gpus=1) for i in range(3)])
    group = {
        "apiVersion": PODGROUP,
        "kind": "PodGroup",
        "metadata": {
            "name": "diff-gang",
            "namespace": NAMESPACE,
            "labels": {"kai.scheduler/queue": "vision"},
        },
        "spec": {"minMember": 2, "queue": "vision", "priorityClassName": "train"},
    }
    made.make(group)
    for i in range(2):
        pod = workloads.gpu_pod(f"diff-gang-{i}", NAMESPACE, "vision", 2)
        pod["metadata"]["annotations"] = {"pod-group-name": "diff-gang"}
        made.make(pod)
    admin = upstream.seeder

    def written() -> dict[str, Any] | None:
        found = admin.read(PODGROUP, "PodGroup", "diff-gang", NAMESPACE)
        return found if (found.get("status") or {}).get("schedulingConditions") else None

    return poll("KAI's scheduling condition on the gang", written, 90)


async def test_a_gang_that_fits_nowhere_is_written_as_kai_writes_it(
    upstream: Upstream, sim: Simulator, starved_gang: dict[str, Any]
) -> None:
    breakage.ACTIONS["starve"](sim)
    imitated_group = sim.get(PODGROUP, "PodGroup", STARVED_GROUP, WORK_NS)
    assert imitated_group is not None
    real_names = ["diff-gang", NAMESPACE, "vision"]
    sim_names = [STARVED_GROUP, WORK_NS, "vision"]
    assert scheduling(imitated_group, sim_names) == scheduling(starved_gang, real_names)

    real_pods = [upstream.seeder.read("v1", "Pod", f"diff-gang-{i}", NAMESPACE) for i in range(2)]
    sim_pods = [sim.get("v1", "Pod", f"{STARVED_JOB}-{i}", WORK_NS) for i in range(2)]
    real_said = {pod_said(p, [*real_names, "diff-gang-0", "diff-gang-1"]) for p in real_pods}
    sim_names += [f"{STARVED_JOB}-0", f"{STARVED_JOB}-1"]
    assert {pod_said(p, sim_names) for p in sim_pods if p} == real_said

    real_objects = {"diff-gang", "diff-gang-0", "diff-gang-1"}
    sim_objects = {STARVED_GROUP, f"{STARVED_JOB}-0", f"{STARVED_JOB}-1"}
    assert events_about(simulated_events(sim, WORK_NS), sim_objects, sim_names) == events_about(
        real_events(upstream.seeder, NAMESPACE), real_objects, real_names
    )


@pytest.mark.parametrize(
    ("job", "limit", "priority"),
    [(0, 1, "train"), (1, -1, "build")],  # _PENDING_JOBS: OverLimit, NonPreemptibleOverQuota
    ids=["over-limit", "non-preemptible-over-quota"],
)
async def test_a_job_over_its_queues_share_is_written_as_kai_writes_it(
    upstream: Upstream,
    sim: Simulator,
    made: workloads.Workloads,
    job: int,
    limit: int,
    priority: str,
) -> None:
    """A job over its queue's GPU limit, or a non-preemptible one (priority `build`) over its
    quota: the same reason, the same words, the same queue details as the imitation's."""
    made.make(kai.queue("diff-capped", parent="research", quota=1, limit=limit))
    body = workloads.gpu_pod("diff-over", NAMESPACE, "diff-capped", 2)
    body["spec"]["priorityClassName"] = priority
    pod = made.make(body)
    group = workloads.wait_scheduling_condition(upstream.plane, NAMESPACE, pod)
    breakage.ACTIONS["gpu_quota_exhausted"](sim)
    name = _PENDING_JOBS[job][0]
    [imitated] = [g for g in _groups(sim) if g["metadata"]["name"].startswith(f"pg-{name}")]
    real_names = [group["metadata"]["name"], NAMESPACE, "diff-capped"]
    sim_names = [imitated["metadata"]["name"], WORK_NS, "annia"]
    assert scheduling(imitated, sim_names) == scheduling(group, real_names)
    real_pod = upstream.seeder.read("v1", "Pod", pod, NAMESPACE)
    sim_pod = sim.get("v1", "Pod", f"{name}-0", WORK_NS)
    assert sim_pod is not None
    assert pod_said(sim_pod, sim_names) == pod_said(real_pod, [*real_names, pod])


def _groups(sim: Simulator) -> list[dict[str, Any]]:
    rtype = sim.store.resolve(PODGROUP, "PodGroup")
    return list(sim.store.list_objects(rtype, WORK_NS)["items"])


async def test_dependencies_not_fulfilled_are_written_as_kais_operator_writes_them(
    upstream: Upstream, sim: Simulator
) -> None:
    upstream.seeder.patch(*kai.CONFIG, None, {"spec": {"prometheus": {"enabled": True}}})
    try:
        real = condition(kai.wait_dependencies(upstream.plane, "False"), "DependenciesFulfilled")
    finally:
        upstream.seeder.patch(*kai.CONFIG, None, {"spec": {"prometheus": {"enabled": False}}})
        operator = upstream.process("kai-operator")  # see test_upstream_kai_health.py
        operator.stop()
        operator.start()
        kai.wait_healthy(upstream.plane)
    breakage.ACTIONS["dependencies_missing"](sim)
    imitated = condition(sim.get(*kai.CONFIG), "DependenciesFulfilled")
    assert decided(imitated) == decided(real)
    assert imitated["message"] == real["message"]  # word for word, its leading newline too
