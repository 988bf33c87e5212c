"""Values shared by the pure core, the gateways and the handlers.

Frozen dataclasses and enums only: no I/O and no clock. Raw Kubernetes objects travel as
`RawObject` (the JSON body exactly as the API server or `kubectl get -o yaml` gives it), so that
offline `evaluate` and the live checks apply the very same rules to the very same shape.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

RawObject = Mapping[str, Any]
Sleep = Callable[[float], Awaitable[None]]  # asyncio.sleep, or a test's that moves its clock


class Health(enum.Enum):
    """A verdict, in the words of docs/design.md §1.1 (plus `Missing` for an expected, absent
    object)."""

    HEALTHY = "Healthy"
    SUSPENDED = "Suspended"
    PROGRESSING = "Progressing"
    UNKNOWN = "Unknown"
    DEGRADED = "Degraded"
    MISSING = "Missing"

    @property
    def rank(self) -> int:
        """How bad it is: a report's overall verdict is its worst finding's."""
        return _RANKS[self]

    @property
    def is_healthy(self) -> bool:
        return self is Health.HEALTHY


_RANKS = {
    Health.HEALTHY: 0,
    Health.SUSPENDED: 1,
    Health.PROGRESSING: 2,
    Health.UNKNOWN: 3,
    Health.DEGRADED: 4,
    Health.MISSING: 5,
}


def worst(healths: Mapping[Any, Health] | list[Health] | tuple[Health, ...]) -> Health:
    """The worst of several verdicts; Healthy when there are none."""
    values = list(healths.values()) if isinstance(healths, Mapping) else list(healths)
    return max(values, key=lambda h: h.rank, default=Health.HEALTHY)


@dataclass(frozen=True)
class Verdict:
    """The health of one object, as `evaluate` prints it."""

    kind: str
    namespace: str | None
    name: str
    health: Health
    message: str

    def as_json(self) -> dict[str, str | None]:
        """The docs/design.md §1.1 JSON line for this verdict."""
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "health": self.health.value,
            "message": self.message,
        }


@dataclass(frozen=True)
class Finding:
    """One line of a health report: what was looked at, its verdict, and why.

    `detail` carries a controller's own message verbatim (KAI's are multi-line and name the
    failing Deployments); `summary` is our one-line reading of it.
    """

    subject: str
    health: Health
    summary: str
    detail: str = ""


@dataclass(frozen=True)
class HealthReport:
    """The answer to `/kai health` and `kai-chatops check` for one cluster."""

    cluster: str
    findings: tuple[Finding, ...]
    checked_at: datetime

    @property
    def verdict(self) -> Health:
        """The worst finding's health."""
        return worst([f.health for f in self.findings])

    @property
    def problems(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if not f.health.is_healthy)


@dataclass(frozen=True)
class ClusterSnapshot:
    """Everything a KAI/APIService health check reads, gathered in a constant number of calls.

    `None` for an object means the API answered 404 for it; `crd_names` is None when the CRDs
    were not read, `daemonsets` empty when the DaemonSets were not (the alert check: no alert
    rests on either).
    """

    kai_config: RawObject | None
    shards: tuple[RawObject, ...]
    deployments: tuple[RawObject, ...]
    crd_names: frozenset[str] | None
    apiservice: RawObject | None
    kai_namespace: str
    daemonsets: tuple[RawObject, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
