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
from bot.config import settings as config
from bot.config.settings import Settings
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
    full = records_to(approval_room.MAX_BYTES - 1_000, T0)  # room, but for less than one more
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


def settings_of(state: dict[str, str]) -> Settings:
    return config.parse_settings(
        {"clusters": [{"name": "a"}], "slack": {"alert_channel": "C0ALERTS"}, "state": state}
    )


async def test_the_approvals_open_beside_the_state_in_the_backend_it_names_reading_the_legacy(
    sim: Simulator, tmp_path: Path
) -> None:
    on_file = approval_store.open_store(settings_of({"path": str(tmp_path / "s.sqlite")}), None)  # type: ignore[arg-type]
    await on_file.change("7KQ2MXD4", lambda _: waiting(), T0)
    assert (tmp_path / "s.once.sqlite").exists()
    # A release before kept its records in the Confirms' ConfigMap (`-once`), beside its keys.
    legacy = {"approval-OLDOLDOL": approvals.to_json(waiting("OLDOLDOL")), "req-x": "1.0"}
    metadata = {"name": "st-once", "namespace": "kai-chatops"}
    sim.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": legacy})
    state = {"backend": "configmap", "configmap": "st", "namespace": "kai-chatops"}
    store = approval_store.open_store(settings_of(state), connect(sim, tmp_path))

    assert await store.get("OLDOLDOL") == waiting("OLDOLDOL")
    assert await store.records() == [waiting("OLDOLDOL")]
    approved = await store.change(
        "OLDOLDOL", lambda found: approvals.approve(found, "OLDOLDOL", "UOK", T0), T0
    )

    ours = sim.get("v1", "ConfigMap", "st-approvals", "kai-chatops") or {}
    assert ours["data"] == {"approval-OLDOLDOL": approvals.to_json(approved)}
    assert await store.get("OLDOLDOL") == approved  # its own over the legacy one
    assert await store.records() == [approved]


async def test_an_approvals_configmap_the_cluster_refuses_or_keeps_changing_is_unavailable(
    sim: Simulator, tmp_path: Path
) -> None:
    store = ConfigMapApprovals(connect(sim, tmp_path), namespace="kai-chatops", name="st")
    sim.faults.add(403, resource="configmaps", times=1)
    refused = r"^approvals ConfigMap: cluster sim: .* not allowed to get configmaps"
    with pytest.raises(ApprovalsUnavailable, match=refused):
        await store.get("7KQ2MXD4")
    sim.faults.add(409, verb="patch", resource="configmaps", times=None)
    await store.change("7KQ2MXD4", lambda _: waiting(), T0)  # created: no patch yet

    for write in (
        store.change("7KQ2MXD4", lambda found: approvals.cancel(found, "7KQ2MXD4", "U", T0), T0),
        store.prune(T0 + timedelta(days=2)),
    ):
        with pytest.raises(ApprovalsUnavailable, match=r"^approvals kept changing under us$"):
            await write


async def test_a_sqlite_file_that_cannot_be_opened_is_unavailable_naming_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "not-a-dir").write_text("x")
    store = SqliteApprovals(str(tmp_path / "not-a-dir" / "s.once.sqlite"))

    with pytest.raises(ApprovalsUnavailable, match=r"^approvals file .*not-a-dir"):
        await store.get("7KQ2MXD4")


async def test_sqlite_keeps_each_records_end_for_the_releases_before_that_read_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.once.sqlite"
    await SqliteApprovals(str(path)).change("7KQ2MXD4", lambda _: waiting(), T0)

    with sqlite3.connect(path) as db:
        (until,) = db.execute("SELECT until FROM approvals").fetchone()
    assert until == (T0 + approvals.LIFETIME + approval_room.KEPT).timestamp()
