"""Alert state survives restarts and refuses lost updates: SQLite file and ConfigMap backends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.alerts import machine as alerts
from bot.alerts.model import (
    AlertKey,
    AlertState,
    ClusterAlerts,
    Observation,
    RootStatus,
    Severity,
    dump_cluster,
    load_cluster,
)
from bot.alerts.store import (
    NEW,
    AlertStore,
    ConfigMapStore,
    SqliteStore,
    StoreConflict,
    StoreUnavailable,
    open_store,
)
from bot.config import settings as config
from bot.kube.gateway import KubeGateway
from bot.sim import Simulator

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
    root_status=RootStatus.POSTED,
    root_channel="C0ALERTS",
    root_ts="1700000000.000100",
    acked_by="U0ONCALL",
    acked_at=T0 + timedelta(minutes=2),
    silenced_by="U0ONCALL",
    silenced_until=T0 + timedelta(hours=1),
    silence_reason="node drain, back at 11",
    last_reminder=T0 + timedelta(minutes=5),
)
STATE = ClusterAlerts("prod", {KEY: FIRING}, failures=2, last_error="connection refused")


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SqliteStore]:
    store = SqliteStore(str(tmp_path / "state" / "alerts.sqlite"))
    yield store
    store.close()


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with Simulator(scenarios=["kai-healthy"]) as running:
        yield running


def configmap_store(gateway: KubeGateway) -> ConfigMapStore:
    return ConfigMapStore(gateway, namespace="kai-chatops", name="kai-chatops-state")


def test_every_field_of_an_alert_survives_the_json_round_trip() -> None:
    assert load_cluster("prod", dump_cluster(STATE)) == STATE


def test_a_document_that_is_not_ours_is_refused() -> None:
    with pytest.raises(ValueError, match="schema"):
        load_cluster("prod", '{"alerts": []}')


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


async def test_configmap_state_is_written_to_one_key_per_cluster(
    gateway: KubeGateway, sim: Simulator
) -> None:
    store = configmap_store(gateway)
    await store.save(STATE, (await store.load("prod")).version)
    staging = ClusterAlerts("staging", failures=1, last_error="timeout")
    await store.save(staging, (await store.load("staging")).version)

    stored = sim.get("v1", "ConfigMap", "kai-chatops-state", "kai-chatops")
    assert stored is not None
    assert set(stored["data"]) == {"prod.json", "staging.json"}
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
