"""What the stall check reads (`bot.alerts.stall_checks`): only what can count, since every
collection it reads is then followed by a watch kept open per cluster. The Leases only while a
shard's scheduler runs more than one replica (with one it elects no leader), the scheduler's
Events only while a PodGroup is pending; the verdicts are the same as reading everything."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from test_alerts_stall import NOW, deployment, event, group, lease, snapshot

from bot.alerts import stall_checks
from bot.core.models import RawObject
from bot.kube.kinds import ResourceRef


class Cluster:
    """A `KubeReader` holding Leases, PodGroups and Events, noting each kind it was asked for."""

    cluster = "prod"

    def __init__(self, **objects: list[Any]) -> None:
        self.objects = objects
        self.listed: list[str] = []

    async def list_objects(
        self, ref: ResourceRef, namespace: str | None = None, **_: Any
    ) -> list[RawObject]:
        self.listed.append(ref.plural)
        return list(self.objects.get(ref.plural, []))

    async def get_object(self, *_: Any) -> RawObject | None:
        raise AssertionError("the stall check only lists")


async def check(cluster: Cluster, *deployments: Any) -> stall_checks.StallCheck:
    return await stall_checks.stalled_schedulers(
        cluster,  # type: ignore[arg-type]
        snapshot(*deployments),
        NOW,
        after=timedelta(minutes=5),
        command="/kai",
    )


async def test_one_replica_and_nothing_pending_reads_only_the_podgroups() -> None:
    cluster = Cluster(leases=[lease(renewed_ago=30)], events=[event()])
    found = await check(cluster, deployment(replicas=1, ready=1))
    assert cluster.listed == ["podgroups"]
    assert found.found == ()  # a Lease left from before is nobody's: no alert either way


async def test_a_scheduler_with_two_replicas_has_its_lease_read_and_judged() -> None:
    cluster = Cluster(leases=[lease(renewed_ago=30)])
    found = await check(cluster, deployment(replicas=2, ready=2))
    assert sorted(cluster.listed) == ["leases", "podgroups"]
    assert [o.reason for o in found.found] == ["LeaseNotRenewed"]


async def test_a_pending_group_has_the_schedulers_events_read_and_a_recent_one_counts() -> None:
    pending = group(touched_ago=30, created_ago=40)
    cluster = Cluster(podgroups=[pending], events=[event(ago=1)])
    found = await check(cluster, deployment(replicas=1, ready=1))
    assert cluster.listed == ["podgroups", "events"]
    assert found.found == ()  # touched by an Event a minute ago: not stalled
    untouched = Cluster(podgroups=[pending])
    found = await check(untouched, deployment(replicas=1, ready=1))
    assert [o.reason for o in found.found] == ["PodGroupsUntouched"]
