"""The alert check use-case against the simulator: Slack failures, store races, request counts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.alerts.desk import AlertDesk
from bot.alerts.model import ClusterAlerts, RootStatus
from bot.alerts.store import SqliteStore, StoreConflict, StoreUnavailable
from bot.config import settings as config
from bot.core.metrics import Metrics
from bot.kube.gateway import KubeGateway
from bot.sim import Simulator, breakage
from bot.slack.gateway import SlackUnavailable

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
SETTINGS = config.parse_settings(
    {
        "clusters": [{"name": "sim"}],
        "slack": {"alert_channel": "C0ALERTS"},
        "alerts": {"hold": "60s", "repeat": "4h"},
    }
)


@dataclass
class FakeSlack:
    """Records posts and edits; fails the next `failures` calls."""

    failures: int = 0
    ambiguous: bool = False  # fail as a timeout would: the post may have landed
    posts: list[tuple[str, str, str | None]] = field(default_factory=list)
    edits: list[tuple[str, str]] = field(default_factory=list)

    async def post(
        self, channel: str, message: Mapping[str, Any], *, thread_ts: str | None = None
    ) -> str:
        self._maybe_fail()
        self.posts.append((channel, str(message["text"]), thread_ts))
        return f"1700000000.{len(self.posts):06d}"

    async def update(self, channel: str, ts: str, message: Mapping[str, Any]) -> None:
        self._maybe_fail()
        self.edits.append((ts, str(message["text"])))

    def _maybe_fail(self) -> None:
        if self.failures:
            self.failures -= 1
            raise SlackUnavailable("Slack chat_postMessage failed", ambiguous=self.ambiguous)


class Waits:
    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with Simulator(scenarios=["kai-healthy", "keda"]) as running:
        yield running


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(str(tmp_path / "alerts.sqlite"))
    yield opened
    opened.close()


def make_desk(
    store: Any, slack: FakeSlack, waits: Waits | None = None, metrics: Metrics | None = None
) -> AlertDesk:
    return AlertDesk(SETTINGS, store, slack, metrics or Metrics(), sleep=waits or Waits())


async def fire(desk: AlertDesk, gateway: KubeGateway, sim: Simulator) -> None:
    breakage.dependencies_missing(sim)
    await desk.run_check(gateway, T0)
    await desk.run_check(gateway, T0 + timedelta(seconds=60))


async def test_a_failing_slack_is_retried_with_backoff_then_counted_and_tried_next_check(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    slack, waits, metrics = FakeSlack(failures=4), Waits(), Metrics()
    desk = make_desk(store, slack, waits, metrics)
    await fire(desk, gateway, sim)

    assert slack.posts == []
    assert waits.seconds == [1.0, 2.0, 4.0]
    sends = "kai_chatops_slack_sends_total"
    assert metrics.registry.get_sample_value(sends, {"outcome": "error"}) == 1
    [alert] = (await store.load("sim")).state.alerts.values()
    assert alert.root_status is RootStatus.NONE

    await desk.run_check(gateway, T0 + timedelta(seconds=90))
    assert len(slack.posts) == 1
    [alert] = (await store.load("sim")).state.alerts.values()
    assert alert.root_status is RootStatus.POSTED


async def test_a_root_post_that_may_have_landed_is_not_retried_blindly(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    slack, waits = FakeSlack(failures=1, ambiguous=True), Waits()
    desk = make_desk(store, slack, waits)
    await fire(desk, gateway, sim)
    assert slack.posts == []
    assert waits.seconds == []


async def test_the_intent_is_saved_before_the_root_is_posted(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    seen_while_posting: list[RootStatus] = []

    class Watching(FakeSlack):
        async def post(
            self, channel: str, message: Mapping[str, Any], *, thread_ts: str | None = None
        ) -> str:
            [alert] = (await store.load("sim")).state.alerts.values()
            seen_while_posting.append(alert.root_status)
            return await super().post(channel, message, thread_ts=thread_ts)

    await fire(make_desk(store, Watching()), gateway, sim)
    assert seen_while_posting == [RootStatus.POSTING]
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

        async def save(self, state: ClusterAlerts, version: str) -> str:
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
    assert racing.loads == 2
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

    assert small == 5
    assert gateway.request_count - before == small


async def test_a_command_on_an_unknown_cluster_is_the_users_mistake(store: SqliteStore) -> None:
    desk = make_desk(store, FakeSlack())
    with pytest.raises(Exception, match="unknown cluster 'nowhere'"):
        await desk.acknowledge("abcdef", "U1", T0, cluster="nowhere")


class UnwritableStore:
    """A store that reads but cannot write (e.g. RBAC for the state ConfigMap is missing)."""

    def __init__(self, inner: SqliteStore) -> None:
        self.inner = inner

    async def load(self, cluster: str) -> Any:
        return await self.inner.load(cluster)

    async def save(self, state: ClusterAlerts, version: str) -> str:
        raise StoreUnavailable("alert state ConfigMap: forbidden")

    def close(self) -> None:
        self.inner.close()


async def test_a_store_that_cannot_be_written_is_said_in_the_channel_once_an_hour(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    slack = FakeSlack()
    desk = make_desk(UnwritableStore(store), slack)
    await fire(desk, gateway, sim)
    await desk.run_check(gateway, T0 + timedelta(minutes=30))
    await desk.run_check(gateway, T0 + timedelta(minutes=70))
    notices = [text for _, text, _ in slack.posts if "cannot keep its alert state" in text]
    assert len(notices) == 2
    assert all("forbidden" in text for text in notices)


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
