"""Every KAI scheduling reason → the plain-language line of what to do (kai-workloads.md §1),
and the pure readings behind `/kai queues`, `/kai pending` and `/kai why`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from why_answers import explain

from bot.workloads import pending, queues
from bot.workloads import render as render_workloads
from bot.workloads.reasons import advice, read_reason, unschedulable_without_reason

NOW = datetime(2026, 8, 7, 10, 0, tzinfo=UTC)


def gpu(value: str) -> dict[str, str]:
    return {"nvidia.com/gpu": value, "cpu": "16"}


TEAM_A = {
    "name": "team-a",
    "queueResourceLimits": gpu("8"),
    "queueDeservedResources": gpu("4"),
    "queueAllocatedResources": gpu("8"),
    "queueAllocatedNonPreemptibleResources": gpu("4"),
    "queueRequestedResources": gpu("16"),
    "podGroupRequestedResources": gpu("8"),
}


def entry(reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"reason": reason, "message": message}
    if details is not None:
        found["details"] = {"queueDetails": details}
    return found


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        pytest.param(
            entry("OverLimit", "team-a quota has reached the allowable limit of GPUs", TEAM_A),
            "queue team-a is at its GPU limit (8 of 8 GPUs allocated; this job asks 8 more): wait "
            "for its jobs to finish, or raise spec.resources.gpu.limit of Queue team-a",
            id="OverLimit",
        ),
        pytest.param(
            entry("OverLimit", "team-a quota has reached the allowable limit of GPUs"),
            "queue team-a is at its GPU limit: wait for its jobs to finish, or raise "
            "spec.resources.gpu.limit of Queue team-a",
            id="OverLimit-without-details",
        ),
        pytest.param(
            entry("NonPreemptibleOverQuota", "Non-preemptible workload is over quota", TEAM_A),
            "queue team-a has no quota left for non-preemptible jobs (4 of 4 GPUs held by "
            "non-preemptible jobs): make the job preemptible (PodGroup spec.preemptibility), "
            "wait, or raise spec.resources.gpu.quota of Queue team-a",
            id="NonPreemptibleOverQuota",
        ),
        pytest.param(
            entry("QueueDoesNotExist", "Queue 'team-a' does not exist"),
            "its queue team-a does not exist, so the scheduler will not place it: create Queue "
            "team-a (a leaf queue), or resubmit the workload labelled kai.scheduler/queue=<an "
            "existing leaf queue> (a PodGroup's queue never changes once it exists)",
            id="QueueDoesNotExist",
        ),
        pytest.param(
            entry(
                "PreemptionDelayNotElapsed",
                "Workload is within its preemption delay window (5m0s) and may not trigger "
                "evictions before 2026-08-07T10:05:00Z",
            ),
            "there is no room for it in free GPUs, and its preemption delay "
            "(spec.preemptionDelay, or the pod annotation kai.scheduler/preemption-delay) keeps "
            "it from evicting other workloads to make room until its delay has passed: it is "
            "tried again every cycle and may preempt or reclaim from then; the delay counts from "
            "its creation and starts again after each eviction. Wait, or submit it without the "
            "delay",
            id="PreemptionDelayNotElapsed",
        ),
        pytest.param(
            entry(
                "PodSchedulingErrors",
                "Resources were not found for pod team-a/p-0 due to: no nodes with enough "
                "resources were found: 2 node(s) didn't have enough resources: GPUs",
            ),
            "no node can take its pods (Resources were not found for pod team-a/p-0 due to: no "
            "nodes with enough resources were found: 2 node(s) didn't have enough resources: "
            "GPUs): free GPUs on the node pool, add nodes, or ask for fewer GPUs per pod",
            id="PodSchedulingErrors",
        ),
        pytest.param(
            entry("Not enough resources for the workload", "rack domain too small"),
            "its topology domain is too small: relax topologyConstraint (requiredTopologyLevel) "
            "or ask for fewer pods",
            id="topology",
        ),
        pytest.param(
            entry("SomethingNew", "a reason this bot has never seen"),
            "the scheduler says: a reason this bot has never seen",
            id="free-text",
        ),
        pytest.param(entry("", ""), unschedulable_without_reason("/kai"), id="no-reason"),
    ],
)
def test_each_scheduling_reason_has_a_line_of_what_to_do(raw: dict[str, Any], line: str) -> None:
    assert advice(read_reason(raw), "team-a", command="/kai") == line


def queue(name: str, parent: str = "", **gpu_spec: float) -> dict[str, Any]:
    spec: dict[str, Any] = {"resources": {"gpu": gpu_spec}}
    if parent:
        spec["parentQueue"] = parent
    status = {"allocated": {"nvidia.com/gpu": "2"}, "requested": {"nvidia.com/gpu": "500m"}}
    return {"metadata": {"name": name}, "spec": spec, "status": status}


def test_queues_form_a_tree_parents_first_and_an_orphan_is_marked() -> None:
    rows = queues.queue_rows(
        [
            queue("b-leaf", "root", quota=2, limit=-1, overQuotaWeight=1),
            queue("root", quota=8, limit=16, overQuotaWeight=1),
            queue("a-leaf", "root", quota=4, limit=8, overQuotaWeight=2),
            queue("lost", "gone", quota=1, limit=1, overQuotaWeight=1),
        ]
    )

    assert [(r.name, r.depth, r.is_leaf, r.parent_missing) for r in rows] == [
        ("lost", 0, True, True),
        ("root", 0, False, False),
        ("a-leaf", 1, True, False),
        ("b-leaf", 1, True, False),
    ]
    assert queues.gpu_numbers(rows[3]) == (
        "GPU quota 2, limit unlimited, over-quota weight 1, allocated 2, requested 0.5"
    )


@pytest.mark.parametrize(
    ("spec", "status", "numbers"),
    [
        pytest.param({}, {}, "GPU quota not set, limit not set, over-quota weight not set, "
                     "allocated none reported, requested none reported", id="nothing-known"),
        pytest.param({"quota": 2}, {"requested": {"nvidia.com/gpu": "3"}},
                     "GPU quota 2, limit not set, over-quota weight not set, allocated 0, "
                     "requested 3", id="requested-without-allocated-is-none-allocated"),
        pytest.param({"quota": 2}, {"allocated": {"cpu": "4"}, "requested": {}},
                     "GPU quota 2, limit not set, over-quota weight not set, allocated 0, "
                     "requested 0", id="written-without-gpus-is-zero"),
        pytest.param({"quota": 2, "limit": -1, "overQuotaWeight": 1},
                     {"allocated": {"nvidia.com/gpu": "2", "gpu.nvidia.com": "3"},
                      "requested": {"gpu.nvidia.com": "1"}},
                     "GPU quota 2, limit unlimited, over-quota weight 1, allocated 5 (3 DRA), "
                     "requested 1 (1 DRA)", id="dra-share-said"),
    ],
)  # fmt: skip
def test_queue_numbers_say_in_words_what_is_not_set_or_not_reported(
    spec: dict[str, Any], status: dict[str, Any], numbers: str
) -> None:
    raw = {"metadata": {"name": "q"}, "spec": {"resources": {"gpu": spec}}, "status": status}
    [row] = queues.queue_rows([raw])

    assert queues.gpu_numbers(row) == numbers


def group(
    name: str, *, created: str, requested: str = "8", allocated: str | None = None, reasons: int = 1
) -> dict[str, Any]:
    resources: dict[str, Any] = {"requested": {"nvidia.com/gpu": requested}}
    if allocated is not None:
        resources["allocated"] = {"nvidia.com/gpu": allocated}
    condition = {
        "type": "UnschedulableOnNodePool",
        "nodePool": "a100",
        "message": "OverLimit: full.",
        "reasons": [entry("OverLimit", "full", TEAM_A)] * reasons,
        "lastTransitionTime": created,
    }
    return {
        "metadata": {"name": name, "namespace": "team-a", "creationTimestamp": created},
        "spec": {"queue": "team-a"},
        "status": {"resourcesStatus": resources, "schedulingConditions": [condition]},
    }


def test_pending_is_oldest_first_and_leaves_out_groups_whose_pods_all_run() -> None:
    groups = [
        group("newer", created="2026-08-07T09:50:00Z"),
        group("running-stale", created="2026-08-07T08:00:00Z", allocated="8"),
        group("older", created="2026-08-07T09:00:00Z", allocated="4"),
        {"metadata": {"name": "scheduled"}, "status": {}},
    ]

    found, stale = pending.read_pending(groups)

    assert [(g.name, g.node_pool, g.queue) for g in found] == [
        ("older", "a100", "team-a"),
        ("newer", "a100", "team-a"),
    ]
    assert stale == 1


def pod(phase: str = "Pending", scheduler: str = "kai-scheduler") -> dict[str, Any]:
    return {
        "metadata": {
            "name": "p-0",
            "namespace": "team-a",
            "annotations": {"pod-group-name": "pg-x"},
            "labels": {"kai.scheduler/node-pool": "a100"},
        },
        "spec": {"schedulerName": scheduler},
        "status": {
            "phase": phase,
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "m",
                }
            ],
        },
    }


def test_why_ends_with_the_first_reasons_advice_and_keeps_kai_warnings_only() -> None:
    events = [
        {"type": "Warning", "reason": "Unschedulable", "message": "full", "count": 4,
         "source": {"component": "kai-scheduler"}},
        {"type": "Warning", "reason": "FailedMount", "message": "not ours",
         "source": {"component": "kubelet"}},
    ]  # fmt: skip

    team_a = queue("team-a", quota=4, limit=8, overQuotaWeight=1)
    answer = explain(pod(), group("pg-x", created="2026-08-07T09:00:00Z"), team_a, events=events)

    assert answer.conditions == ("PodScheduled False (Unschedulable): m",)
    assert answer.node_pool == "a100"
    assert answer.reasons == ("OverLimit: full",)
    assert answer.events == ("Unschedulable ×4: full",)
    assert answer.queue_line.startswith("team-a: GPU quota 4, limit 8")
    assert answer.advice.startswith("queue team-a is at its GPU limit (8 of 8 GPUs allocated")


def test_why_names_a_failed_bind_when_the_scheduler_gave_no_reason() -> None:
    bind = {"spec": {"selectedNode": "gpu-7"}, "status": {"phase": "Failed", "reason": "node gone"}}
    placed = group("pg-x", created="2026-08-07T09:00:00Z", reasons=0)
    placed["status"].pop("schedulingConditions")

    answer = explain(pod(), placed, bind=bind)

    assert answer.bind_failure == "to node gpu-7: node gone"
    assert answer.advice.startswith("binding failed (to node gpu-7: node gone)")
    assert answer.queue_line == "team-a: this Queue does not exist"


def test_a_pod_of_another_scheduler_is_said_so_and_nothing_more() -> None:
    answer = explain(pod(scheduler="volcano"), None)

    assert not answer.by_kai and answer.scheduler == "volcano" and answer.group == ""


def test_a_long_pending_listing_names_the_configured_command_in_its_advice_and_notes() -> None:
    groups = [
        pending.PendingGroup(f"ns-{i}", f"pg-{i}", "team-a", "default", NOW, (), "")
        for i in range(1000)
    ]

    message = render_workloads.pending_message(
        groups, 0, cluster="prod", scope="all namespaces", now=NOW, command="/gpu"
    )

    shown = str(message)
    assert "`/gpu pending NAMESPACE` shows one namespace." in shown
    assert "(`/gpu queues`); put the job in a leaf queue" in shown
    assert "/kai" not in shown


@pytest.mark.parametrize(
    ("resources", "counted"),
    [
        ({"nvidia.com/gpu": "2", "cpu": "16"}, 2.0),
        ({"gpu.nvidia.com": "4", "cpu": "16", "memory": "64Gi"}, 4.0),
        ({"nvidia.com/gpu": "1", "gpu.nvidia.com": "2"}, 3.0),
        ({"nvidia.com/gpu.shared": "2", "mig.nvidia.com": "1", "cpu": "4"}, 0.0),  # none of them
    ],
    ids=["device-plugin", "dra-device-class", "both", "neither"],
)
def test_gpus_under_a_dra_device_class_are_counted_as_kai_counts_them(
    resources: dict[str, str], counted: float | None
) -> None:
    """KAI-Scheduler pkg/common/resources/dra.go: DRA GPUs under the DeviceClass's name."""
    dra_queue = {
        "metadata": {"name": "annia"},
        "spec": {"resources": {"gpu": {"quota": 4, "limit": 8, "overQuotaWeight": 1}}},
        "status": {"allocated": resources, "requested": resources},
    }

    [row] = queues.queue_rows([dra_queue])

    assert (row.allocated, row.requested) == (counted, counted)


def test_a_pending_reason_reads_dra_gpus_as_it_reads_device_plugin_gpus() -> None:
    def as_dra(resources: Any) -> Any:
        if not isinstance(resources, dict):
            return resources
        return {"gpu.nvidia.com" if k == "nvidia.com/gpu" else k: v for k, v in resources.items()}

    dra = {key: as_dra(value) for key, value in TEAM_A.items()}
    message = "team-a quota has reached the allowable limit of GPUs"

    line = advice(read_reason(entry("OverLimit", message, dra)), command="/kai")

    assert line == advice(read_reason(entry("OverLimit", message, TEAM_A)), command="/kai")
    assert "8 of 8 GPUs allocated; this job asks 8 more" in line
