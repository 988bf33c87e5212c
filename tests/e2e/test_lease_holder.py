"""The Lease as an operator sees it, against the simulator through the official client.

Who holds it and since when (`kubectl get lease -o yaml`), whose duration counts, when a holder
that cannot renew stops acting, two replicas taking an expired Lease at the same moment, a
release on stop that never frees another replica's Lease, and the log lines that say so. The
replicas' monotonic clock is moved by hand; the wall time is only what the Lease shows.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from clocks import Clock

from bot.alerts.lease import LeaderLease
from bot.config.settings import LeaseSettings
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
WHERE = "kai-chatops/kai-chatops-alerts"
LEASE = ("coordination.k8s.io/v1", "Lease", "kai-chatops-alerts", "kai-chatops")
# `clock.at(s)` moves the replicas' monotonic clock to s and gives the wall time then, from T0.
pytestmark = [pytest.mark.clock_start(T0), pytest.mark.sim(scenarios=())]


def replica(
    gateway: Any, clock: Clock, name: str, seconds: float = 15, *, identity: bool = True
) -> LeaderLease:
    settings = LeaseSettings(enabled=True, duration=timedelta(seconds=seconds))
    return LeaderLease(
        gateway,
        settings,
        identity=f"replica-{name}" if identity else None,
        monotonic=clock.monotonic,
    )


def spec(sim: Simulator) -> dict[str, Any]:
    lease = sim.get(*LEASE)
    assert lease is not None
    return dict(lease.get("spec") or {})


def lease_log(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "bot.alerts.lease"]


async def test_the_lease_shows_who_holds_it_since_when_and_how_often_it_changed_hands(
    gateway: KubeGateway, sim: Simulator, clock: Clock
) -> None:
    a, b = replica(gateway, clock, "a"), replica(gateway, clock, "b")
    await a.renew(clock.at(0))
    assert spec(sim) == {
        "holderIdentity": "replica-a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-03-01T10:00:00.000000Z",
        "renewTime": "2026-03-01T10:00:00.000000Z",
        "leaseTransitions": 0,
    }
    await b.renew(clock.at(1))
    await a.renew(clock.at(4.25))
    assert spec(sim)["renewTime"] == "2026-03-01T10:00:04.250000Z"
    assert spec(sim)["acquireTime"] == "2026-03-01T10:00:00.000000Z"

    # a stops renewing; b sees its last renewal first at 20 s, and takes over a lease later
    assert await b.renew(clock.at(20)) is False
    assert await b.renew(clock.at(35)) is True
    assert spec(sim) == {
        "holderIdentity": "replica-b",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-03-01T10:00:35.000000Z",
        "renewTime": "2026-03-01T10:00:35.000000Z",
        "leaseTransitions": 1,
    }
    await b.release(clock.at(36))
    released = spec(sim)
    assert "holderIdentity" not in released
    assert released["renewTime"] == "2026-03-01T10:00:36.000000Z"
    assert await a.renew(clock.at(37)) is True
    assert spec(sim)["leaseTransitions"] == 2


@pytest.fixture
def local_time_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The replica's machine runs on local time (UTC-5), as some nodes do."""
    monkeypatch.setenv("TZ", "EST+5")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("local_time_zone")
async def test_the_lease_shows_utc_whatever_time_zone_the_replica_runs_in(
    gateway: KubeGateway, sim: Simulator, clock: Clock
) -> None:
    two_hours_east = timezone(timedelta(hours=2))
    await replica(gateway, clock, "a").renew(T0.astimezone(two_hours_east))
    assert spec(sim)["renewTime"] == "2026-03-01T10:00:00.000000Z"


async def test_a_replica_without_a_configured_identity_names_its_host_and_process(
    gateway: KubeGateway, sim: Simulator, clock: Clock
) -> None:
    first = replica(gateway, clock, "", identity=False)
    second = replica(gateway, clock, "", identity=False)  # a second service in one process
    await first.renew(clock.at(0))
    pattern = rf"{re.escape(socket.gethostname())}-{os.getpid()}-[0-9a-f]{{6}}"
    assert re.fullmatch(pattern, spec(sim)["holderIdentity"])
    assert first.identity != second.identity
    assert await second.renew(clock.at(1)) is False


async def test_the_holders_own_lease_duration_decides_when_it_expired(
    gateway: KubeGateway, clock: Clock
) -> None:
    slow, b = replica(gateway, clock, "slow", seconds=60), replica(gateway, clock, "b")
    await slow.renew(clock.at(0))
    assert await b.renew(clock.at(1)) is False  # b first sees the record at 1 s
    assert await b.renew(clock.at(16)) is False  # b's own 15 s do not count
    assert await b.renew(clock.at(60.9)) is False
    assert await b.renew(clock.at(61)) is True


async def test_a_one_second_lease_says_one_second_and_lapses_after_it(
    gateway: KubeGateway, sim: Simulator, clock: Clock
) -> None:
    quick, b = replica(gateway, clock, "quick", seconds=1), replica(gateway, clock, "b")
    await quick.renew(clock.at(0))
    assert spec(sim)["leaseDurationSeconds"] == 1
    assert await b.renew(clock.at(0)) is False
    assert await b.renew(clock.at(1)) is True


