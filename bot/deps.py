"""Everything a listener or job needs, built once by the composition root and passed explicitly."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bot.config import Settings
from bot.metrics import Metrics
from bot.models import HealthReport
from bot.singleflight import SingleFlight
from bot.usecases import KubeReader


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Deps:
    """The service's collaborators: settings, one Kubernetes gateway per cluster, metrics, clock."""

    settings: Settings
    kube: Mapping[str, KubeReader]
    metrics: Metrics
    clock: Callable[[], datetime] = utc_now
    health_checks: SingleFlight[str, HealthReport] = field(default_factory=SingleFlight)

    def kube_for(self, cluster: str | None) -> KubeReader:
        """The gateway for `--cluster NAME`, or the first configured cluster.

        Raises:
            UserError: no cluster of that name is configured.
        """
        return self.kube[self.settings.cluster(cluster).name]
