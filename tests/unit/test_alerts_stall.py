"""The scheduler stall alert, pure (`bot.alerts.stall`, `bot.alerts.stall_signs`).

A shard's scheduler whose pods report Ready is stalled when its leader Lease has not been renewed
for `stall_after` (only with more than one replica: the operator turns leader election on for
that), or when its pending PodGroups have been untouched that long (no scheduling condition
written, no Event from the scheduler counted up; at least 6 minutes, client-go's Event refresh).
The alert names the Lease holder and the age of its last renewal, and says when there is no
Lease to read. Objects are shaped as KAI writes them (KAI-Scheduler cmd/scheduler/app/server.go,
pkg/scheduler/cache/status_updater/default_status_updater.go).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.alerts import stall, stall_signs
from bot.alerts.model import AlertKey, Severity
from bot.core.models import ClusterSnapshot
from bot.rules import kai

NOW = datetime(2026, 8, 24, 12, 0, tzinfo=UTC)
AFTER = timedelta(minutes=5)
NS = "kai-scheduler"
HOLDER = "kai-scheduler-default-7d9f8c6b5-x2k8p_1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d"


def at(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def config(**global_: str) -> dict[str, Any]:
    return {
        "kind": "Config",
        "metadata": {"name": "kai-config"},
        "spec": {"namespace": NS, "global": {"schedulerName": "kai-scheduler", **global_}},
    }


def shard(name: str = "default", partition: str = "") -> dict[str, Any]:
    spec = {"partitionLabelValue": partition} if partition else {}
    return {"kind": "SchedulingShard", "metadata": {"name": name}, "spec": spec}


def deployment(name: str = "kai-scheduler-default", *, replicas: int = 2, ready: int = 2) -> Any:
    return {
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"replicas": replicas},
        "status": {"replicas": replicas, "readyReplicas": ready, "availableReplicas": ready},
    }


def lease(name: str = "kai-scheduler", renewed_ago: float = 0.1, holder: str = HOLDER) -> Any:
    """As the scheduler's leader election writes it (client-go resourcelock, LeaseLock)."""
    return {
        "kind": "Lease",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 15,
            "acquireTime": at(60),
            "renewTime": at(renewed_ago),
            "leaseTransitions": 0,
        },
    }


def group(
    name: str = "pg-train",
    *,
    touched_ago: float | None = 10,
    created_ago: float = 30,
    labels: dict[str, str] | None = None,
    requested: str = "8",
    allocated: str = "0",
) -> dict[str, Any]:
    """A PodGroup whose pods want `requested` GPUs, `allocated` of them placed."""
    status: dict[str, Any] = {
        "resourcesStatus": {
            "requested": {"nvidia.com/gpu": requested} if requested else {},
            "allocated": {"nvidia.com/gpu": allocated},
        }
    }
    if touched_ago is not None:
        status["schedulingConditions"] = [
            {
                "type": "UnschedulableOnNodePool",
                "nodePool": "default",
                "status": "True",
                "transitionID": "1",
                "lastTransitionTime": at(touched_ago),
            }
        ]
    return {
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": "annia",
            "labels": labels or {},
            "creationTimestamp": at(created_ago),
        },
        "spec": {"queue": "annia", "minMember": 1},
        "status": status,
    }


def event(group_name: str = "pg-train", ago: float = 1, source: str = "kai-scheduler") -> Any:
    """The scheduler's Unschedulable Event on a PodGroup, counted up (core/v1 recorder)."""
    return {
        "kind": "Event",
        "metadata": {"name": f"{group_name}.17f", "namespace": "annia"},
        "involvedObject": {
            "kind": "PodGroup",
            "namespace": "annia",
            "name": group_name,
            "apiVersion": "scheduling.run.ai/v2alpha2",
        },
        "reason": "Unschedulable",
        "source": {"component": source},
        "firstTimestamp": at(50),
        "lastTimestamp": at(ago),
        "count": 12,
    }


def snapshot(*deployments: Any, shards: tuple[Any, ...] = (), cfg: Any = None) -> ClusterSnapshot:
    return ClusterSnapshot(
        kai_config=cfg or config(),
        shards=shards or (shard(),),
        deployments=deployments or (deployment(),),
        crd_names=None,
        apiservice=None,
        kai_namespace=NS,
    )


def judge(
    snap: ClusterSnapshot,
    leases: list[Any] = (),  # type: ignore[assignment]
    groups: list[Any] = (),  # type: ignore[assignment]
    events: list[Any] = (),  # type: ignore[assignment]
    after: timedelta = AFTER,
) -> list[Any]:
    shards = stall_signs.read_shards(snap, leases, groups, events)
    return stall.stall_alerts("prod", shards, NOW, after=after, command="/kai")


def test_a_lease_not_renewed_for_stall_after_pages_naming_its_holder_and_last_renewal() -> None:
    [alert] = judge(snapshot(), leases=[lease(renewed_ago=7)])

    assert alert.key == AlertKey("prod", "Deployment", f"{NS}/kai-scheduler-default", "Stalled")
    assert alert.severity is Severity.CRITICAL and alert.waited_out
    assert alert.title == (
        "KAI scheduler kai-scheduler-default stalled: kai-scheduler-default-7d9f8c6b5-x2k8p has "
        "not renewed its Lease for 7m"
    )
    assert alert.reason == "LeaseNotRenewed"
    assert alert.since == NOW - timedelta(minutes=7)
    lines = alert.message.splitlines()
    assert lines[0] == (
        f"Lease {NS}/kai-scheduler held by {HOLDER}, last renewed 2026-08-24 11:53:00 UTC."
    )
    assert lines[1] == f"2 of 2 pod(s) of Deployment {NS}/kai-scheduler-default report Ready."
    assert "rollout restart deployment kai-scheduler-default" in alert.check_first