@pytest.mark.parametrize(
    ("lease_spec", "free_at"),
    [
        ({"holderIdentity": "another-tool"}, 15),
        ({"holderIdentity": "another-tool", "leaseDurationSeconds": 30}, 30),
        (None, 0),
    ],
    ids=["held, without a duration: ours counts", "held for 30 s", "no spec at all: free"],
)
async def test_a_lease_written_by_someone_else_is_judged_by_what_it_says(
    gateway: KubeGateway,
    sim: Simulator,
    clock: Clock,
    lease_spec: dict[str, Any] | None,
    free_at: float,
) -> None:
    metadata = {"name": "kai-chatops-alerts", "namespace": "kai-chatops"}
    lease: dict[str, Any] = {"apiVersion": LEASE[0], "kind": "Lease", "metadata": metadata}
    if lease_spec is not None:
        lease["spec"] = lease_spec
    sim.apply(lease)
    b = replica(gateway, clock, "b")
    if free_at:
        assert await b.renew(clock.at(0)) is False
        assert await b.renew(clock.at(free_at - 0.01)) is False
    assert await b.renew(clock.at(free_at)) is True
    assert spec(sim)["holderIdentity"] == "replica-b"
    assert spec(sim)["leaseTransitions"] == 1


async def test_a_holder_that_stops_renewing_stops_acting_a_third_of_a_lease_before_takeover(
    gateway: KubeGateway, clock: Clock
) -> None:
    a, b = replica(gateway, clock, "a"), replica(gateway, clock, "b")
    await a.renew(clock.at(0))
    await b.renew(clock.at(0))
    for second in (0, 5, 9.99):
        clock.at(second)
        assert a.is_leader() is True
    for second in (10, 14.99):
        clock.at(second)
        assert a.is_leader() is False
        assert await b.renew(clock.at(second)) is False  # nobody acts in between: safe
    assert await b.renew(clock.at(15)) is True


class ReadTogether:
    """The gateway, but a read of the Lease returns only once every replica read it: replicas
    that saw the same record write at the same moment, each naming the version it read."""

    def __init__(self, gateway: KubeGateway, replicas: int) -> None:
        self._gateway = gateway
        self._barrier = asyncio.Barrier(replicas)

    async def get_object(self, *args: Any) -> Any:
        found = await self._gateway.get_object(*args)
        await self._barrier.wait()
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._gateway, name)


async def test_two_replicas_taking_an_expired_lease_at_once_elect_one(
    gateway: KubeGateway, sim: Simulator, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.alerts.lease")
    a = replica(gateway, clock, "a")
    together = ReadTogether(gateway, 2)
    b, c = replica(together, clock, "b"), replica(together, clock, "c")
    await a.renew(clock.at(0))
    assert await asyncio.gather(b.renew(clock.at(1)), c.renew(clock.at(1))) == [False, False]

    won = await asyncio.gather(b.renew(clock.at(16)), c.renew(clock.at(16)))

    assert sorted(won) == [False, True]
    winner = "replica-b" if won[0] else "replica-c"
    assert spec(sim)["holderIdentity"] == winner
    assert spec(sim)["leaseTransitions"] == 1
    assert [b.is_leader(), c.is_leader()] == won
    assert lease_log(caplog) == [
        f"lease {WHERE}: created, held by replica-a",
        f"lease {WHERE}: taken over from 'replica-a'",
    ]


async def test_two_replicas_that_both_found_no_lease_elect_the_one_whose_create_landed(
    gateway: KubeGateway, sim: Simulator, clock: Clock
) -> None:
    together = ReadTogether(gateway, 2)
    b, c = replica(together, clock, "b"), replica(together, clock, "c")

    won = await asyncio.gather(b.renew(clock.at(0)), c.renew(clock.at(0)))

    assert sorted(won) == [False, True]
    assert spec(sim)["holderIdentity"] == ("replica-b" if won[0] else "replica-c")
    assert [b.is_leader(), c.is_leader()] == won


async def test_a_replica_that_lost_the_lease_leaves_the_new_holder_alone_when_it_stops(
    gateway: KubeGateway, sim: Simulator, clock: Clock
) -> None:
    a, b = replica(gateway, clock, "a"), replica(gateway, clock, "b")
    await a.renew(clock.at(0))
    await b.renew(clock.at(1))
    fault = sim.faults.add(503, resource="leases", times=None)
    assert await a.renew(clock.at(4)) is True  # its renewal failed; it still acts until 10 s
    sim.faults.active.remove(fault)
    assert await b.renew(clock.at(16)) is True
    held = spec(sim)

    await a.release(clock.at(17))

    assert spec(sim) == held


async def test_a_release_that_cannot_be_written_is_logged_and_the_lease_lapses_by_itself(
    gateway: KubeGateway, sim: Simulator, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = replica(gateway, clock, "a"), replica(gateway, clock, "b")
    await a.renew(clock.at(0))
    await b.renew(clock.at(0))
    sim.faults.add(403, resource="leases", times=1)

    await a.release(clock.at(1))

    assert a.is_leader() is False
    [said] = [m for m in lease_log(caplog) if "cannot release" in m]
    assert said.startswith(f"lease {WHERE}: cannot release: ") and "forbidden" in said
    assert await b.renew(clock.at(14.99)) is False  # still held: it expires as if a had died
    assert await b.renew(clock.at(15)) is True


async def test_a_renewal_the_api_server_refuses_is_logged_with_its_reason(
    gateway: KubeGateway, sim: Simulator, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    a = replica(gateway, clock, "a")
    sim.faults.add(403, resource="leases", times=1)
    assert await a.renew(clock.at(0)) is False
    assert a.last_error is not None
    assert lease_log(caplog) == [f"lease {WHERE}: cannot renew: {a.last_error}"]
    assert await a.renew(clock.at(1)) is True
    assert a.last_error is None
