"""The queue starvation rule (docs/design.md §2 "Queue starvation") as tables: which leaf queue
is starved at a check, what its alert says, and the marks `/kai queues` and the Home tab show.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.alerts import machine
from bot.alerts.model import ClusterAlerts, Phase
from bot.alerts.starvation import starvation_alerts
from bot.core.models import HealthReport
from bot.home.assemble import queue_marks
from bot.home.model import ClusterStatus, Home
from bot.home.render import QUEUE_LEGEND, home_view
from bot.workloads import pending, queues, starvation
from bot.workloads import render as render_workloads

NOW = datetime(2026, 8, 7, 10, 0, tzinfo=UTC)
AFTER = timedelta(minutes=30)


def queue(
    name: str, quota: Any, allocated: Any = None, parent: str = "", **gpu: Any
) -> dict[str, Any]:
    status = {} if allocated is None else {"allocated": {"nvidia.com/gpu": str(allocated)}}
    spec: dict[str, Any] = {"resources": {"gpu": {"limit": -1, "overQuotaWeight": 1, **gpu}}}
    if quota is not None:
        spec["resources"]["gpu"]["quota"] = quota
    if parent:
        spec["parentQueue"] = parent
    return {"metadata": {"name": name}, "spec": spec, "status": status}


def group(
    name: str,
    queue_name: str,
    *,
    waited: timedelta | None,
    created: timedelta = timedelta(hours=3),
    running: bool = False,
) -> dict[str, Any]:
    condition: dict[str, Any] = {
        "type": "UnschedulableOnNodePool",
        "nodePool": "default",
        "reasons": [{"reason": "PodSchedulingErrors", "message": "no nodes with enough GPUs"}],
    }
    if waited is not None:
        condition["lastTransitionTime"] = stamp(NOW - waited)
    resources: dict[str, Any] = {"requested": {"nvidia.com/gpu": "4"}}
    if running:  # KAI < 0.17 left the condition behind once the pods ran
        resources["allocated"] = {"nvidia.com/gpu": "4"}
    return {
        "metadata": {"name": name, "namespace": "ml", "creationTimestamp": stamp(NOW - created)},
        "spec": {"queue": queue_name},
        "status": {"resourcesStatus": resources, "schedulingConditions": [condition]},
    }


def stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def judge(
    queue_objects: list[dict[str, Any]], groups: list[dict[str, Any]], after: timedelta = AFTER
) -> starvation.QueueStarvation:
    found, _stale = pending.read_pending(groups)
    return starvation.judge(queues.queue_rows(queue_objects), found, now=NOW, after=after)


HOG = queue("hog", 2, 8)  # holds 8 GPUs on a quota of 2
ROOT = queue("research", 16, 12)


@pytest.mark.parametrize(
    ("queue_objects", "groups", "starved"),
    [
        pytest.param(
            [queue("ml", 4, 2), HOG],
            [group("g", "ml", waited=AFTER)],
            ["ml"],
            id="at-the-threshold",
        ),
        pytest.param(
            [queue("ml", 4, 2), HOG],
            [group("g", "ml", waited=AFTER - timedelta(seconds=1))],
            [],
            id="just-under",
        ),
        pytest.param(
            [queue("ml", 4, 4), HOG],
            [group("g", "ml", waited=AFTER)],
            [],
            id="allocated-equals-quota",
        ),
        pytest.param(
            [queue("ml", None, 0), HOG], [group("g", "ml", waited=AFTER)], [], id="no-quota"
        ),
        pytest.param(
            [queue("ml", -1, 0), HOG], [group("g", "ml", waited=AFTER)], [], id="unlimited-quota"
        ),
        pytest.param(
            [queue("ml", 4, 2), queue("ml-child", 2, 0, parent="ml"), HOG],
            [group("g", "ml", waited=AFTER)],
            [],
            id="non-leaf-queue",
        ),
        pytest.param(
            [queue("ml", 4, 2), HOG],
            [group("g", "ml", waited=AFTER, running=True)],
            [],
            id="stale-condition-pods-running",
        ),
        pytest.param(
            [queue("ml", 4, None), HOG],
            [group("g", "ml", waited=AFTER)],
            ["ml"],
            id="nothing-allocated-yet",
        ),
        pytest.param(
            [queue("ml", 4, 2), HOG],
            [group("g", "ml", waited=None, created=AFTER)],
            ["ml"],
            id="no-transition-time-counts-from-creation",
        ),
        pytest.param(
            [queue("ml", 4, 2), HOG],
            [group("g", "ml", waited=timedelta(minutes=5), created=timedelta(hours=5))],
            [],
            id="counted-from-the-transition-not-the-creation",
        ),
        pytest.param(
            [queue("ml", 4, 2), HOG],
            [group("g", "other", waited=AFTER)],
            [],
            id="another-queues-group",
        ),
    ],
)
def test_a_leaf_queue_below_quota_with_a_group_pending_starved_after_is_starved(
    queue_objects: list[dict[str, Any]], groups: list[dict[str, Any]], starved: list[str]
) -> None:
    assert [s.queue.name for s in judge(queue_objects, groups).starved] == starved


def test_dra_gpus_count_toward_allocated_and_quota() -> None:
    below = queue("ml", 4, None)
    below["status"] = {"allocated": {"nvidia.com/gpu": "1", "gpu.nvidia.com": "2"}}
    at = queue("ml", 4, None)
    at["status"] = {"allocated": {"nvidia.com/gpu": "2", "gpu.nvidia.com": "2"}}
    waiting = [group("g", "ml", waited=AFTER)]

    assert [s.queue.name for s in judge([below, HOG], waiting).starved] == ["ml"]
    assert judge([at, HOG], waiting).starved == ()


def test_the_rule_off_finds_nothing_however_long_the_wait() -> None:
    found = judge(
        [queue("ml", 4, 0), HOG], [group("g", "ml", waited=timedelta(days=3))], after=timedelta(0)
    )

    assert found.starved == ()
    assert found.marks() == {"hog": "over quota"}


def test_the_alert_names_the_longest_waiting_group_and_the_queues_over_quota() -> None:
    found = judge(
        [ROOT, queue("ml", 4, 2, parent="research"), queue("hog", 2, 8, parent="research")],
        [
            group("short", "ml", waited=timedelta(minutes=40)),
            group("long", "ml", waited=timedelta(minutes=95)),
            group("young", "ml", waited=timedelta(minutes=3)),
        ],
    )

    [alert] = starvation_alerts("prod", found.starved, after=AFTER, command="/kai")

    assert (alert.key.cluster, alert.key.kind, alert.key.object, alert.key.condition) == (
        "prod",
        "Queue",
        "ml",
        "Starved",
    )
    assert alert.severity.value == "warning"
    assert alert.title == "queue ml starved: ml/long waiting 1h35m"
    assert alert.message.splitlines() == [
        "Queue ml has 2 of its 4 GPUs (quota) allocated, and 2 PodGroups of it waited 30m or "
        "longer: the longest, ml/long (pool default), for 1h35m.",
        "Allocated over quota (who holds the GPUs): hog 8 of 2 GPUs.",
    ]
    assert alert.reason == "PodSchedulingErrors" and alert.since == NOW - timedelta(minutes=95)


def test_a_starved_queue_fires_at_its_first_check_without_hold_and_resolves_after_hold() -> None:
    policy = machine.Policy(timedelta(minutes=5), timedelta(hours=4), 3, "C1")
    found = judge([queue("ml", 4, 2), HOG], [group("g", "ml", waited=AFTER)])
    seen = starvation_alerts("prod", found.starved, after=AFTER, command="/kai")

    fired = machine.observe(ClusterAlerts("prod"), seen, NOW, policy).state
    clear = machine.observe(fired, [], NOW + timedelta(minutes=1), policy).state
    resolved = machine.observe(clear, [], NOW + timedelta(minutes=6), policy).state

    assert [a.phase for a in fired.alerts.values()] == [Phase.FIRING]
    assert [a.phase for a in clear.alerts.values()] == [Phase.FIRING]
    assert resolved.alerts == {} and [a.phase for a in resolved.closing] == [Phase.RESOLVED]


def test_queues_and_the_home_tab_mark_starved_and_over_quota_queues_with_a_legend() -> None:
    found = judge(
        [ROOT, queue("ml", 4, 2, parent="research"), queue("hog", 2, 8, parent="research")],
        [group("g", "ml", waited=timedelta(minutes=45))],
    )

    text = render_workloads.queues_message(
        found.rows, cluster="prod", marks=found.marks(), starved_after=AFTER
    )["text"]
    marks = queue_marks(found)

    tree = text.splitlines()
    numbers = "limit unlimited, over-quota weight 1, allocated"
    assert tree[2] == f"    ↳ hog: GPU quota 2, {numbers} 8, requested none reported [over quota]"
    assert tree[3] == f"    ↳ ml: GPU quota 4, {numbers} 2, requested none reported [starved]"
    assert (
        "[starved]: below its GPU quota with a PodGroup pending 30m or longer · [over quota]: "
        "more GPUs allocated than its quota"
    ) in tree
    assert [(m.name, m.mark, m.allocated, m.quota, m.waiting) for m in marks] == [
        ("ml", "starved", "2", "4", "ml/g for 45m"),
        ("hog", "over quota", "8", "2", ""),
    ]
    home = Home(NOW, (ClusterStatus("prod", HealthReport("prod", [], NOW), queues=marks),))
    assert [line for line in view_lines(home) if "queue" in line] == [
        "      :hourglass_flowing_sand: queue ml *starved*: 2 of 4 GPUs (quota) allocated, ml/g "
        "for 45m waiting",
        "      :arrow_double_up: queue hog *over quota*: 8 of 2 GPUs (quota) allocated",
        QUEUE_LEGEND,
    ]


def view_lines(home: Home) -> list[str]:
    view = home_view(home, "/kai")
    return [
        line
        for b in view["blocks"]
        for line in str((b.get("text") or {}).get("text", "")).split("\n")
    ]
