"""The memory of what may happen once (requests, Confirms): each backend, shared, expiring."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sim_gateway import connect

from bot.access import grouped, once
from bot.access.grouped import GroupedClaims
from bot.access.once import (
    BatchStore,
    Claim,
    ConfigMapOnce,
    MemoryOnce,
    OnceStore,
    OnceUnavailable,
    SqliteOnce,
)
from bot.config import settings as config
from bot.state import retry
from testbed.sim import Simulator

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
LATER = T0 + timedelta(minutes=5)
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kai-chatops"}}
Make = Callable[[], OnceStore]


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with Simulator(scenarios=["kai-healthy"]) as running:
        running.apply(NAMESPACE)
        yield running


def configmap_once(sim: Simulator, tmp_path: Path) -> ConfigMapOnce:
    return ConfigMapOnce(connect(sim, tmp_path), namespace="kai-chatops", name="state-once")


def stored(sim: Simulator) -> dict[str, Any]:
    return sim.get("v1", "ConfigMap", "state-once", "kai-chatops") or {}


@pytest.fixture(params=["memory", "sqlite", "configmap", "sqlite grouped", "configmap grouped"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Make:
    """A maker of stores sharing one memory (one process's memory for `memory`); "grouped" is
    each shared store as the service uses it, its concurrent claims grouped into one write."""
    if request.param == "memory":
        shared = MemoryOnce()
        return lambda: shared
    make_store = batch_stores(request, tmp_path, request.param.split()[0])
    if request.param.endswith("grouped"):
        return lambda: GroupedClaims(make_store())
    return make_store


def batch_stores(
    request: pytest.FixtureRequest, tmp_path: Path, backend: str
) -> Callable[[], BatchStore]:
    if backend == "sqlite":
        return lambda: SqliteOnce(str(tmp_path / "state.once.sqlite"))
    sim = request.getfixturevalue("sim")
    gateway = connect(sim, tmp_path)
    return lambda: ConfigMapOnce(gateway, namespace="kai-chatops", name="state-once")


class CountingStore:
    """A shared store that counts its writes."""

    def __init__(self, store: BatchStore) -> None:
        self.store, self.writes = store, 0

    async def claim(self, key: str, until: datetime, now: datetime) -> bool:
        return (await self.claim_all([Claim(key, until, now)]))[0]

    async def claim_all(self, claims: Sequence[Claim]) -> list[bool]:
        self.writes += 1
        return await self.store.claim_all(claims)

    def close(self) -> None:
        self.store.close()


async def test_a_key_is_claimed_once_until_its_time_then_free_again(make: Make) -> None:
    store = make()
    assert await store.claim("req-a", LATER, T0)
    assert not await store.claim("req-a", LATER, T0 + timedelta(minutes=4))
    assert await store.claim("req-b", LATER, T0)
    assert await store.claim("req-a", LATER + timedelta(minutes=5), LATER)
    store.close()


async def test_every_store_on_the_same_state_shares_the_memory(make: Make) -> None:
    first, second = make(), make()
    assert await first.claim("confirm-n1", LATER, T0)
    assert not await second.claim("confirm-n1", LATER, T0)
    first.close()
    second.close()


@pytest.mark.parametrize("first", [True, False], ids=["memory exists", "memory is new"])
async def test_of_racing_claims_exactly_one_wins(make: Make, first: bool) -> None:
    if first:
        assert await make().claim("req-earlier", LATER, T0)
    stores = [make() for _ in range(4)]
    won = await asyncio.gather(*(s.claim("req-race", LATER, T0) for s in stores))
    assert sorted(won) == [False, False, False, True]


@pytest.fixture(params=["sqlite", "configmap"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], BatchStore]:
    return batch_stores(request, tmp_path, request.param)


async def test_claims_made_at_once_are_one_write_each_answered_as_if_claimed_in_turn(
    make_store: Callable[[], BatchStore],
) -> None:
    """What a burst of commands does: claims made together are one write."""
    counting = CountingStore(make_store())
    store = GroupedClaims(counting)
    keys = [f"req-{i % 30}" for i in range(40)]  # ten of them twice: replays in the same burst
    won = await asyncio.gather(*(store.claim(key, LATER, T0) for key in keys))
    assert won == [True] * 30 + [False] * 10
    assert counting.writes == 1
    other_replica = GroupedClaims(make_store())
    assert not any(await asyncio.gather(*(other_replica.claim(k, LATER, T0) for k in keys)))


async def test_two_replicas_bursting_on_one_configmap_lose_no_claim_to_conflicts(
    sim: Simulator, tmp_path: Path
) -> None:
    """Ungrouped, 40 claims racing on one ConfigMap mostly end in 409s and are given up."""
    first, second = (GroupedClaims(configmap_once(sim, tmp_path)) for _ in range(2))
    claims = [(first if i % 2 else second).claim(f"req-{i}", LATER, T0) for i in range(40)]
    assert all(await asyncio.gather(*claims))
    assert len(stored(sim)["data"]) == 40


async def test_a_failed_write_fails_every_claim_in_it_and_the_next_write_is_tried_afresh(
    sim: Simulator, tmp_path: Path
) -> None:
    store = GroupedClaims(configmap_once(sim, tmp_path))
    sim.faults.add(503, resource="configmaps", times=1)
    failed = await asyncio.gather(
        *(store.claim(f"req-{i}", LATER, T0) for i in range(3)), return_exceptions=True
    )
    assert [type(result) for result in failed] == [OnceUnavailable] * 3
    assert await store.claim("req-0", LATER, T0)


async def test_expiry_is_kept_per_space_each_with_its_own_clock(make: Make) -> None:
    store = make()
    assert await store.claim("confirm-n1", LATER, T0)
    # A request claimed a day later (another clock) does not expire the confirmation.
    assert await store.claim("req-x", T0 + timedelta(days=1, minutes=5), T0 + timedelta(days=1))
    assert not await store.claim("confirm-n1", LATER, T0 + timedelta(minutes=1))


async def test_a_configmap_value_that_cannot_be_read_counts_as_expired(
    sim: Simulator, tmp_path: Path
) -> None:
    store = configmap_once(sim, tmp_path)
    assert await store.claim("req-a", LATER, T0)
    sim.patch("v1", "ConfigMap", "state-once", "kai-chatops", patch={"data": {"req-a": "soon"}})
    assert await store.claim("req-a", LATER, T0)
    kept = stored(sim)
    assert kept["data"]["req-a"] == repr(LATER.timestamp())
    assert kept["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "kai-chatops"}


async def test_expired_keys_are_dropped_from_the_configmap_the_others_kept(
    sim: Simulator, tmp_path: Path
) -> None:
    store = configmap_once(sim, tmp_path)
    assert await store.claim("req-old", T0 + timedelta(seconds=1), T0)
    assert await store.claim("req-kept", LATER, T0)
    assert await store.claim("req-new", LATER, T0 + timedelta(seconds=1))
    kept = stored(sim)
    assert set(kept["data"]) == {"req-kept", "req-new"}
    assert not await store.claim("req-kept", LATER, T0 + timedelta(seconds=2))


async def test_the_configmap_is_created_as_the_api_server_expects_it(
    sim: Simulator, tmp_path: Path
) -> None:
    store = configmap_once(sim, tmp_path)
    assert await store.claim("req-a", LATER, T0)
    [create] = [r for r in sim.requests if r.verb == "create"]
    assert create.body == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "state-once",
            "namespace": "kai-chatops",
            "labels": {"app.kubernetes.io/managed-by": "kai-chatops"},
        },
        "data": {"req-a": repr(LATER.timestamp())},
    }


async def test_a_configmap_the_cluster_refuses_is_unavailable(
    sim: Simulator, tmp_path: Path
) -> None:
    store = configmap_once(sim, tmp_path)
    sim.faults.add(403, resource="configmaps", times=None)
    with pytest.raises(OnceUnavailable, match="request memory ConfigMap"):
        await store.claim("req-a", LATER, T0)


async def test_a_configmap_that_keeps_changing_is_unavailable(
    sim: Simulator, tmp_path: Path
) -> None:
    store = configmap_once(sim, tmp_path)
    assert await store.claim("req-a", LATER, T0)
    sim.faults.add(409, verb="patch", resource="configmaps", times=None)
    with pytest.raises(OnceUnavailable) as unavailable:
        await store.claim("req-b", LATER, T0)
    assert str(unavailable.value) == "request memory ConfigMap kept changing under us"
    hits = [r for r in sim.requests if r.verb == "patch" and r.resource == "configmaps"]
    assert len(hits) == retry.CONFLICT_TRIES


async def test_a_sqlite_file_that_cannot_be_written_is_unavailable(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    store = SqliteOnce(str(blocker / "state.once.sqlite"))
    with pytest.raises(OnceUnavailable, match="request memory file"):
        await store.claim("req-a", LATER, T0)


async def test_a_sqlite_memory_is_created_in_new_directories_and_closed_for_good(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a" / "b" / "state.once.sqlite"
    store = SqliteOnce(str(path))
    assert await store.claim("req-a", LATER, T0)
    store.close()
    store.close()
    path.unlink()
    assert await store.claim("req-a", LATER, T0)  # a fresh file: the old one was let go
    store.close()


def test_a_keys_space_is_what_comes_before_its_first_dash() -> None:
    assert once.space_of("req-a-b") == "req"
    assert once.space_of("confirm-0a1b") == "confirm"


def test_the_memory_lives_beside_the_alert_state_in_the_backend_it_names(tmp_path: Path) -> None:
    assert once.sqlite_path("/var/lib/kai/state.sqlite") == "/var/lib/kai/state.once.sqlite"
    assert once.sqlite_path("state") == "state.once.sqlite"
    assert once.configmap_name("kai-chatops-state") == "kai-chatops-state-once"
    settings = config.parse_settings(
        {"clusters": [{"name": "a"}], "slack": {"alert_channel": "C0ALERTS"},
         "state": {"path": str(tmp_path / "s.sqlite")}}
    )  # fmt: skip
    opened = grouped.open_once(settings, None).store  # type: ignore[arg-type]
    assert isinstance(opened, SqliteOnce) and opened.path == str(tmp_path / "s.once.sqlite")
    in_cluster = config.parse_settings(
        {"clusters": [{"name": "a"}], "slack": {"alert_channel": "C0ALERTS"},
         "state": {"backend": "configmap", "configmap": "mine", "namespace": "ops"}}
    )  # fmt: skip
    shared = grouped.open_once(in_cluster, None).store  # type: ignore[arg-type]
    assert isinstance(shared, ConfigMapOnce)
    assert (shared.namespace, shared.name) == ("ops", "mine-once")


async def test_the_configmap_memory_is_opened_on_the_given_cluster(
    sim: Simulator, tmp_path: Path
) -> None:
    in_cluster = config.parse_settings(
        {"clusters": [{"name": "a"}], "slack": {"alert_channel": "C0ALERTS"},
         "state": {"backend": "configmap", "namespace": "kai-chatops"}}
    )  # fmt: skip
    store = grouped.open_once(in_cluster, connect(sim, tmp_path))
    assert await store.claim("req-a", LATER, T0)
    assert sim.get("v1", "ConfigMap", "kai-chatops-state-once", "kai-chatops") is not None


async def test_claims_that_came_while_a_write_failed_go_in_the_next_write() -> None:
    class FirstWriteFails:
        """A shared memory whose first write fails, once claims have come in meanwhile."""

        def __init__(self) -> None:
            self.writing, self.go_on, self.writes = asyncio.Event(), asyncio.Event(), 0

        async def claim(self, key: str, until: datetime, now: datetime) -> bool:
            return (await self.claim_all([Claim(key, until, now)]))[0]

        async def claim_all(self, claims: Sequence[Claim]) -> list[bool]:
            self.writes += 1
            if self.writes == 1:
                self.writing.set()
                await self.go_on.wait()
                raise OnceUnavailable("the first write failed")
            return [True for _ in claims]

        def close(self) -> None:
            """Nothing to release."""

    shared = FirstWriteFails()
    store = GroupedClaims(shared)
    first = asyncio.create_task(store.claim("req-a", LATER, T0))
    await asyncio.wait_for(shared.writing.wait(), 5)
    second = asyncio.create_task(store.claim("req-b", LATER, T0))
    shared.go_on.set()
    with pytest.raises(OnceUnavailable):
        await first
    assert await asyncio.wait_for(second, 5)


def brimful(until: str, room: int = 0) -> dict[str, str]:
    """Request keys (expiring `until`) taking exactly `once.MAX_BYTES - room` bytes."""
    target = once.MAX_BYTES - room
    each = once.stored_bytes({f"req-{0:064x}": until}) - 1  # `"k":"v",` with its comma
    data = {f"req-{n:064x}": until for n in range((target - 2) // each - 1)}
    last = f"req-{len(data):064x}"
    data[last] = until
    data[last] = until + "0" * (target - once.stored_bytes(data))  # the same expiry, longer
    assert once.stored_bytes(data) == target
    return data


async def test_a_full_configmap_memory_refuses_new_keys_until_they_expire_and_stays_under_1_mib(
    sim: Simulator, tmp_path: Path
) -> None:
    # Issue 22: ~36 signed requests a second for 6 minutes filled the ConfigMap past 1 MiB, and
    # then every claim failed. Full is now a stated state: new keys are refused (OnceFull, so a
    # change says "try again" and a read runs) until the keys in their window expire.
    new, until = f"req-{'f' * 64}", repr(LATER.timestamp())
    room = once.stored_bytes({**brimful(until), new: until}) - once.MAX_BYTES  # one key's size
    seeded = brimful(until, room)  # room for exactly one more key
    sim.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "state-once", "namespace": "kai-chatops"},
            "data": seeded,
        }
    )
    store = GroupedClaims(configmap_once(sim, tmp_path))
    assert await store.claim(new, LATER, T0)  # to the brim: MAX_BYTES exactly
    assert once.stored_bytes(stored(sim)["data"]) == once.MAX_BYTES < 1024 * 1024
    with pytest.raises(once.OnceFull, match="is full"):
        await store.claim(f"req-{'e' * 64}", LATER + timedelta(minutes=5), T0)
    assert set(stored(sim)["data"]) == {*seeded, new}
    assert not await store.claim(new, LATER, T0)  # a replay is still caught

    # Once the window has passed, the expired keys go with the next claim: room again.
    assert await store.claim(f"req-{'e' * 64}", LATER + timedelta(minutes=5), LATER)
    assert set(stored(sim)["data"]) == {f"req-{'e' * 64}"}


def confirms_to_the_brim(until: str, room: int) -> dict[str, str]:
    """Confirm keys expiring `until`, and one key that is no expiry (an approval record a
    release before kept here), taking `once.MAX_BYTES - room` bytes."""
    data = {"approval-7KQ2MXD4": '{"id":"7KQ2MXD4","state":"waiting"}'}
    each = once.stored_bytes({f"confirm-{0:016x}": until}) - 1
    data |= {f"confirm-{n:016x}": until for n in range((once.MAX_BYTES - room - 200) // each)}
    pad = once.MAX_BYTES - room - once.stored_bytes({**data, "confirm-pad": ""})
    data["confirm-pad"] = until + "0" * (pad - len(until))  # the same expiry, longer
    assert once.stored_bytes(data) == once.MAX_BYTES - room
    return data


@pytest.mark.parametrize(
    ("expiry", "frees"),
    [(T0, True), (T0 + timedelta(microseconds=1), False)],
    ids=["past-at-the-claim", "a-moment-after-it"],
)
async def test_a_full_configmap_memory_drops_every_key_past_its_time_whatever_its_space(
    sim: Simulator, tmp_path: Path, expiry: datetime, frees: bool
) -> None:
    # Issue 36: a claim dropped only the expired keys of its own space, so Confirms past their
    # time (and approval records a release before kept here) took a request's room for good.
    new = f"req-{'f' * 64}"
    seeded = confirms_to_the_brim(repr(expiry.timestamp()), room=10)
    sim.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "state-once", "namespace": "kai-chatops"},
            "data": {**seeded, "confirm-live": repr(LATER.timestamp())},
        }
    )
    store = configmap_once(sim, tmp_path)

    if not frees:
        with pytest.raises(
            once.OnceFull, match=r"^request memory ConfigMap kai-chatops/state-once"
        ):
            await store.claim(new, LATER, T0)
        return
    assert await store.claim(new, LATER, T0)
    assert set(stored(sim)["data"]) == {"confirm-live", new}


async def test_a_memory_with_room_keeps_other_spaces_keys_past_their_time(
    sim: Simulator, tmp_path: Path
) -> None:
    store = configmap_once(sim, tmp_path)
    assert await store.claim("confirm-old", T0 + timedelta(seconds=1), T0)

    assert await store.claim("req-new", LATER, T0 + timedelta(minutes=1))

    assert set(stored(sim)["data"]) == {"confirm-old", "req-new"}  # its own space's to drop
