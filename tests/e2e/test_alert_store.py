"""Alert state survives restarts and refuses lost updates: SQLite file and ConfigMap backends.

A damaged document is kept aside and loads as empty state; a guarded write that got a 5xx is
sent again, and counts as done when the document holds exactly what it wrote.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from state_shards import LEGACY_CM, caught_up, shard

from bot.alerts import machine as alerts
from bot.alerts.document import LEGACY_ATTEMPT, DamagedState, dump_cluster, load_cluster
from bot.alerts.model import (
    AlertKey,
    AlertState,
    ClusterAlerts,
    EffectKind,
    Note,
    NoteKind,
    Observation,
    Owed,
    RootStatus,
    Severity,
)
from bot.alerts.store import (
    NEW,
    AlertStore,
    ConfigMapStore,
    Damage,
    SqliteStore,
    StoreConflict,
    Stored,
    StoreUnavailable,
    open_store,
    update,
)
from bot.config import settings as config
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
KEY = AlertKey("prod", "APIService", "v1beta1.external.metrics.k8s.io", "Available")
FIRING = AlertState(
    observation=Observation(
        KEY,
        Severity.CRITICAL,
        "Available is False (MissingEndpoints), backed by Service keda/keda-metrics port 443",
        "MissingEndpoints",
        'endpointslices for service/keda-metrics in "keda" have no addresses',
        "No ready pod backs Service keda/keda-metrics",
        since=T0 - timedelta(minutes=3),
    ),
    first_seen=T0,
    firing_since=T0 + timedelta(minutes=1),
    root_channel="C0ALERTS",
    root_ts="1700000000.000100",
    acked_by="U0ONCALL",
    acked_at=T0 + timedelta(minutes=2),
    silenced_by="U0ONCALL",
    silenced_until=T0 + timedelta(hours=1),
    silence_reason="node drain, back at 11",
    last_reminder=T0 + timedelta(minutes=5),
    outbox=(
        Owed(
            "prod/abc/1:2",
            EffectKind.REPLY,
            Note(NoteKind.SILENCED, T0, "U0ONCALL", "drain", T0 + timedelta(hours=1), False),
            attempt="a1b2c3",
            attempted_by="replica-a",
            attempted_at=T0 + timedelta(minutes=2),
        ),
        Owed("prod/abc/1:edit", EffectKind.EDIT),
        Owed(
            "prod/abc/1:3",
            EffectKind.REPLY,
            Note(NoteKind.DIAGNOSIS, T0),
            text="Diagnosis of keda on prod: Degraded",
            blocks=({"type": "header", "text": {"type": "plain_text", "text": "Diagnosis"}},),
        ),
    ),
    owed_count=4,
    delivered={"prod/abc/1:1": "1700000000.000200"},
)
RESOLVED = replace(FIRING, resolved_at=T0 + timedelta(hours=2), outbox=FIRING.outbox[1:])
STATE = ClusterAlerts(
    "prod",
    {KEY: FIRING},
    failures=2,
    last_error="connection refused",
    closing=(RESOLVED,),
    notices=(Owed("prod:damaged:1", EffectKind.NOTICE, text="kept aside"),),
)


pytestmark = pytest.mark.sim(scenarios=["kai-healthy"])


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SqliteStore]:
    store = SqliteStore(str(tmp_path / "state" / "alerts.sqlite"))
    yield store
    store.close()


def configmap_store(gateway: KubeGateway) -> ConfigMapStore:
    return ConfigMapStore(gateway, namespace="kai-chatops", name="kai-chatops-state")


def test_every_field_of_an_alert_survives_the_json_round_trip() -> None:
    assert load_cluster("prod", dump_cluster(STATE)) == STATE


def test_a_document_that_is_not_ours_is_refused() -> None:
    with pytest.raises(DamagedState, match="schema"):
        load_cluster("prod", '{"alerts": []}')


DAMAGED = {
    "failures is a list": '{"schema": 2, "failures": [3], "alerts": []}',
    "not JSON": '{"schema": 2, "alerts": [',
    "an alert without its observation": '{"schema": 2, "alerts": [{"first_seen": "2026"}]}',
    "alerts is a number": '{"schema": 2, "alerts": 7}',
    "a reply without its note": dump_cluster(STATE).replace('"note": {', '"nothing": {', 1),
    "a stored block that is not a mapping": dump_cluster(STATE).replace(
        '"blocks": [{', '"blocks": ["x", {', 1
    ),
    "a bad time": dump_cluster(STATE).replace("2026-03-01T10:00:00+00:00", "yesterday", 1),
}


@pytest.mark.parametrize("text", list(DAMAGED.values()), ids=list(DAMAGED))
def test_every_decoding_error_is_one_damaged_state_error(text: str) -> None:
    with pytest.raises(DamagedState):
        load_cluster("prod", text)


def test_a_schema_1_root_that_was_being_posted_is_owed_and_looked_for_first() -> None:
    old = json.loads(dump_cluster(ClusterAlerts("prod", {KEY: replace(FIRING, outbox=())})))
    old["schema"] = 1
    old["alerts"][0] |= {"root_status": "posting", "root_ts": "", "outbox": None}
    [alert] = load_cluster("prod", json.dumps(old)).alerts.values()
    assert alert.root_status is RootStatus.POSTING
    [root] = alert.outbox
    assert (root.kind, root.attempt, root.effect_id) == (
        EffectKind.ROOT,
        LEGACY_ATTEMPT,
        f"{alert.incident}:0",
    )


async def test_sqlite_keeps_a_damaged_document_aside_and_starts_from_empty_state(
    sqlite_store: SqliteStore,
) -> None:
    await sqlite_store.save(STATE, NEW)
    damaged = DAMAGED["failures is a list"]
    with sqlite3.connect(sqlite_store.path) as db:
        db.execute("UPDATE alert_state SET body = ?", (damaged,))
    stored = await sqlite_store.load("prod")
    assert stored.state == ClusterAlerts("prod")
    assert stored.damage is not None and "failures" in stored.damage.reason

    said = await update(sqlite_store, "prod", lambda s: (s, None), repair=_noted)
    assert said is None
    assert (await sqlite_store.load("prod")).state == _noted(ClusterAlerts("prod"), stored.damage)
    with sqlite3.connect(sqlite_store.path) as db:
        [(kept,)] = db.execute("SELECT body FROM alert_state_damaged").fetchall()
    assert kept == damaged


def _noted(state: ClusterAlerts, damage: Damage) -> ClusterAlerts:
    return replace(state, last_error=f"damaged: {damage.reason}")


async def test_sqlite_state_survives_a_new_store_on_the_same_file(
    sqlite_store: SqliteStore, tmp_path: Path
) -> None:
    version = await sqlite_store.save(STATE, (await sqlite_store.load("prod")).version)
    sqlite_store.close()

    restarted = SqliteStore(sqlite_store.path)
    stored = await restarted.load("prod")
    restarted.close()

    assert stored.state == STATE
    assert stored.version == version


async def test_sqlite_creates_its_file_only_when_first_used(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "alerts.sqlite"
    store = SqliteStore(str(path))
    assert not path.exists()
    assert (await store.load("prod")).state == ClusterAlerts("prod")
    store.close()
    assert path.exists()


async def test_sqlite_refuses_a_save_from_a_stale_read(sqlite_store: SqliteStore) -> None:
    other = SqliteStore(sqlite_store.path)  # another replica on the same volume
    await sqlite_store.save(ClusterAlerts("prod"), NEW)
    mine, theirs = await sqlite_store.load("prod"), await other.load("prod")

    await other.save(STATE, theirs.version)
    with pytest.raises(StoreConflict):
        await sqlite_store.save(replace(STATE, failures=0), mine.version)
    other.close()

    assert (await sqlite_store.load("prod")).state == STATE


async def test_sqlite_refuses_a_second_first_save(sqlite_store: SqliteStore) -> None:
    await sqlite_store.save(STATE, NEW)
    with pytest.raises(StoreConflict):
        await sqlite_store.save(ClusterAlerts("prod"), NEW)


async def test_clusters_are_kept_apart(sqlite_store: SqliteStore) -> None:
    await sqlite_store.save(STATE, NEW)
    assert (await sqlite_store.load("staging")).state == ClusterAlerts("staging")


async def test_an_unreadable_file_is_reported_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "alerts.sqlite"
    path.write_text("this is not a database")
    store = SqliteStore(str(path))
    with pytest.raises(StoreUnavailable, match=r"alerts\.sqlite"):
        await store.load("prod")
    store.close()


async def test_configmap_state_is_written_to_one_configmap_per_cluster(
    gateway: KubeGateway, sim: Simulator
) -> None:
    store = configmap_store(gateway)
    await store.save(STATE, (await store.load("prod")).version)
    staging = ClusterAlerts("staging", failures=1, last_error="timeout")
    await store.save(staging, (await store.load("staging")).version)

    for cluster in ("prod", "staging"):
        stored = sim.get(*shard(cluster))
        assert stored is not None
        assert set(stored["data"]) == {f"{cluster}.json"}
    assert sim.get(*LEGACY_CM) is None  # no shared ConfigMap: none existed before
    assert (await configmap_store(gateway).load("prod")).state == STATE
    assert (await store.load("staging")).state == staging


async def test_configmap_refuses_a_save_from_a_stale_read(gateway: KubeGateway) -> None:
    mine, theirs = configmap_store(gateway), configmap_store(gateway)
    await mine.save(ClusterAlerts("prod"), NEW)
    read_mine, read_theirs = await mine.load("prod"), await theirs.load("prod")

    await theirs.save(STATE, read_theirs.version)
    with pytest.raises(StoreConflict):
        await mine.save(replace(STATE, failures=0), read_mine.version)


async def test_configmap_created_by_two_replicas_at_once_conflicts(gateway: KubeGateway) -> None:
    await configmap_store(gateway).save(STATE, NEW)
    with pytest.raises(StoreConflict):
        await configmap_store(gateway).save(ClusterAlerts("prod"), NEW)


async def test_configmap_keeps_a_damaged_document_under_its_own_key(
    gateway: KubeGateway, sim: Simulator
) -> None:
    store = configmap_store(gateway)
    await store.save(STATE, NEW)
    damaged = DAMAGED["not JSON"]
    cm = shard("prod")
    sim.patch(*cm, patch={"data": {"prod.json": damaged}})
    await caught_up(store, sim, "prod")
    await update(store, "prod", lambda s: (s, None), repair=_noted)

    stored = sim.get(*cm)
    assert stored is not None
    assert stored["data"]["prod.damaged.json"] == damaged
    assert load_cluster("prod", stored["data"]["prod.json"]).last_error.startswith("damaged")


async def test_a_guarded_write_that_got_a_503_is_sent_again(
    gateway: KubeGateway, sim: Simulator
) -> None:
    waits: list[float] = []

    async def wait(seconds: float) -> None:
        waits.append(seconds)

    store = ConfigMapStore(gateway, namespace="kai-chatops", name="kai-chatops-state", sleep=wait)
    await store.save(ClusterAlerts("prod"), NEW)
    sim.faults.add(503, resource="configmaps", verb="patch", times=1)
    await store.save(STATE, (await store.load("prod")).version)
    assert (await store.load("prod")).state == STATE
    assert waits == [0.5]


async def test_configmap_api_errors_become_store_errors(
    gateway: KubeGateway, sim: Simulator
) -> None:
    sim.faults.add(403, resource="configmaps", times=None)
    with pytest.raises(StoreUnavailable, match=r"forbidden|not allowed"):
        await configmap_store(gateway).load("prod")


def test_the_backend_is_chosen_by_state_backend(tmp_path: Path, gateway: KubeGateway) -> None:
    base = {"clusters": [{"name": "prod"}], "slack": {"alert_channel": "C0ALERTS"}}
    sqlite = config.parse_settings({**base, "state": {"path": str(tmp_path / "a.sqlite")}})
    in_cluster = config.parse_settings({**base, "state": {"backend": "configmap"}})

    chosen: list[AlertStore] = [open_store(sqlite, gateway), open_store(in_cluster, gateway)]

    assert isinstance(chosen[0], SqliteStore)
    assert isinstance(chosen[1], ConfigMapStore)
    assert chosen[1].namespace == "kai-chatops"


async def test_a_saved_step_of_the_machine_reads_back_the_same(sqlite_store: SqliteStore) -> None:
    policy = alerts.Policy(timedelta(0), timedelta(hours=4), 3, "C0ALERTS")
    fired = alerts.observe(ClusterAlerts("prod"), [FIRING.observation], T0, policy)
    await sqlite_store.save(fired.state, NEW)
    assert (await sqlite_store.load("prod")).state == fired.state


async def test_a_file_written_before_bot_state_is_read_and_its_damage_kept_as_then(
    tmp_path: Path,
) -> None:
    path = tmp_path / "alerts.sqlite"
    with sqlite3.connect(path) as db:  # the tables as every earlier release made them
        db.execute(
            "CREATE TABLE alert_state ("
            "cluster TEXT PRIMARY KEY, version INTEGER NOT NULL, body TEXT NOT NULL)"
        )
        db.execute(
            "CREATE TABLE alert_state_damaged (cluster TEXT NOT NULL, "
            "kept_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, reason TEXT, body TEXT)"
        )
        db.execute("INSERT INTO alert_state VALUES ('prod', 7, ?)", (dump_cluster(STATE),))
        db.execute("INSERT INTO alert_state VALUES ('staging', 3, ?)", (DAMAGED["not JSON"],))
    store = SqliteStore(str(path))
    assert await store.load("prod") == Stored(STATE, "7")
    damage = (await store.load("staging")).damage
    assert damage is not None
    await update(store, "staging", lambda s: (s, None), repair=_noted)
    assert (await store.load("staging")).version == "4"
    store.close()
    with sqlite3.connect(path) as db:
        kept = db.execute("SELECT cluster, reason, body FROM alert_state_damaged").fetchall()
    assert kept == [("staging", damage.reason, DAMAGED["not JSON"])]


async def test_a_document_another_replica_changed_is_read_anew_not_from_the_last_decoded(
    sqlite_store: SqliteStore, gateway: KubeGateway, sim: Simulator
) -> None:
    for mine, theirs in (
        (sqlite_store, SqliteStore(sqlite_store.path)),
        (configmap_store(gateway), configmap_store(gateway)),
    ):
        await mine.save(STATE, (await mine.load("prod")).version)
        assert (await mine.load("prod")).state == STATE  # decoded, and kept with its text
        assert (await mine.load("prod")).state == STATE  # the same text: the same state

        changed = replace(STATE, failures=0, last_error="")
        version = await theirs.save(changed, (await theirs.load("prod")).version)
        theirs.close()
        if isinstance(mine, ConfigMapStore):  # another replica's write reaches the copy
            await caught_up(mine, sim, "prod")
        assert await mine.load("prod") == Stored(changed, version)
