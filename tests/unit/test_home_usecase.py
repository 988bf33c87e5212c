"""What the Home tab and `/kai changes` read (`bot.home.usecase`), composed from each feature's
read: a read that fails is a line on the tab, never a failed tab; `/kai changes` reads the
cluster named, else every configured one.

In-process fakes of each source (the clusters, the shared health check, the alert desk's public
read, the journal); no sockets.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.access.audit import Change
from bot.config.settings import parse_settings
from bot.core import errors
from bot.core.models import RawObject
from bot.home import usecase
from bot.home.model import ChangeLine, ClusterStatus
from bot.kube.kinds import ResourceRef

NOW = datetime(2026, 8, 24, 12, 0, tzinfo=UTC)
SETTINGS = parse_settings(
    {
        "clusters": [{"name": "prod"}, {"name": "lab"}],
        "slack": {"alert_channel": "C0ALERTS"},
        "keda": {"namespaces": ["annia"]},
    }
)
PAUSED = {
    "kind": "ScaledJob",
    "metadata": {
        "name": "worker",
        "namespace": "annia",
        "annotations": {"autoscaling.keda.sh/paused": "true"},
    },
}


@dataclass
class Cluster:
    """Serves ScaledJobs (one paused on prod); KAI's queues are not served (404)."""

    cluster: str
    asked: list[tuple[str, str | None]] = field(default_factory=list)

    async def list_objects(
        self, ref: ResourceRef, namespace: str | None = None, **_: Any
    ) -> list[RawObject]:
        self.asked.append((ref.kind, namespace))
        if ref.kind == "ScaledJob" and self.cluster == "prod":
            return [PAUSED]
        if ref.kind == "Queue":
            raise errors.KubeNotFound("the server could not find the requested resource")
        return []


class Checks:
    """The shared health check: prod is down, lab has a report."""

    async def run(self, key: str, work: Callable[[], Awaitable[Any]]) -> Any:
        if key == "prod":
            raise errors.KubeUnavailable("cluster prod: connection refused")
        return "lab's report"


class Broken:
    """The alert desk and the journal when their store cannot be read."""

    async def list_alerts(self, cluster: str | None = None) -> list[Any]:
        raise errors.BotError("the alert store is unreachable")

    async def recent(self, limit: int) -> list[Change]:
        raise errors.BotError("the journal is unreachable")


class Journal:
    async def recent(self, limit: int) -> list[Change]:
        return [Change("U0OPS", "pause", "ScaledJob annia/worker on prod", "ok", NOW)]


@dataclass
class Sources:
    settings: Any = SETTINGS
    kube: dict[str, Cluster] = field(
        default_factory=lambda: {n: Cluster(n) for n in ("prod", "lab")}
    )
    health_checks: Checks = field(default_factory=Checks)
    alerts: Any = field(default_factory=Broken)
    journal: Any = field(default_factory=Journal)
    approvals: None = None
    clock: Callable[[], datetime] = lambda: NOW


async def test_each_read_that_fails_is_said_on_the_tab_and_the_rest_is_shown() -> None:
    home = await usecase.read_home(Sources())

    assert home.now == NOW
    assert home.clusters == (
        ClusterStatus("prod", error="cluster prod: connection refused"),
        ClusterStatus("lab", "lab's report"),
    )
    assert home.alerts == () and home.alerts_error == (
        "The alert state cannot be read: the alert store is unreachable"
    )
    assert [(h.what, h.name, h.cluster) for h in home.held] == [("paused", "worker", "prod")]
    assert home.changes == (
        ChangeLine(NOW, "U0OPS", "pause", "ScaledJob annia/worker on prod", "ok"),
    )
    assert (home.approvals, home.approvals_error) == ((), "")  # access.approval is off


async def test_the_recent_changes_that_cannot_be_read_are_said() -> None:
    home = await usecase.read_home(Sources(journal=Broken()))

    assert home.changes == ()
    assert home.changes_error == "The recent changes cannot be read: the journal is unreachable"


async def test_changes_reads_the_cluster_named_or_else_every_configured_one() -> None:
    every, named = Sources(), Sources()

    everywhere = await usecase.changes_in_force(every, None)
    only_lab = await usecase.changes_in_force(named, "lab")

    assert every.kube["prod"].asked and every.kube["lab"].asked
    assert named.kube["lab"].asked and not named.kube["prod"].asked
    assert "prod, lab" in everywhere["text"] and "worker" in everywhere["text"]
    assert "on lab" in only_lab["text"] and "worker" not in only_lab["text"]
