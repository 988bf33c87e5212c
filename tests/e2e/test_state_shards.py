"""The ConfigMap alert store at fleet scale, against the simulator: one ConfigMap per cluster,
read through one watched copy (a check at rest asks the API server nothing), a conflict read
again with a GET, the legacy shared ConfigMap of the release before mirrored while it exists,
and the byte budget said in the channel and counted, never stopping a page.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from alert_fakes import SETTINGS, T0, FakeSlack, Waits, fire, make_desk
from state_documents import state as big_state
from state_shards import LEGACY, LEGACY_CM, NAMESPACE, caught_up, shard
from test_access_approval_store import waiting

from bot.access.approval_store import ConfigMapApprovals
from bot.access.approvals import Approval, approve
from bot.access.approvals import to_json as approvals_json
from bot.alerts.document import dump_cluster, load_cluster
from bot.alerts.model import ClusterAlerts
from bot.alerts.store import Budgeted, ConfigMapStore, update
from bot.alerts.usecase import AlertDesk
from bot.config import settings as config
from bot.core.metrics import Metrics
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator

pytestmark = pytest.mark.sim(scenarios=["kai-healthy"])


def store_of(kube: Any, **kw: Any) -> ConfigMapStore:
    return ConfigMapStore(kube, namespace=NAMESPACE, name=LEGACY, sleep=Waits(), **kw)


def configmap_gets(sim: Simulator) -> list[str]:
    return [
        str(r.name)
        for r in sim.requests
        if r.resource == "configmaps" and r.verb in ("get", "list")
    ]


class Unfollowed:
    """The gateway without list-then-watch (as the release before read): every load GETs."""

    def __init__(self, kube: KubeGateway) -> None:
        self.cluster = kube.cluster
        self.get_object, self.patch_object = kube.get_object, kube.patch_object
        self.create_object, self.list_objects = kube.create_object, kube.list_objects
        self.server_version, self.read_pod_log = kube.server_version, kube.read_pod_log


async def test_a_check_at_rest_makes_no_configmap_request(
    gateway: KubeGateway, sim: Simulator
) -> None:
    store = store_of(gateway)
    desk = make_desk(store, FakeSlack())
    await fire(desk, gateway, sim)  # paged: root and diagnosis delivered
    await desk.run_check(gateway, T0 + timedelta(seconds=90))
    await caught_up(store, sim, "sim")
    sim.clear_requests()
    for minute in (2, 3, 10):
        await desk.run_check(gateway, T0 + timedelta(minutes=minute))
    assert configmap_gets(sim) == []
    store.close()

    # Without the copy, as before: the document is read at every check.
    unfollowed = store_of(Unfollowed(gateway))
    desk = make_desk(unfollowed, FakeSlack())
    await desk.run_check(gateway, T0 + timedelta(minutes=11))  # a new holder's first drain
    sim.clear_requests()
    for minute in (12, 13, 14):
        await desk.run_check(gateway, T0 + timedelta(minutes=minute))
    assert len(configmap_gets(sim)) == 2 * 3  # its shard and the legacy ConfigMap, each check


async def test_a_fleet_read_at_once_at_a_start_is_one_list_not_a_get_each(
    gateway: KubeGateway, sim: Simulator
) -> None:
    """At a start every cluster's first check and first drain read its state at once, before
    the copy's first list was in: a GET each (2 079 for 1 000 clusters in bench/fleet_ha.py),
    which crowded a busy API server until it dropped the watches the checks need. The reads
    now wait for the one list."""
    fleet = [f"gpu-{i:03}" for i in range(50)]
    store = store_of(gateway)
    sim.clear_requests()
    loaded = await asyncio.gather(*(store.load(cluster) for cluster in fleet))
    assert [r.state.cluster for r in loaded] == fleet
    verbs = [r.verb for r in sim.requests if r.resource == "configmaps" and r.verb != "watch"]
    assert verbs == ["list"], verbs
    store.close()


async def test_a_fleet_read_at_rest_starts_no_task_and_copies_no_document(
    gateway: KubeGateway, sim: Simulator
) -> None:
    """With alerts grouped every check reads the whole fleet's states (twice: to fold, then to
    bring the fleet incidents up to date). Read with a task and a snapshot each, 1 001 of them
    cost 14 ms: a thousand checks an interval took 93 % of a core at rest (bench/fleet_ha.py).
    From a current copy they are answered at once, each as it was made the last time."""
    fleet = [f"gpu-{i:03}" for i in range(200)]
    store = store_of(gateway)
    for cluster in fleet[:3]:
        await store.save(ClusterAlerts(cluster, failures=1), (await store.load(cluster)).version)
    await caught_up(store, sim, *fleet[:3])
    first = await store.load_many(fleet)

    started: list[object] = []
    loop = asyncio.get_running_loop()

    def counted(loop: asyncio.AbstractEventLoop, coro: Any, **kw: Any) -> asyncio.Task[Any]:
        started.append(coro)
        return asyncio.Task(coro, loop=loop, **kw)

    loop.set_task_factory(counted)
    try:
        again = await store.load_many(fleet)
    finally:
        loop.set_task_factory(None)
    assert started == []
    assert all(a is b for a, b in zip(first, again, strict=True))
    assert [s.state.failures for s in again[:4]] == [1, 1, 1, 0]
    snapshot = store.documents.shard(fleet[0])
    assert snapshot.copied() is snapshot.copied()
    store.close()


async def test_the_fleet_incidents_and_each_cluster_have_a_configmap_of_their_own(
    gateway: KubeGateway, sim: Simulator
) -> None:
    store = store_of(gateway)
    for cluster in ("prod", "staging", "_fleet"):
        await store.save(ClusterAlerts(cluster, failures=1), (await store.load(cluster)).version)
    for cluster in ("prod", "staging", "_fleet"):
        found = sim.get(*shard(cluster))
        assert found is not None and list(found["data"]) == [f"{cluster}.json"]
    assert shard("_fleet")[2] == "kai-chatops-state--fleet"
    [one, two, fleet] = await store.load_many(["prod", "staging", "_fleet"])
    assert (one.state.failures, two.state.failures, fleet.state.cluster) == (1, 1, "_fleet")
    store.close()


async def test_a_conflict_is_read_again_with_a_get_never_from_the_copy(
    gateway: KubeGateway, sim: Simulator
) -> None:
    """The copy lags (its watch stopped, still taken as current): another replica's write is
    not in it, so the save conflicts; the step is redone on the document as the server holds
    it, not on the copy, which would conflict again and again."""
    mine, theirs = store_of(gateway), store_of(gateway)
    await mine.save(ClusterAlerts("prod"), (await mine.load("prod")).version)
    await caught_up(mine, sim, "prod")
    copy = mine.documents.watched
    assert copy._task is not None
    copy._task.cancel()  # the copy sees nothing more
    await theirs.save(ClusterAlerts("prod", failures=7), (await theirs.load("prod")).version)

    steps: list[int] = []

    def count_up(found: ClusterAlerts) -> tuple[ClusterAlerts, None]:
        steps.append(found.failures)
        return replace(found, failures=found.failures + 1), None

    await update(mine, "prod", count_up)
    assert steps == [0, 7]  # stale once, then what the server holds
    stored = sim.get(*shard("prod"))
    assert stored is not None and load_cluster("prod", stored["data"]["prod.json"]).failures == 8
    # The PATCH's answer is in the copy at once: read-your-writes.
    assert (await mine.load("prod")).state.failures == 8
    theirs.close()


async def test_while_the_legacy_configmap_exists_its_key_is_the_authority_and_mirrored_first(
    gateway: KubeGateway, sim: Simulator
) -> None:
    old = ClusterAlerts("prod", failures=2, last_error="written by the release before")
    sim.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": LEGACY,
                "namespace": NAMESPACE,
                "labels": {"app.kubernetes.io/managed-by": "kai-chatops"},
            },
            "data": {"prod.json": dump_cluster(old), "staging.json": dump_cluster(old)},
        }
    )
    store = store_of(gateway)
    loaded = await store.load("prod")
    assert loaded.state == old  # no shard yet: the legacy key is read

    mine = replace(old, failures=3)
    await store.save(mine, loaded.version)
    for where in (LEGACY_CM, shard("prod")):
        found = sim.get(*where)
        assert found is not None and found["data"]["prod.json"] == dump_cluster(mine)

    # An old replica took the Lease and wrote the legacy key only: it is what we read.
    theirs = replace(old, failures=9)
    sim.patch(*LEGACY_CM, patch={"data": {"prod.json": dump_cluster(theirs)}})
    await caught_up(store, sim, "prod")
    again = await store.load("prod")
    assert again.state == theirs
    await store.save(replace(theirs, failures=10), again.version)
    found = sim.get(*shard("prod"))
    assert found is not None and load_cluster("prod", found["data"]["prod.json"]).failures == 10

    # Deleted once every replica runs the new release: only shards, never made again.
    sim.delete("v1", "ConfigMap", LEGACY, NAMESPACE)
    await caught_up(store, sim, "prod")
    last = await store.load("prod")
    assert last.state.failures == 10
    await store.save(replace(last.state, failures=11), last.version)
    assert sim.get(*LEGACY_CM) is None
    store.close()


async def test_a_shard_written_meanwhile_is_given_what_the_legacy_configmap_holds(
    gateway: KubeGateway, sim: Simulator
) -> None:
    """Two new replicas mirror at once: one wins the legacy write, the other's shard write came
    first; the winner copies the legacy's text into the shard, so the shard is current when the
    legacy is deleted."""
    sim.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": LEGACY, "namespace": NAMESPACE},
            "data": {"prod.json": dump_cluster(ClusterAlerts("prod"))},
        }
    )
    mine = store_of(Unfollowed(gateway))
    read = await mine.load("prod")
    sim.apply(  # someone wrote the shard since our read (their legacy write came before ours)
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": shard("prod")[2], "namespace": NAMESPACE},
            "data": {"prod.json": dump_cluster(ClusterAlerts("prod", failures=1))},
        }
    )
    ours = ClusterAlerts("prod", failures=5)
    await mine.save(ours, read.version)
    found = sim.get(*shard("prod"))
    assert found is not None and found["data"]["prod.json"] == dump_cluster(ours)


async def test_reaching_the_budget_is_said_once_counted_and_never_stops_a_page(
    gateway: KubeGateway, sim: Simulator
) -> None:
    metrics, slack = Metrics(), FakeSlack()
    limit = 60_000
    store = store_of(gateway, budget=Budgeted(metrics, limit=limit, clock=lambda: T0))
    crowded = big_state(threads=300, cluster="sim")  # eviction notice threads, all told
    await store.save(crowded, (await store.load("sim")).version)
    desk = make_desk(store, slack, metrics=metrics)
    await fire(desk, gateway, sim)  # a new critical page on a cluster over its budget

    texts = [text for _, text, _ in slack.posts]
    assert any(t.startswith("[CRITICAL] sim: Config kai-config") for t in texts), texts
    assert any(t.startswith("Diagnosis of kai on sim") for t in texts), texts
    said = [t for t in texts if "reached its budget of 60,000 bytes" in t]
    assert len(said) == 1
    stored = sim.get(*shard("sim"))
    assert stored is not None and len(stored["data"]["sim.json"]) <= limit
    registry = metrics.registry
    reached = registry.get_sample_value(
        "kai_chatops_state_budget_reached_total", {"document": "sim"}
    )
    assert reached is not None and reached >= 1
    largest = registry.get_sample_value("kai_chatops_state_largest_document_bytes")
    assert largest is not None and 0 < largest <= limit
    store.close()


async def test_the_grouped_fleet_reads_every_cluster_from_the_copy(
    gateway: KubeGateway, sim: Simulator
) -> None:
    fleet = [{"name": "sim"}, *({"name": f"gpu-{i:02}"} for i in range(20))]
    alerting = {"hold": "60s", "group_clusters": 3}
    settings = config.parse_settings(
        {"clusters": fleet, "slack": {"alert_channel": "C0ALERTS"}, "alerts": alerting}
    )
    store = store_of(gateway)
    desk = AlertDesk(settings, store, FakeSlack(), Metrics(), sleep=Waits())
    await desk.run_check(gateway, T0)
    await desk.run_check(gateway, T0 + timedelta(seconds=30))
    await caught_up(store, sim, "sim")
    sim.clear_requests()
    await desk.run_check(gateway, T0 + timedelta(seconds=60))
    assert configmap_gets(sim) == []
    assert SETTINGS.state.backend == "sqlite"  # the fakes' own default is left as it was
    store.close()


async def test_approvals_a_release_before_kept_beside_the_replay_memory_are_still_read(
    gateway: KubeGateway, sim: Simulator
) -> None:
    approvals = ConfigMapApprovals(
        gateway, namespace=NAMESPACE, name=f"{LEGACY}-approvals", legacy=f"{LEGACY}-once"
    )
    assert await approvals.records() == []
    record = waiting()
    sim.apply(  # as the release before wrote it: a key of the replay memory's ConfigMap
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{LEGACY}-once", "namespace": NAMESPACE},
            "data": {f"approval-{record.id}": approvals_json(record)},
        }
    )
    assert await approvals.get(record.id) == record
    assert await approvals.records() == [record]

    def approved(found: Approval | None) -> Approval:
        assert found == record  # the step starts from the record the release before kept
        return approve(found, record.id, "UAPPROVER", T0)

    after = await approvals.change(record.id, approved, T0)
    own = sim.get("v1", "ConfigMap", f"{LEGACY}-approvals", NAMESPACE)
    assert own is not None and own["data"][f"approval-{record.id}"] == approvals_json(after)
    assert await approvals.get(record.id) == after  # ours, over the legacy copy
