"""The memory of changes waiting for approval, on each backend: kept by two replicas at once
(two stores over one SQLite file, or one ConfigMap in the simulator), ended exactly once, and
beside the used Confirms without disturbing them."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from approval_records import largest_waiting, records_to
from sim_gateway import connect

from bot.access import approval_room, approval_store, approvals
from bot.access.approval_store import (
    PREFIX,
    ApprovalStore,
    ApprovalsUnavailable,
    ConfigMapApprovals,
    SqliteApprovals,
)
from bot.access.approvals import Approval
from bot.access.confirmations import new_pending
from bot.access.once import ConfigMapOnce, OnceStore, SqliteOnce
from bot.core import errors
from bot.state import sqlite as sqlite_state
from testbed.sim import Simulator

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kai-chatops"}}
Make = Callable[[], ApprovalStore]


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with Simulator(scenarios=["kai-healthy"]) as running:
        running.apply(NAMESPACE)
        yield running


@pytest.fixture(params=["sqlite", "configmap"])
def replicas(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[Make, Callable[[], OnceStore]]:
    """A maker of stores sharing one memory, as two replicas do, and of the Confirms' memory
    beside it."""
    if request.param == "sqlite":
        path = str(tmp_path / "state.once.sqlite")
        return lambda: SqliteApprovals(path), lambda: SqliteOnce(path)
    sim: Simulator = request.getfixturevalue("sim")
    where = {"namespace": "kai-chatops", "name": "state-once"}
    return (
        lambda: ConfigMapApprovals(connect(sim, tmp_path), **where),
        lambda: ConfigMapOnce(connect(sim, tmp_path), **where),
    )


def waiting(change_id: str = "7KQ2MXD4", now: datetime = T0) -> Approval:
    pending = new_pending(
        "pause", {"kind": "ScaledJob", "cluster": "prod"}, user_id="UASK", channel_id="C1", now=now
    )
    return approvals.new_approval(
        pending,
        channel_id="C1",
        what="pause ScaledJob on prod",
        lines=(),
        now=now,
        change_id=change_id,
    )


async def test_two_replicas_approving_at_once_approve_once(
    replicas: tuple[Make, Callable[[], OnceStore]],
) -> None:
    make, _ = replicas
    first, second = make(), make()
    await first.change("7KQ2MXD4", lambda _: waiting(), T0)

    def by(user: str) -> Callable[[Approval | None], Approval]:
        return lambda found: approvals.approve(found, "7KQ2MXD4", user, T0)

    results = await asyncio.gather(
        first.change("7KQ2MXD4", by("UONE"), T0),
        second.change("7KQ2MXD4", by("UTWO"), T0),
        return_exceptions=True,
    )

    won = [r for r in results if isinstance(r, Approval)]
    lost = [r for r in results if isinstance(r, errors.UserError)]
    assert len(won) == 1 and len(lost) == 1, results
    assert "already approved by" in str(lost[0])
    kept = await make().get("7KQ2MXD4")
    assert kept is not None and (kept.state, kept.decided_by) == ("approved", won[0].decided_by)


async def test_a_refused_step_keeps_the_record_as_it_was_and_confirms_are_untouched(
    replicas: tuple[Make, Callable[[], OnceStore]],
) -> None:
    make, make_once = replicas
    store, confirms = make(), make_once()
    assert await confirms.claim("confirm-abc", T0 + timedelta(minutes=5), T0)
    await store.change("7KQ2MXD4", lambda _: waiting(), T0)

    with pytest.raises(errors.UserError, match="you cannot approve it"):
        await store.change(
            "7KQ2MXD4", lambda found: approvals.approve(found, "7KQ2MXD4", "UASK", T0), T0
        )

    assert (await store.get("7KQ2MXD4")) == waiting()
    assert await store.get("NOSUCHID") is None
    later = T0 + timedelta(minutes=1)
    assert not await confirms.claim("confirm-abc", later + timedelta(minutes=5), later)


async def test_records_are_dropped_a_day_after_they_expired(
    replicas: tuple[Make, Callable[[], OnceStore]],
) -> None:
    make, _ = replicas
    store = make()
    await store.change("OLDOLDOL", lambda _: waiting("OLDOLDOL"), T0)
    much_later = T0 + timedelta(days=1, minutes=16)

    await store.change("NEWNEWNE", lambda _: waiting("NEWNEWNE", much_later), much_later)

    assert await store.get("OLDOLDOL") is None
    assert await store.get("NEWNEWNE") is not None


async def test_sqlite_takes_the_write_lock_before_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another replica's step cannot slip in between this one's read and write: it waits for
    the lock (here cut short), so the record it would have approved from is never stale."""
    monkeypatch.setattr(sqlite_state, "BUSY_TIMEOUT", 0.05)
    path = str(tmp_path / "state.once.sqlite")
    first, second = SqliteApprovals(path), SqliteApprovals(path)
    await first.change("7KQ2MXD4", lambda _: waiting(), T0)
    meanwhile: list[object] = []

    def approve_while_the_other_replica_tries(found: Approval | None) -> Approval:
        other = second.change(
            "7KQ2MXD4", lambda seen: approvals.approve(seen, "7KQ2MXD4", "UTWO", T0), T0
        )
        try:
            meanwhile.append(asyncio.run(other))  # the other replica, while this one holds it
        except ApprovalsUnavailable as e:
            meanwhile.append(e)
        return approvals.approve(found, "7KQ2MXD4", "UONE", T0)

    await first.change("7KQ2MXD4", approve_while_the_other_replica_tries, T0)

    assert isinstance(meanwhile[0], ApprovalsUnavailable), meanwhile
    kept = await second.get("7KQ2MXD4")
    assert kept is not None and kept.decided_by == "UONE"


