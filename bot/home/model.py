"""What the Home tab shows, as plain values: clusters, alerts, held objects, recent changes,
changes waiting for approval.

Pure data, built by `bot.home.assemble` (the alert lines from the alert desk's public read, so
nothing else here depends on the alert state's shape).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from bot.core.models import HealthReport
from bot.rules.held import HeldObject

__all__ = ["AlertLine", "ChangeLine", "ClusterStatus", "HeldObject", "Home", "QueueMark"]


@dataclass(frozen=True)
class QueueMark:
    """A KAI queue the tab marks: `starved` (with its longest wait) or `over quota`."""

    name: str
    mark: Literal["starved", "over quota"]
    allocated: str  # GPUs, as `/kai queues` shows them
    quota: str
    waiting: str = ""  # starved: `annia/pg-x for 45m`


@dataclass(frozen=True)
class ClusterStatus:
    """One cluster's health report, or why it could not be checked; its marked queues, or
    why they could not be read."""

    cluster: str
    report: HealthReport | None = None
    error: str = ""
    queues: tuple[QueueMark, ...] = ()
    queues_error: str = ""


AlertPhase = Literal["firing", "acknowledged", "silenced"]


@dataclass(frozen=True)
class AlertLine:
    """One active alert: its ID, what it is about, where it is in its life, and who owns it."""

    alert_id: str
    cluster: str
    critical: bool
    subject: str  # `Config kai-config DependenciesFulfilled`
    title: str
    state: AlertPhase
    since: datetime | None  # when it fired
    by: str = ""  # who acknowledged or silenced it
    until: datetime | None = None  # the end of a silence
    reason: str = ""


@dataclass(frozen=True)
class ChangeLine:
    """One change made through the bot, as the audit record keeps it."""

    at: datetime
    user: str  # a Slack user ID, `slack:<ID>`, or `kai-chatops` for what it did by itself
    action: str
    target: str
    outcome: str  # ok, failed or unknown
    reason: str = ""
    note: str = ""  # how it ended, in words ("not acknowledged by KEDA", "timed out", ...)


@dataclass(frozen=True)
class ApprovalLine:
    """A change waiting for a second operator (`access.approval`)."""

    change_id: str
    requested_by: str  # a Slack user ID
    what: str  # `pause ScaledJob annia/annia-worker on prod`
    expires_at: datetime


@dataclass(frozen=True)
class Home:
    """Everything on the Home tab, read at `now`; each `*_error` says what could not be read."""

    now: datetime
    clusters: tuple[ClusterStatus, ...]
    alerts: tuple[AlertLine, ...] = ()
    held: tuple[HeldObject, ...] = ()
    changes: tuple[ChangeLine, ...] = ()
    alerts_error: str = ""
    held_errors: tuple[str, ...] = field(default_factory=tuple)
    changes_error: str = ""
    approvals: tuple[ApprovalLine, ...] = ()
    approvals_error: str = ""
