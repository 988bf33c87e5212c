"""Everything a listener or job needs, built once by the composition root and passed explicitly."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bot.access.journal import ChangeJournal
from bot.access.once import MemoryOnce, OnceStore
from bot.alerts.desk import AlertDesk
from bot.alerts.lease import LeaderLease
from bot.alerts.store import AlertStore
from bot.config.settings import Settings
from bot.core.metrics import Metrics
from bot.core.models import HealthReport
from bot.kube.ports import KubeWriter
from bot.service.inflight import InFlight
from bot.service.singleflight import SingleFlight
from bot.slack.gateway import SlackGateway


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Deps:
    """The service's collaborators: settings, one Kubernetes gateway per cluster, metrics, clock."""

    settings: Settings
    kube: Mapping[str, KubeWriter]
    metrics: Metrics
    clock: Callable[[], datetime] = utc_now
    monotonic: Callable[[], float] = time.monotonic  # for timing that must survive clock steps
    health_checks: SingleFlight[str, HealthReport] = field(default_factory=SingleFlight)
    slack: SlackGateway | None = None  # set by the service once its Slack client exists
    confirm_key: bytes = b""  # signs Confirm buttons; derived from a Slack secret
    once: OnceStore = field(default_factory=MemoryOnce)  # used requests and Confirms; shared
    alert_store: AlertStore | None = None  # None: the service opens the one `state` names
    alerts: AlertDesk | None = None  # set by the service (it needs the Slack gateway)
    lease: LeaderLease | None = None  # None: one replica, this one runs the checks
    inflight: InFlight = field(default_factory=InFlight)  # work a shutdown waits for
    journal: ChangeJournal | None = None  # the last changes (Home tab); set by the service

    def kube_for(self, cluster: str | None) -> KubeWriter:
        """The gateway for `--cluster NAME`, or the first configured cluster.

        Raises:
            UserError: no cluster of that name is configured.
        """
        return self.kube[self.settings.cluster(cluster).name]
