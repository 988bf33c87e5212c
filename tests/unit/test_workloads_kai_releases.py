"""`/kai pending`, `why` and the starvation rule on the PodGroups each KAI release writes: the
v0.17.0 shape (`status.phase` and the pod counts gone, #1650; `spec.preemptionDelay`, #1832;
the `kai.scheduler/last-eviction-timestamp` annotation) read as the old one, and the reasons
`QueueDoesNotExist` (v0.13.0) and `PreemptionDelayNotElapsed` (v0.17.0) in plain words."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from why_answers import explain

from bot.workloads import pending, queues, render, starvation

NOW = datetime(2026, 8, 7, 12, 0, tzinfo=UTC)
CREATED = "2026-08-07T09:00:00Z"  # three hours before NOW
EVICTED = "2026-08-07T11:50:00Z"  # ten minutes before NOW
DELAY_MESSAGE = (
    "Workload is within its preemption delay window (15m0s) and may not trigger evictions "
    "before 2026-08-07T12:05:00Z"
)
NO_ROOM = (
    "Resources were found for 0 pods while 2 are required for gang scheduling. Additional "
    "pods cannot be scheduled due to: no nodes with enough resources were found"
)


def group(
    *reasons: dict[str, str],
    since: str = CREATED,
    annotations: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
    old_shape: bool = False,
) -> dict[str, Any]:
    """A pending PodGroup of queue team-a; `old_shape` adds the status fields KAI's schema had
    before v0.17.0 (never written by KAI: a tool that copies PodGroups might carry them)."""
    status: dict[str, Any] = {
        "resourcesStatus": {"requested": {"nvidia.com/gpu": "8"}},
        "schedulingConditions": [
            {
                "type": "UnschedulableOnNodePool",
                "nodePool": "default",
                "status": "True",
                "lastTransitionTime": since,
                "reasons": list(reasons),
            }
        ],
    }
    if old_shape:
        status |= {"phase": "Pending", "running": 0, "succeeded": 0, "failed": 0, "pending": 2}
    return {
        "metadata": {
            "name": "pg-train",
            "namespace": "team-a",
            "creationTimestamp": CREATED,
            "annotations": annotations or {},
        },
        "spec": {"minMember": 2, "queue": "team-a", **(spec or {})},
        "status": status,
    }


def delayed_group(**kwargs: Any) -> dict[str, Any]:
    return group(
        {"reason": "PodSchedulingErrors", "message": NO_ROOM},
        {"reason": "PreemptionDelayNotElapsed", "message": DELAY_MESSAGE},
        spec={"preemptionDelay": "15m0s"},
        **kwargs,
    )


TEAM_A = {
    "metadata": {"name": "team-a"},
    "spec": {"resources": {"gpu": {"quota": 8, "limit": -1}}},
    "status": {"allocated": {"nvidia.com/gpu": "0"}},
}


@pytest.mark.parametrize("old_shape", [True, False], ids=["up-to-v0.16", "v0.17"])
def test_a_pending_group_reads_the_same_in_the_old_shape_and_the_new(old_shape: bool) -> None:
    reason = {"reason": "OverLimit", "message": "team-a quota has reached the allowable limit"}

    (found,), stale = pending.read_pending([group(reason, old_shape=old_shape)])
    entry = render.group_entry(found, NOW, "/kai")

    assert stale == 0
    assert entry.splitlines()[0] == "team-a/pg-train · queue team-a · pool default · waiting 3h"
    assert "queue team-a is at its GPU limit" in entry


def test_a_group_evicted_back_to_pending_waits_since_its_eviction() -> None:
    """v0.17.0 stamps the evicted group; before its eviction it ran, so it did not wait."""
    evicted = group(
        {"reason": "OverLimit", "message": "full"},
        annotations={"kai.scheduler/last-eviction-timestamp": EVICTED},
    )

    (found,), _ = pending.read_pending([evicted])

    assert found.evicted_at == datetime(2026, 8, 7, 11, 50, tzinfo=UTC)
    assert "waiting 10m" in render.group_entry(found, NOW, "/kai")
    assert found.waiting_since == found.evicted_at


def test_the_starvation_rule_counts_an_evicted_group_from_its_eviction() -> None:
    """A condition left from before it ran (KAI < 0.17 never cleared them) says 3 hours; the
    eviction says 10 minutes, which is not starved for 30 minutes."""
    evicted = group(
        {"reason": "", "message": "Unable to schedule podgroup"},
        annotations={"kai.scheduler/last-eviction-timestamp": EVICTED},
    )
    found, _ = pending.read_pending([evicted])
    rows = queues.queue_rows([TEAM_A])

    assert starvation.find_starved(rows, found, now=NOW, after=timedelta(minutes=30)) == []
    assert starvation.find_starved(rows, found, now=NOW, after=timedelta(minutes=5)) != []


@pytest.mark.parametrize(
    ("annotations", "ends"),
    [
        pytest.param({}, datetime(2026, 8, 7, 9, 15, tzinfo=UTC), id="from-creation"),
        pytest.param(
            {"kai.scheduler/last-eviction-timestamp": EVICTED},
            datetime(2026, 8, 7, 12, 5, tzinfo=UTC),
            id="again-after-an-eviction",
        ),
    ],
)
def test_the_preemption_delay_ends_its_length_after_creation_or_the_last_eviction(
    annotations: dict[str, str], ends: datetime
) -> None:
    (found,), _ = pending.read_pending([delayed_group(annotations=annotations)])

    assert found.delay_ends == ends


@pytest.mark.parametrize("text", ["", "0s", "soon"], ids=["none", "zero", "unreadable"])
def test_no_delay_or_one_that_does_not_parse_gives_no_end(text: str) -> None:
    spec = {"preemptionDelay": text} if text else {}

    assert pending.delay_end(group(spec=spec), NOW, None) is None


def test_pending_explains_the_preemption_delay_with_the_time_it_ends() -> None:
    annotations = {"kai.scheduler/last-eviction-timestamp": EVICTED}
    (found,), _ = pending.read_pending([delayed_group(annotations=annotations)])

    entry = render.group_entry(found, NOW, "/kai")

    assert f"    PreemptionDelayNotElapsed: {DELAY_MESSAGE}" in entry
    assert (
        "keeps it from evicting other workloads to make room until 2026-08-07 12:05:00 UTC: it "
        "is tried again every cycle and may preempt or reclaim from then"
    ) in entry


def test_why_gives_the_preemption_delay_as_what_to_do_before_the_other_reasons() -> None:
    pod = {
        "metadata": {
            "name": "train-0",
            "namespace": "team-a",
            "annotations": {"pod-group-name": "pg-train"},
        },
        "spec": {"schedulerName": "kai-scheduler"},
        "status": {"phase": "Pending"},
    }

    answer = explain(pod, delayed_group(), TEAM_A)

    assert answer.reasons == (
        f"PodSchedulingErrors: {NO_ROOM}",
        f"PreemptionDelayNotElapsed: {DELAY_MESSAGE}",
    )
    assert answer.advice.startswith("there is no room for it in free GPUs, and its preemption")
    assert "until 2026-08-07 09:15:00 UTC" in answer.advice


def test_a_group_whose_queue_does_not_exist_is_said_so_with_or_without_the_reason() -> None:
    """v0.13.0+ write QueueDoesNotExist; v0.12 writes nothing on such a group."""
    said = group({"reason": "QueueDoesNotExist", "message": "Queue 'team-a' does not exist"})
    unsaid = copy.deepcopy(said)
    unsaid["status"].pop("schedulingConditions")
    pod = {
        "metadata": {"name": "p", "namespace": "team-a", "annotations": {"pod-group-name": "g"}},
        "spec": {"schedulerName": "kai-scheduler"},
        "status": {"phase": "Pending"},
    }

    answers = [explain(pod, g).advice for g in (said, unsaid)]

    assert answers[0] == answers[1]
    assert answers[0].startswith(
        "its queue team-a does not exist, so the scheduler will not place it: create Queue team-a"
    )
