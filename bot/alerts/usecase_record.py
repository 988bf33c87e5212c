"""Acknowledge, silence and unsilence as a person asks them (a slash command or a button):
the silence policy (`alerts.max_silence`) checked, the desk's step taken, and one audit line
whatever happened (the thread's note may never be posted: the log line is the record). Who
may ask is the gate's to say, before (`bot.access.gate`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.access import audit, policy
from bot.alerts.model import AlertState
from bot.alerts.usecase import AlertDesk
from bot.core import errors
from bot.core.durations import format_duration

Now = Callable[[], datetime]  # the service clock (`Deps.clock`): the step's time, then the record's


@dataclass(frozen=True)
class Asked:
    """Who asked to act on which alert: `cluster` None when the command named none (the alert
    of that ID on any cluster)."""

    user: str
    cluster: str | None
    alert_id: str


async def acknowledge(desk: AlertDesk, asked: Asked, clock: Now) -> AlertState:
    """`AlertDesk.acknowledge`, on the record (raises what it raises)."""
    run = desk.acknowledge(asked.alert_id, asked.user, clock(), cluster=asked.cluster)
    return await _recorded(asked, "acknowledge", run, clock)


async def silence(
    desk: AlertDesk, asked: Asked, duration: timedelta, reason: str, clock: Now
) -> AlertState:
    """`AlertDesk.silence` for at most `alerts.max_silence`, on the record.

    Raises:
        UserError: a silence longer than that; what `AlertDesk.silence` raises.
    """
    policy.check_silence(duration, desk.settings.alerts.max_silence)
    user, alert_id = asked.user, asked.alert_id
    run = desk.silence(alert_id, user, duration, reason, clock(), cluster=asked.cluster)
    return await _recorded(asked, "silence", run, clock, reason, format_duration(duration))


async def unsilence(desk: AlertDesk, asked: Asked, clock: Now) -> AlertState:
    """`AlertDesk.unsilence`, on the record (raises what it raises)."""
    run = desk.unsilence(asked.alert_id, asked.user, clock(), cluster=asked.cluster)
    return await _recorded(asked, "unsilence", run, clock)


async def _recorded(
    asked: Asked,
    action: str,
    run: Awaitable[AlertState],
    clock: Now,
    reason: str = "",
    duration: str = "",
) -> AlertState:
    """The alert after `run`, with one audit line whatever happened."""
    details = {"for": duration} if duration else {}
    user, alert_id = asked.user, asked.alert_id
    try:
        alert = await run
    except errors.BotError as e:
        where = f"alert {alert_id}"
        change = audit.Change(user, action, where, "failed", clock(), reason, details, note=str(e))
        audit.log_change(change)
        raise
    where = f"alert {alert_id} on {alert.key.cluster}: {alert.observation.title}"
    audit.log_change(audit.Change(user, action, where, "ok", clock(), reason, details))
    return alert
