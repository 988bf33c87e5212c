"""The scheduler stall alert against a real kube-apiserver, with deploy/'s RBAC: a leader Lease
made as KAI's scheduler makes it (client-go's LeaseLock: created, then renewed by update),
then left to age, pages the stall once `alerts.stall_after` has passed on the check's clock,
naming its holder and last renewal (in the root and in the diagnosis), and resolves once it is
renewed again. The check follows the Leases in KAI's namespace and the scheduler's Events about
PodGroups (a field selector the real server must accept) by list and watch.

The simulator is held to the same steps in tests/e2e/test_e2e_scheduler_stall.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alert_stack import HOLD, check, thread, words
from clocks import Clock
from conftest import serving_as_bot
from controlplane import ControlPlane
from kubernetes import client
from seeding import Seeder
from waiting import wait_until

from bot.kube.informer import CachedKube
from bot.service import jobs_alerts
from testbed.sim.kai_stall import scheduler_lease
from testbed.sim.scheduling_writes import pending_group
from testbed.slackemu import PostedMessage
from testbed.stack import ALERT_CHANNEL, CLUSTER, ServiceStack

pytestmark = pytest.mark.clock_from_now  # the API server stamps real times
KAI_NS = "kai-scheduler"
SCHEDULER = "kai-scheduler-default"
# A leader's identity as cmd/scheduler/app/server.go makes it: its hostname (the pod), a UUID.
HOLDER = f"{SCHEDULER}-6c9d7f8b4-k2m5q_0f8e2d6c-3b1a-4c9e-8d7f-6a5b4c3d2e1f"
STALL_AFTER = timedelta(minutes=5)


@pytest.fixture
async def stalling(
    control_plane: ControlPlane, scenario: list[dict[str, Any]], tmp_path: Path, clock: Clock
) -> AsyncIterator[ServiceStack]:
    """The default shard's scheduler with two replicas, both Ready (so it elects a leader), no
    Lease yet; the service with `stall_after: 5m`, as the bot's ServiceAccount."""
    admin = Seeder(control_plane.admin())
    admin.remove(scheduler_lease(HOLDER, clock.now))
    admin.patch("apps/v1", "Deployment", SCHEDULER, KAI_NS, {"spec": {"replicas": 2}})
    deployment = admin.read("apps/v1", "Deployment", SCHEDULER, KAI_NS)
    status = {
        "observedGeneration": deployment["metadata"]["generation"],
        "replicas": 2,
        "updatedReplicas": 2,
        "readyReplicas": 2,
        "availableReplicas": 2,
    }
    admin.write_status(deployment, status)
    config = {
        "alerts": {"hold": f"{HOLD}s", "interval": "1h", "repeat": "4h", "stall_after": "5m"},
        "state": {"path": str(tmp_path / "state.sqlite")},
    }
    async with serving_as_bot(control_plane, tmp_path, clock, config) as served:
        yield served
    admin.remove(scheduler_lease(HOLDER, clock.now))


def leases(plane: ControlPlane) -> Any:
    return client.CoordinationV1Api(plane.admin())


def elected(plane: ControlPlane, at: datetime) -> None:
    """The leader takes the Lease (create) and renews it twice (update), as LeaseLock does."""
    api = leases(plane)
    api.create_namespaced_lease(KAI_NS, scheduler_lease(HOLDER, at))
    for later in (at + timedelta(seconds=2), at + timedelta(seconds=4)):
        renew(plane, later)


def renew(plane: ControlPlane, at: datetime) -> None:
    api = leases(plane)
    stored = api.read_namespaced_lease("kai-scheduler", KAI_NS)
    stored.spec.renew_time = at
    api.replace_namespaced_lease("kai-scheduler", KAI_NS, stored)


def stall_roots(stack: ServiceStack) -> list[PostedMessage]:
    return [m for m in stack.slack.root_messages(ALERT_CHANNEL) if " Stalled: " in m.text]


async def test_a_lease_left_to_age_pages_the_stall_naming_its_holder_and_resolves_on_renewal(
    stalling: ServiceStack, clock: Clock, control_plane: ControlPlane
) -> None:
    now = clock.now.astimezone(UTC)
    elected(control_plane, now)
    await check(stalling.service)
    clock.advance(STALL_AFTER.total_seconds())  # 4 s younger than `stall_after`: not yet
    await check(stalling.service)
    assert stall_roots(stalling) == []

    clock.advance(5)  # the last renewal (now + 4 s) is `stall_after` and 1 s old
    await check(stalling.service)

    [root] = stall_roots(stalling)
    assert root.text.startswith(
        f"[CRITICAL] {CLUSTER}: Deployment {KAI_NS}/{SCHEDULER} Stalled: KAI scheduler "
        f"{SCHEDULER} stalled: {HOLDER.rpartition('_')[0]} has not renewed its Lease for 5m"
    ), root.text
    renewed = (now + timedelta(seconds=4)).strftime("%Y-%m-%d %H:%M:%S UTC")
    said = f"Lease {KAI_NS}/kai-scheduler held by {HOLDER}, last renewed {renewed}"
    assert said in words(root)
    diagnosis = thread(stalling, root)[0]
    assert said in words(diagnosis) and "has stopped scheduling (LeaseNotRenewed)" in words(
        diagnosis
    )

    renew(control_plane, clock.now)
    await check(stalling.service)
    clock.advance(HOLD)
    await check(stalling.service)
    assert thread(stalling, root)[-1].text.startswith(":white_check_mark: Resolved at")


async def test_the_check_follows_leases_and_the_schedulers_events_by_watch_as_the_bot(
    stalling: ServiceStack, clock: Clock, control_plane: ControlPlane
) -> None:
    """The bot's own token, deploy/'s RBAC: the Leases of KAI's namespace and, with a PodGroup
    pending, the Events of `involvedObject.kind=PodGroup,source=kai-scheduler` are listed and
    watched (the real server accepts the selector), so a check at rest reads them from its
    copies."""
    deps = stalling.service.deps
    admin = Seeder(control_plane.admin())
    pending = pending_group("stall-pg", "annia", 8, 1, "NotEnoughResources", "none", {}, clock.now)
    admin.replace(pending)
    reads = CachedKube(deps.kube[CLUSTER])
    try:
        await jobs_alerts.check_cluster(deps, CLUSTER, reads=reads)
        await wait_until(lambda: reads.at_rest, 30, "every copy listed and watched")
        followed = {(c.ref.plural, c.listing.field_selector) for c in reads.followed}
        assert ("leases", None) in followed
        assert ("events", "involvedObject.kind=PodGroup,source=kai-scheduler") in followed
    finally:
        await reads.close()
        admin.remove(pending)