@pytest.mark.parametrize(
    ("renewed_ago", "fires"),
    [(4.99, False), (5.01, True)],
    ids=["just-under", "just-over"],
)
def test_the_lease_counts_from_its_last_renewal(renewed_ago: float, fires: bool) -> None:
    assert bool(judge(snapshot(), leases=[lease(renewed_ago=renewed_ago)])) is fires


def test_a_check_names_when_a_scheduler_would_be_stalled_if_nothing_changes() -> None:
    groups = [group(touched_ago=2)]
    shards = stall_signs.read_shards(snapshot(), [lease(renewed_ago=1)], groups, [])
    assert stall.next_look(shards, NOW, AFTER) == NOW + timedelta(minutes=4)  # the Lease's
    quiet = stall_signs.read_shards(snapshot(), [], groups, [])
    assert stall.next_look(quiet, NOW, AFTER) == NOW + timedelta(minutes=4)  # 6m after the touch
    assert stall.next_look(shards, NOW, timedelta(0)) is None


def test_with_one_replica_a_lease_left_from_before_is_nobodys_and_only_the_groups_count() -> None:
    one = snapshot(deployment(replicas=1, ready=1))
    assert judge(one, leases=[lease(renewed_ago=60)]) == []
    [alert] = judge(one, leases=[lease(renewed_ago=60)], groups=[group(touched_ago=7)])
    assert alert.reason == "PodGroupsUntouched"
    assert alert.message.splitlines()[0] == (
        "No Lease to read: with 1 replica the scheduler runs no leader election (the operator "
        "turns it on for more than one)."
    )


def test_a_scheduler_with_no_ready_pod_is_left_to_its_deployments_own_alert() -> None:
    down = snapshot(deployment(ready=0))
    assert judge(down, leases=[lease(renewed_ago=30)], groups=[group(touched_ago=30)]) == []


@pytest.mark.parametrize(
    ("touched_ago", "events", "fires"),
    [
        (7, [], True),
        (5.5, [], False),  # past stall_after, but client-go may hold an Event back 5 minutes
        (7, [event(ago=1)], False),
        (7, [event(ago=1, source="default-scheduler")], True),
        (None, [], True),  # never examined: counted from its creation, 30 minutes ago
    ],
    ids=[
        "untouched",
        "within-the-event-refresh",
        "event-counted-up",
        "not-the-schedulers",
        "never",
    ],
)
def test_pending_groups_untouched_for_stall_after_page_when_the_pods_report_ready(
    touched_ago: float | None, events: list[Any], fires: bool
) -> None:
    one = snapshot(deployment(replicas=1, ready=1))
    found = judge(one, groups=[group(touched_ago=touched_ago)], events=events)
    assert bool(found) is fires
    if fires:
        assert found[0].title == (
            "KAI scheduler kai-scheduler-default stalled: 1 pending PodGroup untouched for "
            f"{7 if touched_ago else 30}m"
        )
        said = found[0].message.splitlines()[2]
        assert said.startswith(
            "1 PodGroup(s) of shard default pending (annia/pg-train among them), none touched "
            "by the scheduler (a scheduling condition, an Event) since 2026-08-24 11:"
        )


def test_one_group_touched_lately_is_enough_however_old_the_others() -> None:
    groups = [group("pg-old", touched_ago=50), group("pg-new", touched_ago=1)]
    assert judge(snapshot(deployment(replicas=1, ready=1)), groups=groups) == []


@pytest.mark.parametrize(
    "leftover",
    [
        group(requested="", touched_ago=60),  # a finished job: no active pod, the old condition
        group(requested="8", allocated="8", touched_ago=60),  # its pods all run
    ],
    ids=["finished", "running"],
)
def test_a_group_that_waits_for_nothing_is_not_pending(leftover: dict[str, Any]) -> None:
    assert judge(snapshot(deployment(replicas=1, ready=1)), groups=[leftover]) == []


def test_each_shard_reads_its_own_lease_and_the_groups_of_its_partition() -> None:
    snap = snapshot(
        deployment(),
        deployment("kai-scheduler-gpu"),
        shards=(shard(), shard("gpu", partition="a100")),
        cfg=config(nodePoolLabelKey="pool"),
    )
    leases = [lease(renewed_ago=0.1), lease("kai-scheduler-a100", renewed_ago=9)]
    groups = [group(labels={"pool": "a100"}, touched_ago=30), group("pg-mine", touched_ago=1)]

    [alert] = judge(snap, leases=leases, groups=groups)

    assert alert.key.object == f"{NS}/kai-scheduler-gpu" and alert.reason == "LeaseNotRenewed"
    assert alert.message.splitlines()[0].startswith(f"Lease {NS}/kai-scheduler-a100 held by")
    assert kai.scheduler_lease_name("kai-scheduler", shard("gpu", "a100")) == "kai-scheduler-a100"


def test_more_than_one_replica_and_no_lease_is_said_and_the_groups_decide() -> None:
    [alert] = judge(snapshot(), groups=[group(touched_ago=8)])
    assert alert.message.splitlines()[0] == (
        f"Lease {NS}/kai-scheduler does not exist: no replica of 2 leads."
    )


def test_off_finds_nothing() -> None:
    assert judge(snapshot(), leases=[lease(renewed_ago=60)], after=timedelta(0)) == []
