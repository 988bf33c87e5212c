"""Leader election over a Lease in the simulator, fake clock: one holder, takeover, fencing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from clocks import Clock

from bot.alerts.lease import LeaderLease
from bot.config import settings as config
from bot.config.settings import LeaseSettings
from bot.kube.gateway import KubeGateway
from bot.service.deps import SlackEnv, build_deps
from testbed.sim import Simulator

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
SETTINGS = LeaseSettings(enabled=True, duration=timedelta(seconds=15))


# The replicas' monotonic clock, which the test moves; `at` also gives the wall time.
CLOCK = Clock(T0)


pytestmark = pytest.mark.sim(scenarios=())


def at(seconds: float) -> datetime:
    """Move the monotonic clock to `seconds`; the wall time then, written into the Lease."""
    return CLOCK.at(seconds)


def replicas(gateway: KubeGateway) -> tuple[LeaderLease, LeaderLease]:
    return (
        LeaderLease(gateway, SETTINGS, identity="replica-a", monotonic=CLOCK.monotonic),
        LeaderLease(gateway, SETTINGS, identity="replica-b", monotonic=CLOCK.monotonic),
    )


async def test_the_first_replica_creates_the_lease_and_the_second_waits(
    gateway: KubeGateway, sim: Simulator
) -> None:
    a, b = replicas(gateway)
    assert await a.renew(at(0)) is True
    assert await b.renew(at(0)) is False

    lease = sim.get("coordination.k8s.io/v1", "Lease", "kai-chatops-alerts", "kai-chatops")
    assert lease is not None
    assert lease["spec"]["holderIdentity"] == "replica-a"
    assert lease["spec"]["leaseDurationSeconds"] == 15


async def test_a_renewing_holder_keeps_the_lease_however_long(gateway: KubeGateway) -> None:
    a, b = replicas(gateway)
    for second in range(0, 120, 4):
        assert await a.renew(at(second)) is True
        assert await b.renew(at(second + 1)) is False


async def test_another_replica_takes_over_a_lease_period_after_the_holder_died(
    gateway: KubeGateway, sim: Simulator
) -> None:
    a, b = replicas(gateway)
    await a.renew(at(0))
    assert await b.renew(at(1)) is False  # b first sees a's record at 1s
    # a dies: no more renewals.
    assert await b.renew(at(15)) is False
    assert await b.renew(at(16)) is True

    lease = sim.get("coordination.k8s.io/v1", "Lease", "kai-chatops-alerts", "kai-chatops")
    assert lease is not None
    assert lease["spec"]["holderIdentity"] == "replica-b"
    assert lease["spec"]["leaseTransitions"] == 1


async def test_a_released_lease_is_taken_at_once(gateway: KubeGateway) -> None:
    a, b = replicas(gateway)
    await a.renew(at(0))
    await a.release(at(1))
    assert a.is_leader() is False
    assert await b.renew(at(2)) is True


async def test_a_holder_that_cannot_renew_stops_acting_before_anyone_may_take_over(
    gateway: KubeGateway, sim: Simulator
) -> None:
    a, _ = replicas(gateway)
    await a.renew(at(0))
    sim.faults.refuse_all = True
    assert await a.renew(at(4)) is True  # still within two thirds of the lease
    assert await a.renew(at(10)) is False
    assert a.is_leader() is False


async def test_a_wall_clock_step_changes_nothing_the_lease_is_timed_on_a_monotonic_clock(
    gateway: KubeGateway,
) -> None:
    a, b = replicas(gateway)
    await a.renew(at(0))
    assert await b.renew(at(1)) is False
    wall_jump = T0 + timedelta(hours=2)  # b's wall clock steps two hours ahead; 2s have passed
    CLOCK.ticks = 2
    assert await b.renew(wall_jump) is False
    assert await a.renew(at(4)) is True
    assert a.is_leader() and not b.is_leader()


async def test_two_replicas_racing_for_a_free_lease_elect_one(gateway: KubeGateway) -> None:
    a, b = replicas(gateway)
    won = await asyncio.gather(a.renew(at(0)), b.renew(at(0)))
    assert sorted(won) == [False, True]


@pytest.mark.parametrize(
    ("state", "lease", "elected"),
    [
        ({"backend": "sqlite"}, {}, False),
        ({"backend": "configmap"}, {}, True),
        ({"backend": "configmap"}, {"enabled": False}, False),
        ({"backend": "sqlite"}, {"enabled": True}, True),
    ],
    ids=["auto with a local file", "auto with the shared ConfigMap", "off", "on"],
)
def test_the_service_elects_a_leader_when_replicas_can_share_the_state(
    sim: Simulator,
    tmp_path: Path,
    state: dict[str, str],
    lease: dict[str, bool],
    elected: bool,
) -> None:
    kubeconfig = sim.write_kubeconfig(str(tmp_path / "kubeconfig"))
    raw = {
        "clusters": [{"name": "sim", "kubeconfig": kubeconfig, "context": "sim"}],
        "slack": {"alert_channel": "C0ALERTS"},
        "state": {**state, "path": str(tmp_path / "state.sqlite")},
        "lease": lease,
    }
    env = SlackEnv("xoxb-test", "secret", None, "http://127.0.0.1:9/api/")
    deps = build_deps(config.parse_settings(raw), env)
    deps.close()
    assert (deps.lease is not None) is elected
