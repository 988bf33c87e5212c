"""Listeners for alerts: `/kai alerts`, `ack`, `silence`, `unsilence`, and the alert buttons.

Looking needs a viewer; acknowledging and silencing need an operator, checked again on the
server at every click. The work is the alerts' use-case's (`bot.alerts.usecase`, on the record
through `bot.alerts.usecase_record`); the person who asked gets a short private answer.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.alerts import commands, render, usecase_health, usecase_record
from bot.alerts.usecase_record import Asked
from bot.service.deps import Deps
from bot.slack.blocks import Message
from handlers import replies
from handlers.invocation import Invocation, Runner


async def list_alerts(parsed: commands.Alerts, deps: Deps, invocation: Invocation) -> Message:
    """`/kai alerts`: active and pending alerts and silences, with their IDs."""
    await deps.gate.require_viewer(invocation.user_id, "list alerts")
    states = await deps.alerts.list_alerts(parsed.cluster)
    return _private(render.alerts_listing(states, hold=deps.settings.alerts.hold))


async def acknowledge(parsed: commands.Ack, deps: Deps, invocation: Invocation) -> Message:
    """`/kai ack ALERT_ID`."""
    return await _acknowledge(deps, Asked(invocation.user_id, parsed.cluster, parsed.alert_id))


async def silence(parsed: commands.Silence, deps: Deps, invocation: Invocation) -> Message:
    """`/kai silence ALERT_ID DURATION [REASON...]`."""
    asked = Asked(invocation.user_id, parsed.cluster, parsed.alert_id)
    return await _silence(deps, asked, parsed.duration, parsed.reason)


async def unsilence(parsed: commands.Unsilence, deps: Deps, invocation: Invocation) -> Message:
    """`/kai unsilence ALERT_ID`."""
    asked = Asked(invocation.user_id, parsed.cluster, parsed.alert_id)
    await deps.gate.require_operator(asked.user, f"unsilence alert {asked.alert_id}")
    alert = await usecase_record.unsilence(deps.alerts, asked, deps.clock)
    return _private(render.command_done(alert, "Lifted the silence on"))


async def _acknowledge(deps: Deps, asked: Asked) -> Message:
    await deps.gate.require_operator(asked.user, f"acknowledge alert {asked.alert_id}")
    alert = await usecase_record.acknowledge(deps.alerts, asked, deps.clock)
    return _private(render.command_done(alert, "Acknowledged"))


async def _silence(deps: Deps, asked: Asked, duration: timedelta, reason: str) -> Message:
    await deps.gate.require_operator(asked.user, f"silence alert {asked.alert_id}")
    alert = await usecase_record.silence(deps.alerts, asked, duration, reason, deps.clock)
    return _private(render.command_done(alert, "Silenced", duration=duration))


def _private(message: Message) -> Message:
    return {**message, "response_type": "ephemeral"}


RUNNERS: dict[type, Runner] = {
    commands.Alerts: list_alerts,
    commands.Ack: acknowledge,
    commands.Silence: silence,
    commands.Unsilence: unsilence,
}


Click = Callable[[Deps, Asked], Awaitable[Message]]


def _on_click(run: Click, name: str) -> replies.Listener:
    """A button listener on an alert's root: ack at once, then `run(deps, asked)`."""

    async def click(deps: Deps, user: str, value: str, body: dict[str, Any]) -> Message:
        cluster, alert_id = render.parse_button_value(value)
        return await run(deps, Asked(user, cluster, alert_id))

    return replies.button_listener(name, click)


async def _health(deps: Deps, user: str, value: str, body: dict[str, Any]) -> Message:
    """`Run health check`: the cluster's report, posted in the alert's thread for everyone."""
    cluster, _ = render.parse_button_value(value)
    await deps.gate.require_viewer(user, "check health")
    kube, shared = deps.kube_for(cluster), deps.health_checks.run
    return await usecase_health.health_in_thread(
        kube, render.clicked_root(body), deps.settings, deps.clock, shared, deps.slack
    )


def register(app: AsyncApp) -> None:
    """Attach the alert buttons: Acknowledge, Silence 1h, Silence 4h, Run health check."""
    app.action(render.ACK_ACTION)(_on_click(_acknowledge, "alert_ack"))
    for action_id, duration in render.SILENCE_ACTIONS.items():
        silence_for = functools.partial(_silence, duration=duration, reason="")
        app.action(action_id)(_on_click(silence_for, "alert_silence"))
    health = replies.button_listener("alert_health", _health, change=False)
    app.action(render.HEALTH_ACTION)(health)
