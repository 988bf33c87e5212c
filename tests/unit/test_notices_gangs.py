"""Whether a stale-gang eviction hit a gang that completed (KAI #1968: v0.16.2 to v0.17.0 evict
the rest of a gang whose pods finish one by one): such a gang gets no eviction notice."""

from __future__ import annotations

from typing import Any

import pytest

from bot.notices import gangs


def pod(
    name: str, phase: str, *, group: str = "pg-train", deleting: bool = False
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "team-a",
        "annotations": {"pod-group-name": group},
    }
    if deleting:
        metadata["deletionTimestamp"] = "2026-08-07T10:00:00Z"
    return {"metadata": metadata, "status": {"phase": phase}}


SUCCEEDED, RUNNING_EVICTED = pod("w-0", "Succeeded"), pod("w-1", "Running", deleting=True)
CASES = {
    "all-succeeded": ([SUCCEEDED, pod("w-1", "Succeeded"), pod("w-2", "Succeeded")], True),
    "the-rest-evicted-as-it-finished": ([SUCCEEDED, RUNNING_EVICTED], True),
    "a-pod-made-again-waits": ([SUCCEEDED, pod("w-1", "Pending")], False),
    "a-pod-failed-a-real-stale-gang": ([pod("w-0", "Failed"), RUNNING_EVICTED], False),
    "nothing-left-standing": ([RUNNING_EVICTED], False),
    "no-pods-read": ([], False),
}


@pytest.mark.parametrize(("pods", "completed"), CASES.values(), ids=list(CASES))
def test_a_gang_completed_when_every_pod_left_standing_succeeded(
    pods: list[dict[str, Any]], completed: bool
) -> None:
    assert gangs.has_completed(pods) is completed


def test_the_pods_of_a_gang_are_those_annotated_with_its_group() -> None:
    mine, other = pod("w-0", "Succeeded"), pod("x-0", "Running", group="pg-other")

    assert gangs.pods_of("pg-train", [mine, other, {"metadata": {"name": "bare"}}]) == [mine]
