"""The alert store as the service uses it: versions chain, nothing is written for no change,
damage says where its text is kept, and a ConfigMap write whose answer was lost is not redone.

SQLite on a temporary file, and the ConfigMap in the simulator through the official client.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sim_gateway import AnswerLost
from state_shards import caught_up, shard

from bot.alerts.document import dump_cluster
from bot.alerts.model import AlertKey, AlertState, ClusterAlerts, Observation, Severity
from bot.alerts.store import (
    NEW,
    AlertStore,
    ConfigMapStore,
    Damage,
    SqliteStore,
    StoreConflict,
    StoreUnavailable,
    open_store,
    update,
)
from bot.config import settings as config
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator

KEY = AlertKey("prod", "Config", "kai-config", "DependenciesFulfilled")
STATE = ClusterAlerts(
    "prod",
    {
        KEY: AlertState(
            Observation(KEY, Severity.CRITICAL, "DependenciesFulfilled is False"),
            first_seen=datetime(2026, 3, 1, 10, 0, tzinfo=UTC),
        )
    },
    failures=1,
    last_error="connection refused",
)
CM = shard("prod")  # the ConfigMap of prod's alert state
DAMAGED = '{"schema": 2, "alerts": 7}'


pytestmark = pytest.mark.sim(scenarios=["kai-healthy"])


async def no_wait(seconds: float) -> None:
    """The store's pause between tries of a write: not waited in tests."""


def configmap_store(kube: Any, **kw: Any) -> ConfigMapStore:
    return ConfigMapStore(kube, namespace="kai-chatops", name="kai-chatops-state", **kw)


def stores(tmp_path: Path, gateway: KubeGateway) -> dict[str, AlertStore]:
    return {
        "sqlite": SqliteStore(str(tmp_path / "alerts.sqlite")),
        "configmap": configmap_store(gateway, sleep=no_wait),
    }


@pytest.mark.parametrize("backend", ["sqlite", "configmap"])
async def test_each_save_returns_the_version_the_next_save_names(
    backend: str, tmp_path: Path, gateway: KubeGateway
) -> None:
    store = stores(tmp_path, gateway)[backend]
    first = await store.save(ClusterAlerts("prod"), NEW)
    second = await store.save(STATE, first)
    third = await store.save(replace(STATE, failures=2), second)
    stored = await store.load("prod")
    assert (stored.version, stored.state.failures) == (third, 2)
    with pytest.raises(StoreConflict):
        await store.save(STATE, second)
    store.close()


@pytest.mark.parametrize("backend", ["sqlite", "configmap"])
async def test_a_change_that_changes_nothing_writes_nothing(
    backend: str, tmp_path: Path, gateway: KubeGateway
) -> None:
    store = stores(tmp_path, gateway)[backend]
    await store.save(STATE, NEW)
    before = (await store.load("prod")).version
    assert await update(store, "prod", lambda s: (s, "seen")) == "seen"
    assert (await store.load("prod")).version == before
    store.close()


class ContendedStore:
    """A store another replica writes to between every load and save of ours."""

    def __init__(self, path: str) -> None:
        self.mine, self.theirs = SqliteStore(path), SqliteStore(path)
        self.saves = 0

    async def load(self, cluster: str) -> Any:
        return await self.mine.load(cluster)

    async def save(self, state: ClusterAlerts, version: str, *, aside: Damage | None = None) -> str:
        self.saves += 1
        theirs = await self.theirs.load(state.cluster)
        await self.theirs.save(replace(theirs.state, failures=self.saves), theirs.version)
        return await self.mine.save(state, version, aside=aside)

    def close(self) -> None:
        self.mine.close()
        self.theirs.close()


