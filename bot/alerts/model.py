"""The alert data: identity, what a check saw, one alert's state, a cluster's alerts, and JSON.

Frozen values only, shared by the state machine (`bot.alerts.machine`), the rules that produce
observations (`bot.alerts.rules`), rendering and the store. Pure: no I/O, no clock.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any

from bot.core.conditions import parse_timestamp

SCHEMA = 1


class Severity(enum.Enum):
    CRITICAL = "critical"
    WARNING = "warning"


class Phase(enum.Enum):
    """Where an alert is in its life; derived from its fields (see `AlertState.phase`)."""

    PENDING = "pending"  # bad, but not yet for `hold`: nothing posted
    FIRING = "firing"
    ACKNOWLEDGED = "acknowledged"
    SILENCED = "silenced"
    RESOLVED = "resolved"


class RootStatus(enum.Enum):
    """The alert's root message: not posted, being posted (intent persisted), posted (ts known)."""

    NONE = "none"
    POSTING = "posting"
    POSTED = "posted"


@dataclass(frozen=True, order=True)
class AlertKey:
    """An alert's identity (DESIGN 2): the same key after a resolution is a new incident."""

    cluster: str
    kind: str
    object: str
    condition: str

    @property
    def alert_id(self) -> str:
        """A short ID people can type (`/kai ack 3f9a2c`), stable across restarts and replicas."""
        digest = hashlib.sha256("\x1f".join(asdict(self).values()).encode()).hexdigest()
        return digest[:6]

    @property
    def subject(self) -> str:
        """`Config kai-config`: the object as a report names it."""
        return f"{self.kind} {self.object}"


@dataclass(frozen=True)
class Observation:
    """One bad condition a check saw: what it is, how bad, and the operator's own words.

    `immediate` alerts skip `hold` both ways (the check-failure alert: its failure count is its
    hold). `since` is when the condition itself says it started, if it says.
    """

    key: AlertKey
    severity: Severity
    title: str
    reason: str = ""
    message: str = ""
    check_first: str = ""
    since: datetime | None = None
    immediate: bool = False


@dataclass(frozen=True)
class AlertState:
    """One alert as stored: its latest observation, its timeline, its root message, its owners."""

    observation: Observation
    first_seen: datetime
    firing_since: datetime | None = None
    clear_since: datetime | None = None
    root_status: RootStatus = RootStatus.NONE
    root_channel: str = ""
    root_ts: str = ""
    reposted: bool = False
    acked_by: str = ""
    acked_at: datetime | None = None
    silenced_by: str = ""
    silenced_until: datetime | None = None
    silence_reason: str = ""
    last_reminder: datetime | None = None
    resolved_at: datetime | None = None

    @property
    def key(self) -> AlertKey:
        return self.observation.key

    @property
    def alert_id(self) -> str:
        return self.observation.key.alert_id

    @property
    def phase(self) -> Phase:
        if self.resolved_at is not None:
            return Phase.RESOLVED
        if self.firing_since is None:
            return Phase.PENDING
        if self.silenced_until is not None:
            return Phase.SILENCED
        return Phase.ACKNOWLEDGED if self.acked_by else Phase.FIRING

    @property
    def is_active(self) -> bool:
        """Fired and not resolved: it has (or is getting) a root message."""
        return self.phase not in (Phase.PENDING, Phase.RESOLVED)

    @property
    def has_thread(self) -> bool:
        return self.root_status is RootStatus.POSTED and bool(self.root_ts)


@dataclass(frozen=True)
class ClusterAlerts:
    """Every alert of one cluster, plus the consecutive check failures behind "cannot check"."""

    cluster: str
    alerts: Mapping[AlertKey, AlertState] = field(default_factory=dict)
    failures: int = 0
    last_error: str = ""

    def with_alert(self, alert: AlertState) -> ClusterAlerts:
        return replace(self, alerts={**self.alerts, alert.key: alert})

    def without(self, key: AlertKey) -> ClusterAlerts:
        return replace(self, alerts={k: v for k, v in self.alerts.items() if k != key})

    def find(self, alert_id: str) -> AlertState | None:
        wanted = alert_id.strip().lower()
        return next((a for a in self.alerts.values() if a.alert_id == wanted), None)


# --- JSON, for the store ---------------------------------------------------------------------


def dump_cluster(state: ClusterAlerts) -> str:
    """The state as a JSON document (stable key order, times in RFC 3339 UTC)."""
    body = {
        "schema": SCHEMA,
        "cluster": state.cluster,
        "failures": state.failures,
        "last_error": state.last_error,
        "alerts": [_dump_alert(a) for _, a in sorted(state.alerts.items())],
    }
    return json.dumps(body, sort_keys=True)


def load_cluster(cluster: str, text: str) -> ClusterAlerts:
    """The state a `dump_cluster` document holds; an empty text is an empty state.

    Raises:
        ValueError: the text is not such a document.
    """
    if not text:
        return ClusterAlerts(cluster)
    body = json.loads(text)
    if not isinstance(body, dict) or body.get("schema") != SCHEMA:
        raise ValueError(f"not an alert state document of schema {SCHEMA}")
    try:
        alerts = [_load_alert(raw) for raw in body.get("alerts") or []]
    except (KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"malformed alert in the state document: {e!r}") from e
    return ClusterAlerts(
        cluster=cluster,
        alerts={a.key: a for a in alerts},
        failures=int(body.get("failures") or 0),
        last_error=str(body.get("last_error") or ""),
    )


def _dump_alert(alert: AlertState) -> dict[str, Any]:
    raw = {k: _dump_value(v) for k, v in asdict(alert).items() if k != "observation"}
    seen = asdict(alert.observation)
    seen["key"] = asdict(alert.observation.key)
    raw["observation"] = {k: _dump_value(v) for k, v in seen.items()}
    return raw


def _dump_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    return value


def _load_alert(raw: Mapping[str, Any]) -> AlertState:
    seen = raw["observation"]
    observation = Observation(
        key=AlertKey(**seen["key"]),
        severity=Severity(seen["severity"]),
        title=str(seen.get("title") or ""),
        reason=str(seen.get("reason") or ""),
        message=str(seen.get("message") or ""),
        check_first=str(seen.get("check_first") or ""),
        since=parse_timestamp(seen.get("since")),
        immediate=bool(seen.get("immediate")),
    )
    first_seen = parse_timestamp(raw.get("first_seen"))
    if first_seen is None:
        raise ValueError(f"alert without a valid first_seen: {raw.get('first_seen')!r}")
    return AlertState(
        observation=observation,
        first_seen=first_seen,
        firing_since=parse_timestamp(raw.get("firing_since")),
        clear_since=parse_timestamp(raw.get("clear_since")),
        root_status=RootStatus(raw.get("root_status", RootStatus.NONE.value)),
        root_channel=str(raw.get("root_channel") or ""),
        root_ts=str(raw.get("root_ts") or ""),
        reposted=bool(raw.get("reposted")),
        acked_by=str(raw.get("acked_by") or ""),
        acked_at=parse_timestamp(raw.get("acked_at")),
        silenced_by=str(raw.get("silenced_by") or ""),
        silenced_until=parse_timestamp(raw.get("silenced_until")),
        silence_reason=str(raw.get("silence_reason") or ""),
        last_reminder=parse_timestamp(raw.get("last_reminder")),
        resolved_at=parse_timestamp(raw.get("resolved_at")),
    )
