"""The alert check use-case against the simulator: Slack failures, store races, request counts."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from alert_fakes import T0, FakeSlack, Waits, fire, make_desk

from bot.alerts.model import ClusterAlerts, RootStatus
from bot.alerts.store import SqliteStore, StoreConflict, StoreUnavailable
from bot.alerts.usecase import AlertDesk
from bot.alerts.usecase_check import CHECKS_AT_ONCE
from bot.config import settings as config
from bot.core.metrics import Metrics
from bot.kube import gateway as kube
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator, breakage


async def test_a_failing_slack_is_retried_with_backoff_then_left_owed_for_the_next_check(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    slack, waits, metrics = FakeSlack(failures=4), Waits(), Metrics()
    desk = make_desk(store, slack, waits, metrics)
    await fire(desk, gateway, sim)

    assert slack.posts == []
    assert waits.seconds == [1.0, 2.0, 4.0]
    sends = "kai_chatops_slack_sends_total"
    assert metrics.registry.get_sample_value(sends, {"outcome": "error"}) == 4
    [alert] = (await store.load("sim")).state.alerts.values()
    assert alert.root_status is RootStatus.POSTING  # still owed

    [alert] = (await store.load("sim")).state.alerts.values()
    [_, diagnosis, changes] = alert.outbox  # gathered meanwhile, waiting behind its root
    assert diagnosis.text.startswith("Diagnosis of kai on sim")
    assert changes.text.startswith("What changed before")  # this desk reads no timeline

    await desk.run_check(gateway, T0 + timedelta(seconds=90))
    [alert] = (await store.load("sim")).state.alerts.values()
    assert alert.root_status is RootStatus.POSTED
    assert alert.outbox == ()
    [(_, _, root_thread), (_, first_reply, thread), (_, second, _)] = slack.posts
    assert root_thread is None and thread == alert.root_ts
    assert first_reply.startswith("Diagnosis of kai on sim")
    assert second.startswith("What changed before")


async def test_a_root_post_that_may_have_landed_is_looked_for_not_posted_again(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    slack, waits = FakeSlack(failures=1, ambiguous=True, lands=True), Waits()
    desk = make_desk(store, slack, waits)
    await fire(desk, gateway, sim)

    root = slack.stored[0]["ts"]
    assert [thread for _, _, thread in slack.posts] == [None, root, root]
    [alert] = (await store.load("sim")).state.alerts.values()
    assert alert.root_ts == slack.stored[0]["ts"]
    assert alert.outbox == ()


async def test_the_attempt_is_saved_before_the_root_is_posted(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    seen_while_posting: list[tuple[RootStatus, str]] = []

    class Watching(FakeSlack):
        async def post(
            self,
            channel: str,
            message: Mapping[str, Any],
            *,
            thread_ts: str | None = None,
            metadata: Mapping[str, Any] | None = None,
        ) -> str:
            if thread_ts is None:  # the root, not its thread's diagnosis
                [alert] = (await store.load("sim")).state.alerts.values()
                seen_while_posting.append((alert.root_status, alert.outbox[0].attempted_by))
            return await super().post(channel, message, thread_ts=thread_ts, metadata=metadata)

    await fire(make_desk(store, Watching()), gateway, sim)
    assert seen_while_posting == [(RootStatus.POSTING, "replica-test")]
    [alert] = (await store.load("sim")).state.alerts.values()
    assert alert.root_ts == "1700000000.000001"


async def test_a_save_refused_after_another_replica_wrote_is_redone_on_fresh_state(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    class Racing:
        """Before the first save, another replica saves (as an ack on it would)."""

        def __init__(self) -> None:
            self.raced = False
            self.loads = 0

        async def load(self, cluster: str) -> Any:
            self.loads += 1
            return await store.load(cluster)

        async def save(self, state: ClusterAlerts, version: str, **_: Any) -> str:
            if not self.raced:
                self.raced = True
                await store.save(ClusterAlerts("sim", failures=0, last_error="theirs"), version)
                raise StoreConflict("changed meanwhile")
            return await store.save(state, version)

        def close(self) -> None: ...

    racing = Racing()
    desk = make_desk(racing, FakeSlack())
    breakage.dependencies_missing(sim)
    await desk.run_check(gateway, T0)
    assert racing.raced and racing.loads >= 2  # loaded again after the refused save
    [alert] = (await store.load("sim")).state.alerts.values()
    assert alert.key.condition == "DependenciesFulfilled"


async def test_a_check_makes_the_same_few_api_requests_however_big_the_cluster(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    desk = make_desk(store, FakeSlack())
    before = gateway.request_count
    await desk.run_check(gateway, T0)
    small = gateway.request_count - before

    for i in range(30):
        sim.apply(
            {
                "apiVersion": "kai.scheduler/v1",
                "kind": "SchedulingShard",
                "metadata": {"name": f"shard-{i}"},
                "spec": {"partitionLabelValue": f"p{i}"},
            }
        )
        sim.apply(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"operand-{i}", "namespace": "kai-scheduler"},
                "spec": {"replicas": 1},
            }
        )
    before = gateway.request_count
    await desk.run_check(gateway, T0 + timedelta(seconds=30))

    # The Config, the shards, the Deployments, the APIService (no CRDs); for the scheduler
    # stall rule (`alerts.stall_after`, on by default), the PodGroups (the Leases only with a
    # scheduler of more than one replica, the scheduler's Events only while a PodGroup is
    # pending: neither here); the Kustomizations (whose applied revisions it remembers for
    # /kai timeline).
    assert small == 6
    assert gateway.request_count - before == small


async def test_a_command_on_an_unknown_cluster_is_the_users_mistake(store: SqliteStore) -> None:
    desk = make_desk(store, FakeSlack())
    with pytest.raises(Exception, match="unknown cluster 'nowhere'"):
        await desk.acknowledge("abcdef", "U1", T0, cluster="nowhere")


class UnwritableStore:
    """A store that reads but cannot write (e.g. RBAC for the state ConfigMap is missing)."""

    def __init__(self, inner: SqliteStore) -> None:
        self.inner = inner
        self.broken = True

    async def load(self, cluster: str) -> Any:
        return await self.inner.load(cluster)

    async def save(self, state: ClusterAlerts, version: str, **_: Any) -> str:
        if self.broken:
            raise StoreUnavailable("alert state ConfigMap: forbidden")
        return await self.inner.save(state, version)

    def close(self) -> None:
        self.inner.close()


async def test_a_store_that_cannot_be_written_is_said_once_an_hour_then_its_recovery(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    slack, unwritable = FakeSlack(), UnwritableStore(store)
    desk = make_desk(unwritable, slack)
    breakage.dependencies_missing(sim)
    for minute in (0, 1, 2, 30, 70):  # a warning after three failing checks, hourly after
        await desk.run_check(gateway, T0 + timedelta(minutes=minute))
    unwritable.broken = False
    for minute in (71, 72, 73):  # working again: the all-clear after `hold` (60s)
        await desk.run_check(gateway, T0 + timedelta(minutes=minute))

    said = [text for _, text, _ in slack.posts if "alert state" in text]
    assert len(said) == 3
    assert all("cannot keep its alert state" in text and "forbidden" in text for text in said[:2])
    assert said[2].startswith(":white_check_mark: kai-chatops can keep its alert state")


async def test_a_replica_that_lost_the_lease_during_the_read_posts_nothing(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    slack = FakeSlack()
    desk = make_desk(store, slack)
    breakage.dependencies_missing(sim)
    await desk.run_check(gateway, T0, still_leader=lambda: False)
    await desk.run_check(gateway, T0 + timedelta(seconds=60), still_leader=lambda: False)
    assert slack.posts == []
    assert not (await store.load("sim")).state.alerts


class CountingStore:
    """The store, counting the loads and saves that go through it."""

    def __init__(self, inner: SqliteStore) -> None:
        self.inner = inner
        self.loads = self.saves = 0  # a read of many states at once counts as one load

    async def load(self, cluster: str) -> Any:
        self.loads += 1
        return await self.inner.load(cluster)

    async def load_many(self, clusters: list[str]) -> Any:
        self.loads += 1
        return await self.inner.load_many(clusters)

    async def save(self, state: ClusterAlerts, version: str, **kw: Any) -> str:
        self.saves += 1
        return await self.inner.save(state, version, **kw)

    def close(self) -> None:
        self.inner.close()


async def test_a_check_at_rest_reads_the_state_once_and_writes_nothing(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    counting, slack = CountingStore(store), FakeSlack()
    desk = make_desk(counting, slack)
    await fire(desk, gateway, sim)  # paged: the root and its diagnosis are in Slack
    [alert] = (await store.load("sim")).state.alerts.values()
    assert alert.root_ts and alert.outbox == ()
    posted, version = list(slack.posts), (await store.load("sim")).version
    counting.loads = counting.saves = 0

    minutes = (2, 3, 10, 60, 120)  # still firing, its reminder due only after `repeat` (4h)
    for minute in minutes:
        await desk.run_check(gateway, T0 + timedelta(minutes=minute))

    assert (counting.saves, counting.loads) == (0, len(minutes))
    assert (await store.load("sim")).version == version
    assert slack.posts == posted and slack.edits == []

    breakage.heal(sim)  # a check that finds a change still does all it did
    for minute in (121, 122, 123):  # clear, then resolved after `hold` (60s)
        await desk.run_check(gateway, T0 + timedelta(minutes=minute))
    assert counting.saves >= 2
    assert slack.edits[-1][1].startswith("[RESOLVED (critical)] sim: Config kai-config")
    assert not (await store.load("sim")).state.alerts


async def test_a_fleet_failing_at_once_is_regrouped_once_for_many_checks_not_after_each(
    sim: Simulator, store: SqliteStore, tmp_path: Path
) -> None:
    """Every check of a fleet failing at once asks for the fleet incidents to be brought up to
    date, and each such regrouping reads every cluster's state: run one after another, a
    thousand of them held the fleet's root back for seconds (bench/fleet_ha.py). One asked
    for while another runs is answered by the next run, which began after it."""
    names = [f"gpu-{i:02}" for i in range(20)]
    kubeconfig = sim.write_kubeconfig(str(tmp_path / "fleet"), names[0], more_contexts=names[1:])
    limits = config.KubernetesSettings(timedelta(seconds=5), retries=0)
    gateways = [kube.connect(config.ClusterSettings(n, kubeconfig, n), limits) for n in names]
    alerting = {"hold": "0s", "repeat": "4h", "group_clusters": 3, "interval": "30s"}
    settings = config.parse_settings(
        {"clusters": [{"name": n} for n in names], "slack": {"alert_channel": "C0ALERTS"},
         "alerts": alerting}
    )  # fmt: skip
    counting, slack = FleetReads(store), FakeSlack()
    desk = AlertDesk(settings, counting, slack, Metrics(), sleep=Waits())
    breakage.dependencies_missing(sim)

    await asyncio.gather(*(desk.run_check(g, T0) for g in gateways))
    await desk.run_check(gateways[0], T0 + timedelta(seconds=30))  # a straggler folded

    roots = [text for _, text, _ in slack.posts if text.startswith("[CRITICAL]")]
    assert len(roots) == 1 and re.match(r"\[CRITICAL\] \d+ clusters: gpu-", roots[0]), roots
    # Each check reads the fleet once to fold its own alerts in; the regroupings add a few.
    assert counting.fleet_reads <= len(names) + 8, counting.fleet_reads
    for g in gateways:
        g.close()


async def test_a_fleet_woken_at_once_is_judged_and_saved_a_few_checks_at_a_time(
    sim: Simulator, store: SqliteStore, tmp_path: Path
) -> None:
    """A fleet failing at once woke a thousand checks in one moment, and each turn of the event
    loop ran them all, for seconds: the Lease's renewal came too late to act on, and every
    check read every other's state before any was saved (bench/fleet_ha.py). At most
    CHECKS_AT_ONCE clusters are read, judged and saved at a time; all are still checked."""
    names = [f"gpu-{i:02}" for i in range(3 * CHECKS_AT_ONCE)]
    kubeconfig = sim.write_kubeconfig(str(tmp_path / "fleet"), names[0], more_contexts=names[1:])
    limits = config.KubernetesSettings(timedelta(seconds=5), retries=0)
    reading: set[str] = set()
    most: list[int] = [0]
    gateways = [
        AtOnce(kube.connect(config.ClusterSettings(n, kubeconfig, n), limits), reading, most)
        for n in names
    ]
    settings = config.parse_settings(
        {"clusters": [{"name": n} for n in names], "slack": {"alert_channel": "C0ALERTS"},
         "alerts": {"hold": "60s", "repeat": "4h", "interval": "30s"}}
    )  # fmt: skip
    desk = AlertDesk(settings, store, FakeSlack(), Metrics(), sleep=Waits())
    breakage.dependencies_missing(sim)

    await asyncio.gather(*(desk.run_check(g, T0) for g in gateways))

    assert 1 < most[0] <= CHECKS_AT_ONCE, most
    held = [n for n in names if (await store.load(n)).state.alerts]
    assert held == names  # each checked: its alert held
    for g in gateways:
        g.close()


class AtOnce:
    """A cluster's gateway, noting in `reading` while it is read, and in `most` how many
    clusters were read at once."""

    def __init__(self, gateway: KubeGateway, reading: set[str], most: list[int]) -> None:
        self._gateway, self._reading, self._most = gateway, reading, most
        self._reads = 0

    async def list_objects(self, *args: Any, **kw: Any) -> Any:
        return await self._read(self._gateway.list_objects(*args, **kw))

    async def get_object(self, *args: Any, **kw: Any) -> Any:
        return await self._read(self._gateway.get_object(*args, **kw))

    async def _read(self, read: Any) -> Any:
        self._reads += 1
        self._reading.add(self.cluster)
        self._most[0] = max(self._most[0], len(self._reading))
        try:
            return await read
        finally:
            self._reads -= 1
            if not self._reads:
                self._reading.discard(self.cluster)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._gateway, name)


async def test_the_clusters_a_new_fleet_incident_takes_in_are_folded_together_not_one_by_one(
    sim: Simulator, store: SqliteStore, tmp_path: Path
) -> None:
    """Clusters whose alert waited for the fleet are folded into its incident once the group
    is fleet-wide, each with a save of its own: a thousand failing at once left 612 waiting,
    and folded one after another they held the fleet's root back six seconds
    (bench/fleet_ha.py)."""
    names = [f"gpu-{i:02}" for i in range(20)]
    kubeconfig = sim.write_kubeconfig(str(tmp_path / "fleet"), names[0], more_contexts=names[1:])
    limits = config.KubernetesSettings(timedelta(seconds=5), retries=0)
    gateways = [kube.connect(config.ClusterSettings(n, kubeconfig, n), limits) for n in names]

    def desk(group_clusters: int, kept: Any, slack: FakeSlack) -> AlertDesk:
        alerting = {"hold": "0s", "repeat": "4h", "interval": "30s"}
        settings = config.parse_settings(
            {"clusters": [{"name": n} for n in names], "slack": {"alert_channel": "C0ALERTS"},
             "alerts": {**alerting, "group_clusters": group_clusters}}
        )  # fmt: skip
        return AlertDesk(settings, kept, slack, Metrics(), sleep=Waits())

    breakage.dependencies_missing(sim)
    waiting, slack = desk(len(names) + 1, store, FakeSlack()), FakeSlack()
    for g in gateways:  # never fleet-wide for this desk: each waits for the fleet
        await waiting.run_check(g, T0)
    assert slack.posts == []
    saves = SavesAtOnce(store)
    await desk(3, saves, slack).run_check(gateways[0], T0 + timedelta(seconds=1))

    [(_, root, _)] = [p for p in slack.posts if p[1].startswith("[CRITICAL]")]
    assert root.startswith(f"[CRITICAL] {len(names)} clusters:"), root
    assert saves.saves >= len(names)  # its own, then every other folded
    assert saves.most > 1, saves.most
    for g in gateways:
        g.close()


class SavesAtOnce(CountingStore):
    """The store, noting how many saves were under way at once."""

    def __init__(self, inner: SqliteStore) -> None:
        super().__init__(inner)
        self.saving = self.most = 0

    async def save(self, state: ClusterAlerts, version: str, **kw: Any) -> str:
        self.saving += 1
        self.most = max(self.most, self.saving)
        try:
            return await super().save(state, version, **kw)
        finally:
            self.saving -= 1


class FleetReads(CountingStore):
    """The store, counting the reads of every cluster's state at once."""

    def __init__(self, inner: SqliteStore) -> None:
        super().__init__(inner)
        self.fleet_reads = 0

    async def load_many(self, clusters: list[str]) -> Any:
        self.fleet_reads += 1
        return await super().load_many(clusters)