async def test_a_state_that_keeps_changing_under_us_is_given_up_with_a_message(
    tmp_path: Path,
) -> None:
    store = ContendedStore(str(tmp_path / "alerts.sqlite"))
    await store.theirs.save(ClusterAlerts("prod"), NEW)
    with pytest.raises(StoreUnavailable) as given_up:
        await update(store, "prod", lambda s: (replace(s, last_error="mine"), None))
    assert str(given_up.value) == "alert state of prod kept changing under us; try again"
    assert store.saves == 5
    store.close()


async def test_sqlite_damage_says_where_its_text_is_kept_and_the_log_says_why(
    store: SqliteStore, caplog: pytest.LogCaptureFixture
) -> None:
    await store.save(STATE, NEW)
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE alert_state SET body = ?", (DAMAGED,))
    stored = await store.load("prod")
    assert stored.damage == Damage(
        DAMAGED, "expected a list, found int", f"table alert_state_damaged of {store.path}"
    )
    assert stored.state == ClusterAlerts("prod")
    assert [r.getMessage() for r in caplog.records if r.name == "bot.alerts.store"] == [
        "alert state of prod is unreadable (expected a list, found int); starting from empty state"
    ]


async def test_configmap_damage_says_where_its_text_is_kept(
    gateway: KubeGateway, sim: Simulator
) -> None:
    store = configmap_store(gateway)
    await store.save(STATE, NEW)
    sim.patch(*CM, patch={"data": {"prod.json": DAMAGED}})
    await caught_up(store, sim, "prod")
    damage = (await store.load("prod")).damage
    assert damage is not None
    assert damage.kept_at == "key prod.damaged.json of ConfigMap kai-chatops/kai-chatops-state-prod"


async def test_configmap_without_this_clusters_key_is_its_empty_state(
    gateway: KubeGateway, sim: Simulator
) -> None:
    store = configmap_store(gateway)
    nothing = await store.load("prod")
    assert (nothing.state, nothing.version, nothing.damage) == (ClusterAlerts("prod"), NEW, None)
    await store.save(replace(STATE, alerts={}, cluster="staging"), NEW)

    stored = await store.load("prod")
    assert (stored.state, stored.damage) == (ClusterAlerts("prod"), None)
    await store.save(STATE, stored.version)
    for cluster in ("prod", "staging"):
        configmap = sim.get(*shard(cluster))
        assert configmap is not None
        assert sorted(configmap["data"]) == [f"{cluster}.json"]