Seed = Callable[[dict[str, str]], None]


@pytest.fixture(params=["sqlite", "configmap"])
def seeded(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[ApprovalStore, Seed]:
    """A store of each backend, and how to put records in it as another replica left them."""
    if request.param == "sqlite":
        path = str(tmp_path / "state.once.sqlite")

        def seed_rows(data: dict[str, str]) -> None:
            with sqlite3.connect(path) as db:
                db.execute(approval_store.SQLITE_TABLE)
                rows = [(k.removeprefix(PREFIX), 0.0, v) for k, v in data.items()]
                db.executemany("INSERT INTO approvals (id, until, body) VALUES (?, ?, ?)", rows)

        return SqliteApprovals(path), seed_rows
    sim: Simulator = request.getfixturevalue("sim")

    def seed_configmap(data: dict[str, str]) -> None:
        metadata = {"name": "state-approvals", "namespace": "kai-chatops"}
        sim.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data})

    where = {"namespace": "kai-chatops", "name": "state-approvals"}
    return ConfigMapApprovals(connect(sim, tmp_path), **where), seed_configmap


async def test_a_full_memory_keeps_no_new_request_until_one_no_longer_runs(
    seeded: tuple[ApprovalStore, Seed],
) -> None:
    store, seed = seeded
    full = records_to(approval_room.MAX_BYTES, T0)
    seed(full)
    new = largest_waiting(999, T0)

    with pytest.raises(errors.UserError, match=f"^{len(full)} changes are waiting for approval"):
        await store.change(new.id, lambda _: new, T0)
    assert await store.get(new.id) is None
    oldest = sorted(full)[0].removeprefix(PREFIX)
    await store.change(oldest, lambda found: approvals.cancel(found, oldest, "UASK", T0), T0)

    await store.change(new.id, lambda _: new, T0)

    assert await store.get(oldest) is None  # the cancelled record gave way
    assert await store.get(new.id) == new
    assert len(await store.records()) == len(full)


async def test_pruning_drops_what_expired_a_day_ago_and_nothing_else(
    seeded: tuple[ApprovalStore, Seed],
) -> None:
    store, seed = seeded
    seed(records_to(20_000, T0) | records_to(20_000, T0 + timedelta(minutes=1), first=100))
    kept = await store.records()
    day = T0 + approvals.LIFETIME + approval_room.KEPT

    await store.prune(day)

    assert await store.records() == [r for r in kept if r.requested_at > T0]
    await store.prune(day)  # nothing left to drop: nothing written