def grouped_fleet_desk(store: Any, slack: FakeSlack) -> AlertDesk:
    """A desk of `sim` and twenty more clusters, alerts grouped by three, a minute's hold."""
    fleet = [{"name": "sim"}, *({"name": f"gpu-{i:02}"} for i in range(20))]
    alerting = {"hold": "60s", "repeat": "4h", "group_clusters": 3, "interval": "30s"}
    settings = config.parse_settings(
        {"clusters": fleet, "slack": {"alert_channel": "C0ALERTS"}, "alerts": alerting}
    )
    return AlertDesk(settings, store, slack, Metrics(), sleep=Waits())


async def test_with_alerts_grouped_a_check_at_rest_reads_the_fleet_at_once_and_writes_nothing(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    counting, slack = CountingStore(store), FakeSlack()
    desk = grouped_fleet_desk(counting, slack)
    breakage.dependencies_missing(sim)
    for seconds in (0, 60, 120):  # held, then waited two intervals for the fleet: pages alone
        await desk.run_check(gateway, T0 + timedelta(seconds=seconds))
    [(_, root, _), (_, diagnosis, _), (_, changes, _)] = slack.posts
    assert root.startswith("[CRITICAL] sim: Config kai-config") and "Diagnosis" in diagnosis
    assert changes.startswith("What changed before")
    counting.loads = counting.saves = 0

    minutes = (3, 10, 60)
    for minute in minutes:
        await desk.run_check(gateway, T0 + timedelta(minutes=minute))

    assert counting.saves == 0 and len(slack.posts) == 3
    # its own state (looked at, then stepped), the fleet's incidents, every cluster's twice
    assert counting.loads == 5 * len(minutes)


async def test_with_alerts_grouped_a_check_where_nothing_fires_reads_no_other_cluster_to_fold(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    """Folding a cluster's alerts into the fleet's looks at every other cluster, and only a
    firing alert is ever folded: a fleet at rest, or a fleet failing at once while its holds
    run, read all thousand states at each check for nothing (bench/fleet_ha.py). The fleet
    is still read once, to bring its incidents up to date."""
    counting, slack = FleetReads(store), FakeSlack()
    desk = grouped_fleet_desk(counting, slack)
    await desk.run_check(gateway, T0)  # healthy
    breakage.dependencies_missing(sim)
    await desk.run_check(gateway, T0 + timedelta(seconds=30))  # held: not firing yet
    assert counting.fleet_reads == 2  # the regroupings only
    await desk.run_check(gateway, T0 + timedelta(seconds=90))  # fires: folded or waiting
    assert counting.fleet_reads == 2 + 2
    assert slack.posts == []  # it waits for the fleet


async def test_with_alerts_grouped_nothing_firing_is_regrouped_once_an_interval_not_each_check(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    """Bringing the fleet incidents up to date reads every cluster's state, and does nothing
    while no alert fires anywhere and no fleet incident is kept: a fleet failing at once
    first saves a thousand alerts whose holds run, and a regrouping after each of those
    checks took two thirds of the holder's time while the checks that would fire waited
    (bench/fleet_ha.py). Every state is still read once an interval (another replica may
    have written them), and at once when an alert fires."""
    counting, slack = FleetReads(store), FakeSlack()
    desk = grouped_fleet_desk(counting, slack)
    await desk.run_check(gateway, T0)  # healthy: the first regrouping reads every state
    assert counting.fleet_reads == 1
    breakage.dependencies_missing(sim)
    for seconds in (10, 20):  # held: nothing fires anywhere
        await desk.run_check(gateway, T0 + timedelta(seconds=seconds))
    assert counting.fleet_reads == 1
    await desk.run_check(gateway, T0 + timedelta(seconds=31))  # an interval since: read again
    assert counting.fleet_reads == 2
    await desk.run_check(gateway, T0 + timedelta(seconds=75))  # fires: folded, then regrouped
    assert counting.fleet_reads == 2 + 2
    assert slack.posts == []  # it waits for the fleet
