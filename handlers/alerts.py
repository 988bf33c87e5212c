"""Listeners for alerts: `/kai alerts`, `ack`, `silence`, `unsilence`, and the alert buttons.

Looking needs a viewer; acknowledging and silencing need an operator, checked again on the
server at every click. The work is `bot.alerts.desk.AlertDesk`'s; the record of who did what
goes into the alert's thread, and the person who asked gets a short private answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.access import audit, policy
from bot.access.audit import Change
from bot.alerts import commands
from bot.alerts import render as render_alerts
from bot.alerts.model import AlertState
from bot.core import errors
from bot.core.durations import format_duration
from bot.health import render as health_render
from bot.health import usecase as usecases
from bot.service.deps import Deps
from bot.slack import blocks as render
from bot.slack.blocks import Message
from handlers import replies
from handlers.invocation import Executor, Invocation, Runner

Listener = Callable[..., Awaitable[None]]


async def list_alerts(parsed: commands.Alerts, deps: Deps, invocation: Invocation) -> Message:
    """`/kai alerts`: active and pending alerts and silences, with their IDs."""
    await deps.gate.require_viewer(invocation.user_id, "list alerts")
    if parsed.cluster is not None:
        deps.settings.cluster(parsed.cluster)
    states = await deps.alerts.list_alerts(parsed.cluster)
    listing = render_alerts.alerts_listing(states, hold=deps.settings.alerts.hold)
    return {**listing, "response_type": "ephemeral"}


async def acknowledge(parsed: commands.Ack, deps: Deps, invocation: Invocation) -> Message:
    """`/kai ack ALERT_ID`."""
    return await run_acknowledge(deps, invocation.user_id, parsed.cluster, parsed.alert_id)


async def silence(parsed: commands.Silence, deps: Deps, invocation: Invocation) -> Message:
    """`/kai silence ALERT_ID DURATION [REASON...]`."""
    user, alert_id, duration = invocation.user_id, parsed.alert_id, parsed.duration
    return await run_silence(deps, user, parsed.cluster, alert_id, duration, parsed.reason)


async def unsilence(parsed: commands.Unsilence, deps: Deps, invocation: Invocation) -> Message:
    """`/kai unsilence ALERT_ID`."""
    user, alert_id = invocation.user_id, parsed.alert_id
    await deps.gate.require_operator(user, f"unsilence alert {alert_id}")
    run = deps.alerts.unsilence(alert_id, user, deps.clock(), cluster=parsed.cluster)
    alert = await _recorded(deps, user, "unsilence", alert_id, "", run)
    return _done(alert, "Lifted the silence on")


async def run_acknowledge(deps: Deps, user: str, cluster: str | None, alert_id: str) -> Message:
    """Acknowledge an alert (a command or a button), on the record."""
    await deps.gate.require_operator(user, f"acknowledge alert {alert_id}")
    run = deps.alerts.acknowledge(alert_id, user, deps.clock(), cluster=cluster)
    return _done(await _recorded(deps, user, "acknowledge", alert_id, "", run), "Acknowledged")


async def run_silence(
    deps: Deps, user: str, cluster: str | None, alert_id: str, duration: timedelta, reason: str
) -> Message:
    """Silence an alert (a command or a button), at most `alerts.max_silence`, on the record."""
    await deps.gate.require_operator(user, f"silence alert {alert_id}")
    policy.check_silence(duration, deps.settings.alerts.max_silence)
    run = deps.alerts.silence(alert_id, user, duration, reason, deps.clock(), cluster=cluster)
    alert = await _recorded(deps, user, "silence", alert_id, reason, run, format_duration(duration))
    return _done(alert, "Silenced", f" for {format_duration(duration)}")


async def _recorded(
    deps: Deps,
    user: str,
    action: str,
    alert_id: str,
    reason: str,
    run: Awaitable[AlertState],
    duration: str = "",
) -> AlertState:
    """The alert after `run`, with one audit line whatever happened (the thread's note may
    never be posted, the log line is the record)."""
    details = {"for": duration} if duration else {}
    try:
        alert = await run
    except errors.BotError as e:
        where = f"alert {alert_id}"
        change = Change(user, action, where, "failed", deps.clock(), reason, details, note=str(e))
        audit.log_change(change)
        raise
    where = f"alert {alert_id} on {alert.key.cluster}: {alert.observation.title}"
    audit.log_change(Change(user, action, where, "ok", deps.clock(), reason, details))
    return alert


def _done(alert: AlertState, what: str, detail: str = "") -> Message:
    """`Silenced alert 3f9a2c for 2h (prod: ...); noted in its thread.`, for the asker only."""
    where = "; noted in its thread." if alert.has_thread else "."
    title = render.escape(alert.observation.title)
    text = f"{what} alert {alert.alert_id}{detail} ({alert.key.cluster}: {title}){where}"
    return {**render.text_message(text), "response_type": "ephemeral"}


RUNNERS: dict[type, Runner] = {
    commands.Alerts: list_alerts,
    commands.Ack: acknowledge,
    commands.Silence: silence,
    commands.Unsilence: unsilence,
}
EXECUTORS: dict[str, Executor] = {}


# --- buttons on the alert's root message ----------------------------------------------------

Click = Callable[[Deps, str, str, str, dict[str, Any]], Awaitable[Message]]


def make_click_listener(run: Click, name: str, *, change: bool = True) -> Listener:
    """A button listener: ack at once, then `run(deps, user, cluster, alert_id, body)`."""

    async def click(deps: Deps, user: str, value: str, body: dict[str, Any]) -> Message:
        cluster, alert_id = render_alerts.parse_button_value(value)
        return await run(deps, user, cluster, alert_id, body)

    return replies.button_listener(name, click, change=change)


async def click_acknowledge(
    deps: Deps, user: str, cluster: str, alert_id: str, body: dict[str, Any]
) -> Message:
    return await run_acknowledge(deps, user, cluster, alert_id)


def click_silence(duration: timedelta) -> Click:
    async def run(
        deps: Deps, user: str, cluster: str, alert_id: str, body: dict[str, Any]
    ) -> Message:
        return await run_silence(deps, user, cluster, alert_id, duration, "")

    return run


async def click_health(
    deps: Deps, user: str, cluster: str, alert_id: str, body: dict[str, Any]
) -> Message:
    """`Run health check`: the cluster's report, posted in the alert's thread for everyone."""
    await deps.gate.require_viewer(user, "check health")
    kube = deps.kube_for(cluster)
    report = await deps.health_checks.run(
        kube.cluster, lambda: usecases.check_health(kube, deps.settings, deps.clock())
    )
    message = health_render.health_message(report)
    container = body.get("container") or {}
    channel = str(container.get("channel_id") or body.get("channel", {}).get("id", ""))
    thread_ts = str(container.get("message_ts") or "")
    if not channel or not thread_ts:
        return {**message, "response_type": "ephemeral"}
    await deps.slack.post(channel, message, thread_ts=thread_ts)
    note = f"Posted the health report of {cluster} in the alert's thread."
    return {**render.text_message(note), "response_type": "ephemeral"}


def register(app: AsyncApp) -> None:
    """Attach the alert buttons: Acknowledge, Silence 1h, Silence 4h, Run health check."""
    app.action(render_alerts.ACK_ACTION)(make_click_listener(click_acknowledge, "alert_ack"))
    for action_id, duration in render_alerts.SILENCE_ACTIONS.items():
        app.action(action_id)(make_click_listener(click_silence(duration), "alert_silence"))
    health = make_click_listener(click_health, "alert_health", change=False)
    app.action(render_alerts.HEALTH_ACTION)(health)