async def test_the_state_configmap_is_labelled_as_ours(
    gateway: KubeGateway, sim: Simulator
) -> None:
    await configmap_store(gateway).save(STATE, NEW)
    configmap = sim.get(*CM)
    assert configmap is not None
    assert configmap["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "kai-chatops"}


async def test_a_configmap_write_whose_answer_was_lost_counts_once_it_is_found_stored(
    gateway: KubeGateway, sim: Simulator
) -> None:
    store = configmap_store(AnswerLost(gateway), sleep=no_wait)
    first = await store.save(ClusterAlerts("prod"), NEW)

    version = await store.save(STATE, first)

    configmap = sim.get(*CM)
    assert configmap is not None
    assert version == configmap["metadata"]["resourceVersion"]
    assert configmap["data"]["prod.json"] == dump_cluster(STATE)
    assert await store.save(replace(STATE, failures=2), version)  # the version chains on


async def test_a_configmap_write_whose_answer_was_lost_and_then_overwritten_conflicts(
    gateway: KubeGateway, sim: Simulator
) -> None:
    theirs = configmap_store(gateway)
    theirs_state = replace(STATE, last_error="written by another replica")

    async def another_replica_writes(seconds: float) -> None:
        await theirs.save(theirs_state, (await theirs.load("prod")).version)

    store = configmap_store(AnswerLost(gateway), sleep=another_replica_writes)
    first = await store.save(ClusterAlerts("prod"), NEW)
    with pytest.raises(StoreConflict):
        await store.save(STATE, first)
    assert (await theirs.load("prod")).state == theirs_state


async def test_a_lost_write_that_cannot_be_read_back_is_unavailable_not_a_conflict(
    gateway: KubeGateway, sim: Simulator
) -> None:
    async def reads_fail_from_now_on(seconds: float) -> None:
        sim.faults.add(503, resource="configmaps", verb="get", times=None)

    store = configmap_store(AnswerLost(gateway), sleep=reads_fail_from_now_on)
    first = await store.save(ClusterAlerts("prod"), NEW)
    with pytest.raises(StoreUnavailable) as unknown:
        await store.save(STATE, first)
    assert str(unknown.value).startswith("alert state ConfigMap: ")


async def test_a_configmap_write_that_keeps_failing_is_tried_four_times_and_logged(
    gateway: KubeGateway, sim: Simulator, caplog: pytest.LogCaptureFixture
) -> None:
    waits: list[float] = []

    async def wait(seconds: float) -> None:
        waits.append(seconds)

    store = configmap_store(gateway, sleep=wait)
    first = await store.save(ClusterAlerts("prod"), NEW)
    sim.faults.add(503, resource="configmaps", verb="patch", times=None)
    with pytest.raises(StoreUnavailable) as failed:
        await store.save(STATE, first)
    assert str(failed.value).startswith("alert state ConfigMap: ")
    assert waits == [0.5, 1.0, 2.0]
    said = [r.getMessage() for r in caplog.records if r.name == "bot.alerts.store"]
    assert len(said) == 3
    assert said[0].startswith("alert state ConfigMap: ")
    assert said[0].endswith("; writing again in 0.5s")
    assert str(failed.value).removeprefix("alert state ConfigMap: ") in said[0]


async def test_a_configmap_write_the_api_server_forbids_is_unavailable_not_retried(
    gateway: KubeGateway, sim: Simulator
) -> None:
    store = configmap_store(gateway, sleep=no_wait)
    first = await store.save(ClusterAlerts("prod"), NEW)
    sim.faults.add(403, resource="configmaps", verb="patch", times=1)
    with pytest.raises(StoreUnavailable, match=r"^alert state ConfigMap: .*forbidden"):
        await store.save(STATE, first)


async def test_a_missing_namespace_is_named_not_taken_for_a_conflict(
    gateway: KubeGateway, sim: Simulator
) -> None:
    # What the NamespaceLifecycle admission plugin answers a create in a namespace that is gone.
    sim.faults.add(
        404, resource="configmaps", verb="create", message='namespaces "kai-chatops" not found'
    )
    with pytest.raises(StoreUnavailable) as missing:
        await configmap_store(gateway).save(STATE, NEW)
    assert str(missing.value).startswith("alert state ConfigMap: namespace kai-chatops: ")


async def test_a_sqlite_write_that_fails_names_the_file(store: SqliteStore) -> None:
    version = await store.save(STATE, NEW)
    with sqlite3.connect(store.path) as db:  # the file was replaced by something else
        db.execute("DROP TABLE alert_state")
    with pytest.raises(StoreUnavailable) as failed:
        await store.save(STATE, version)
    assert str(failed.value).startswith(f"alert state file {store.path}: ")


async def test_the_store_the_settings_name_is_the_one_written(
    tmp_path: Path, gateway: KubeGateway, sim: Simulator
) -> None:
    path = tmp_path / "state" / "alerts.sqlite"
    base = {"clusters": [{"name": "prod"}], "slack": {"alert_channel": "C0ALERTS"}}
    on_disk = config.parse_settings({**base, "state": {"path": str(path)}})
    in_cluster = config.parse_settings(
        {**base, "state": {"backend": "configmap", "configmap": "alerts-here"}}
    )
    for settings in (on_disk, in_cluster):
        store = open_store(settings, gateway)
        await store.save(STATE, NEW)
        store.close()
    assert path.exists()
    assert sim.get("v1", "ConfigMap", "alerts-here-prod", "kai-chatops") is not None
