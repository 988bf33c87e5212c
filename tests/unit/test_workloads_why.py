"""`/kai why`, `/kai pending` and `/kai queues` read whole (docs/design.md §2 "KAI workloads"):
every field of the answer for each state a pod, a PodGroup and a Queue can be in, so a line
that goes missing or wrong is a failing row. Objects shaped as KAI writes them
(kai-workloads.md §1–§5).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from why_answers import explain

from bot.workloads import pending, queues, why
from bot.workloads.quantities import parse_quantity, show
from bot.workloads.reasons import QueueNumbers, Reason, advice, read_reason

CREATED = "2026-08-07T09:00:00Z"
KAI = "kai-scheduler"


def kai_pod(
    phase: str = "Pending",
    *,
    group: str | None = "pg-x",
    pool: str | None = None,
    conditions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "p-0", "namespace": "team-a"}
    if group is not None:
        metadata["annotations"] = {"pod-group-name": group}
    if pool is not None:
        metadata["labels"] = {"kai.scheduler/node-pool": pool}
    return {
        "metadata": metadata,
        "spec": {"schedulerName": KAI},
        "status": {"phase": phase, "conditions": conditions or []},
    }


def podgroup(
    *conditions: dict[str, Any], min_member: int | None = None, allocated: str | None = None
) -> dict[str, Any]:
    resources: dict[str, Any] = {"requested": {"nvidia.com/gpu": "2"}}
    if allocated is not None:
        resources["allocated"] = {"nvidia.com/gpu": allocated}
    spec: dict[str, Any] = {"queue": "team-a"}
    if min_member is not None:
        spec["minMember"] = min_member
    return {
        "metadata": {"name": "pg-x", "namespace": "team-a", "creationTimestamp": CREATED},
        "spec": spec,
        "status": {"resourcesStatus": resources, "schedulingConditions": list(conditions)},
    }


def unschedulable(*reasons: dict[str, Any], message: str = "", pool: str = "") -> dict[str, Any]:
    condition: dict[str, Any] = {"type": "UnschedulableOnNodePool", "reasons": list(reasons)}
    if message:
        condition["message"] = message
    if pool:
        condition["nodePool"] = pool
    return condition


TEAM_QUEUE = {
    "metadata": {"name": "team-a"},
    "spec": {"displayName": "Team A", "resources": {"gpu": {"quota": 4, "limit": 8}}},
    "status": {"allocated": {"nvidia.com/gpu": "8"}},
}
QUEUE_LINE = (
    "team-a (Team A): GPU quota 4, limit 8, over-quota weight not set, allocated 8, "
    "requested none reported"
)
WAIT = "the scheduler has not reported on it yet: it may wait for the rest of its gang"
NO_REASON = (
    "the scheduler gave no reason: its queue is not a leaf queue or its parent queue is missing "
    "(`/gpu queues`); put the job in a leaf queue"
)


def ask(pod: dict[str, Any], group: dict[str, Any] | None, **read: Any) -> why.Explanation:
    return explain(pod, group, command="/gpu", **read)


CASES = {
    "running": (
        kai_pod("Running", pool="a100"),
        podgroup(allocated="2"),
        {"queue": TEAM_QUEUE},
        why.Explanation(
            "team-a/p-0", "Running", KAI, True, (), "pg-x", "team-a", QUEUE_LINE, "a100",
            advice="it is running: nothing is blocking it",
        ),
    ),
    "succeeded": (
        kai_pod("Succeeded"),
        podgroup(),
        {},
        why.Explanation(
            "team-a/p-0", "Succeeded", KAI, True, (), "pg-x", "team-a",
            "team-a: this Queue does not exist", "default",
            advice="it is succeeded: nothing is blocking it",
        ),
    ),
    "no-annotation": (
        kai_pod(group=None),
        None,
        {},
        why.Explanation(
            "team-a/p-0", "Pending", KAI, True, (), node_pool="default",
            advice="it has no pod-group-name annotation: the pod-grouper has not handled it; is "
            "it running? (`/gpu diagnose kai`)",
        ),
    ),
    "no-group": (
        kai_pod(),
        None,
        {},
        why.Explanation(
            "team-a/p-0", "Pending", KAI, True, (), "pg-x", node_pool="default",
            advice="its PodGroup pg-x does not exist: the pod-grouper has not created it yet",
        ),
    ),
    "gang": (
        kai_pod(),
        podgroup(min_member=4),
        {"queue": TEAM_QUEUE},
        why.Explanation(
            "team-a/p-0", "Pending", KAI, True, (), "pg-x", "team-a",
            QUEUE_LINE, "default",
            advice=f"{WAIT} (minMember 4); see the PodGroup's events",
        ),
    ),
    "gang-of-one": (
        kai_pod(),
        podgroup(),
        {"queue": TEAM_QUEUE},
        why.Explanation(
            "team-a/p-0", "Pending", KAI, True, (), "pg-x", "team-a",
            QUEUE_LINE, "default",
            advice=f"{WAIT} (minMember 1); see the PodGroup's events",
        ),
    ),
    "no-reason": (
        kai_pod(
            conditions=[
                {"type": "PodBound", "status": "False", "reason": "Waiting", "message": "m"},
                {"type": "PodScheduled", "status": "False"},
                {"type": "Ready", "status": "False", "reason": "Other"},
            ]
        ),
        podgroup(unschedulable(message="Unable to schedule podgroup", pool="h100")),
        {"queue": TEAM_QUEUE},
        why.Explanation(
            "team-a/p-0", "Pending", KAI, True,
            ("PodScheduled False", "PodBound False (Waiting): m"), "pg-x", "team-a",
            QUEUE_LINE, "h100", ("Unable to schedule podgroup",),
            advice=NO_REASON,
        ),
    ),
    "stale-conditions": (
        kai_pod("Pending"),
        podgroup(unschedulable({"reason": "OverLimit", "message": "full"}), allocated="2"),
        {"queue": TEAM_QUEUE},
        why.Explanation(
            "team-a/p-0", "Pending", KAI, True, (), "pg-x", "team-a",
            QUEUE_LINE, "default",
            advice=f"{WAIT} (minMember 1); see the PodGroup's events",
        ),
    ),
    "reasons": (
        kai_pod(pool="a100"),
        podgroup(
            unschedulable(
                {"reason": "", "message": "0/8 nodes are available"},
                {"reason": "OverLimit", "message": "full"},
                pool="h100",
            )
        ),
        {
            "bind": {"spec": {}, "status": {"phase": "Failed"}},
            "events": [
                {"type": "Warning", "reason": "Unschedulable", "message": " full ",
                 "reportingComponent": "binder"},
                {"type": "Warning", "reason": "Evicted", "message": "x", "count": 2,
                 "source": {"component": "pod-grouper"}},
                {"type": "Normal", "reason": "Scheduled", "message": "y",
                 "source": {"component": "kai-scheduler"}},
                {"type": "Warning", "reason": "FailedMount", "message": "z",
                 "reportingComponent": "kubelet"},
            ],
        },
        why.Explanation(
            "team-a/p-0", "Pending", KAI, True, (), "pg-x", "team-a",
            "team-a: this Queue does not exist", "a100",
            ("0/8 nodes are available", "OverLimit: full"), "no reason given",
            ("Unschedulable: full", "Evicted ×2: x"),
            advice="the scheduler says: 0/8 nodes are available",
        ),
    ),
    "bind-failed": (
        kai_pod(),
        podgroup(),
        {"bind": {"spec": {}, "status": {"phase": "Failed", "reason": "node gone"}},
         "queue": TEAM_QUEUE},
        why.Explanation(
            "team-a/p-0", "Pending", KAI, True, (), "pg-x", "team-a",
            QUEUE_LINE, "default", bind_failure="node gone",
            advice="binding failed (node gone); the scheduler retries on its next cycle: if it "
            "repeats, check that node and the binder's log (`/gpu diagnose kai`)",
        ),
    ),
    "bind-pending": (
        kai_pod(phase=""),
        podgroup(),
        {"bind": {"spec": {"selectedNode": "n"}, "status": {"phase": "Pending"}},
         "queue": TEAM_QUEUE},
        why.Explanation(
            "team-a/p-0", "Unknown", KAI, True, (), "pg-x", "team-a",
            QUEUE_LINE, "default",
            advice=f"{WAIT} (minMember 1); see the PodGroup's events",
        ),
    ),
    # KAI v0.12 skips a group whose queue does not exist and writes nothing on it
    # (pkg/scheduler/cache/cluster_info/cluster_info.go); v0.13+ says QueueDoesNotExist.
    "queue-missing-unsaid": (
        kai_pod(),
        podgroup(),
        {},
        why.Explanation(
            "team-a/p-0", "Pending", KAI, True, (), "pg-x", "team-a",
            "team-a: this Queue does not exist", "default",
            advice="its queue team-a does not exist, so the scheduler will not place it: create "
            "Queue team-a (a leaf queue), or resubmit the workload labelled "
            "kai.scheduler/queue=<an existing leaf queue> (a PodGroup's queue never changes once "
            "it exists)",
        ),
    ),
}  # fmt: skip


@pytest.mark.parametrize(("pod", "group", "read", "answer"), CASES.values(), ids=list(CASES))
def test_why_says_each_part_of_the_answer_for_each_state(
    pod: dict[str, Any], group: dict[str, Any] | None, read: dict[str, Any], answer: why.Explanation
) -> None:
    assert ask(pod, group, **read) == answer


def test_the_advice_of_the_first_reason_names_its_queue_and_the_command() -> None:
    group = podgroup(unschedulable({"reason": "QueueDoesNotExist", "message": ""}))

    answer = ask(kai_pod(), group)

    assert answer.advice == advice(Reason("QueueDoesNotExist", ""), "team-a", command="/gpu")
    assert "team-a" in answer.advice


def test_a_pod_without_its_scheduled_condition_still_shows_its_bound_one() -> None:
    pod = kai_pod(conditions=[{"type": "PodBound", "status": "True"}])

    assert ask(pod, podgroup()).conditions == ("PodBound True",)


def test_a_first_reason_without_words_points_at_the_configured_command() -> None:
    group = podgroup(unschedulable({"reason": "", "message": ""}))

    assert ask(kai_pod(), group).advice == NO_REASON


def test_a_pod_without_a_scheduler_name_is_the_default_schedulers() -> None:
    pod = kai_pod()
    del pod["spec"]["schedulerName"]

    answer = ask(pod, podgroup())

    assert answer == why.Explanation("team-a/p-0", "Pending", "default-scheduler", False, ())


def test_a_reason_reads_every_number_of_its_queue() -> None:
    details = {
        "name": "team-a",
        "queueResourceLimits": {"nvidia.com/gpu": "8"},
        "queueDeservedResources": {"nvidia.com/gpu": "4"},
        "queueAllocatedResources": {"nvidia.com/gpu": "7"},
        "queueAllocatedNonPreemptibleResources": {"nvidia.com/gpu": "3"},
        "queueRequestedResources": {"nvidia.com/gpu": "16"},
        "podGroupRequestedResources": {"nvidia.com/gpu": "2"},
    }
    raw = {"reason": "OverLimit", "message": "m", "details": {"queueDetails": details}}

    assert read_reason(raw) == Reason(
        "OverLimit", "m", QueueNumbers("team-a", 8.0, 4.0, 7.0, 3.0, 16.0, 2.0)
    )
    assert read_reason({"reason": "OverLimit"}) == Reason("OverLimit", "", None)


@pytest.mark.parametrize(
    ("reason", "queue", "line"),
    [
        pytest.param(Reason("OverLimit", "m"), "", "queue its queue is at its GPU limit: wait",
                     id="no-queue-known"),
        pytest.param(Reason("OverLimit", "m"), "team-b", "queue team-b is at its GPU limit: wait",
                     id="queue-of-the-group"),
        pytest.param(
            Reason("OverLimit", "m", QueueNumbers("team-c", limit=8, allocated=8)), "team-b",
            "queue team-c is at its GPU limit (8 of 8 GPUs allocated): wait", id="job-asks-none",
        ),
        pytest.param(
            Reason("NonPreemptibleOverQuota", "m", QueueNumbers("q")), "",
            "queue q has no quota left for non-preemptible jobs: make", id="quota-unknown",
        ),
        pytest.param(Reason("", ""), "", "the scheduler gave no reason: its queue", id="nothing"),
        pytest.param(Reason("Custom", ""), "", "the scheduler says: Custom", id="reason-only"),
    ],
)  # fmt: skip
def test_advice_falls_back_to_what_is_known(reason: Reason, queue: str, line: str) -> None:
    assert advice(reason, queue, command="/gpu").startswith(line)


def test_a_pending_group_reads_pool_since_message_and_namespace_as_written() -> None:
    restored = podgroup(
        unschedulable(message="Unable to schedule podgroup"),
        unschedulable({"reason": "OverLimit", "message": "full"}, pool="h100"),
    )
    restored["status"]["schedulingConditions"][1]["lastTransitionTime"] = "2026-08-07T08:00:00Z"
    no_namespace = podgroup(unschedulable(message="x"))
    del no_namespace["metadata"]["namespace"]
    del no_namespace["metadata"]["creationTimestamp"]

    found, stale = pending.read_pending([no_namespace, {"status": {}}, restored])

    created = datetime(2026, 8, 7, 9, 0, tzinfo=UTC)
    assert stale == 0
    assert found == [
        pending.PendingGroup(
            "team-a", "pg-x", "team-a", "h100", datetime(2026, 8, 7, 8, 0, tzinfo=UTC),
            (Reason("OverLimit", "full"),), "",
            condition_since=datetime(2026, 8, 7, 8, 0, tzinfo=UTC),
        ),
        pending.PendingGroup(
            "team-a", "pg-x", "team-a", "default", created, (), "Unable to schedule podgroup"
        ),
        pending.PendingGroup("", "pg-x", "team-a", "default", None, (), "x"),
    ]  # fmt: skip


def test_stale_groups_are_counted_one_each() -> None:
    groups = [podgroup(unschedulable(message="x"), allocated="2") for _ in range(3)]

    assert pending.read_pending(groups) == ([], 3)


@pytest.mark.parametrize(
    ("requested", "allocated", "stale"),
    [
        pytest.param({"nvidia.com/gpu": "2"}, {"nvidia.com/gpu": "2"}, True, id="all-placed"),
        pytest.param({"nvidia.com/gpu": "500m"}, {"nvidia.com/gpu": "500m"}, True, id="fraction"),
        pytest.param({"nvidia.com/gpu": "500m"}, {}, False, id="fraction-not-placed"),
        pytest.param({"nvidia.com/gpu": "2"}, {"nvidia.com/gpu": "1"}, False, id="short"),
        pytest.param({"nvidia.com/gpu": "0", "cpu": "4"}, {"cpu": "4"}, True, id="zero-wanted"),
        pytest.param({"cpu": "many"}, {"cpu": "4"}, False, id="unreadable"),
        pytest.param({}, {"cpu": "4"}, False, id="nothing-requested"),
    ],
)
def test_a_group_is_stale_only_when_everything_it_asked_for_is_allocated(
    requested: dict[str, str], allocated: dict[str, str], stale: bool
) -> None:
    group = {"status": {"resourcesStatus": {"requested": requested, "allocated": allocated}}}

    assert pending.is_stale(group) is stale


def test_queues_in_a_cycle_with_no_root_are_each_shown_once_at_the_top() -> None:
    rows = queues.queue_rows(
        [
            {"metadata": {"name": "b"}, "spec": {"parentQueue": "a", "displayName": "Bee"}},
            {"metadata": {"name": "a"}, "spec": {"parentQueue": "b"}},
        ]
    )

    assert [(r.name, r.depth, r.parent, r.display_name, r.parent_missing) for r in rows] == [
        ("a", 0, "b", "", False),
        ("b", 1, "a", "Bee", False),
    ]


@pytest.mark.parametrize(
    ("value", "number"),
    [
        (True, None), (None, None), (3, 3.0), (0.5, 0.5), ("64Gi", 64 * 2**30), ("500m", 0.5),
        ("2Q", None), ("", None), ("1e3", 1000.0), (" 4 ", 4.0),
    ],
)  # fmt: skip
def test_a_quantity_reads_as_kubernetes_writes_it(value: Any, number: float | None) -> None:
    assert parse_quantity(value) == number


def test_an_unknown_number_shows_as_a_question_mark() -> None:
    assert (show(None), show(-1.0), show(0.5)) == ("?", "unlimited", "0.5")
