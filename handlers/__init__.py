"""Slack listeners: ack first, parse, authorize, call a use-case, render, respond."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.service.deps import Deps
from bot.slack import blocks as render
from handlers import (
    alerts,
    approval,
    commands,
    confirm,
    diagnostics,
    gitops,
    home,
    keda,
    listing,
    suspend,
    workloads,
)
from handlers.invocation import Executor, Runner

FEATURES = (keda, gitops, alerts, diagnostics, workloads, listing, suspend, home)


def register(app: AsyncApp, deps: Deps) -> None:
    """Attach every listener: the slash command, Confirm/Cancel, and each feature's buttons."""
    executors = _executors()
    # Bolt tries listeners in the order they were added, running each one's matchers: the
    # slash command and Confirm/Cancel go first, as they carry most requests.
    app.command(deps.settings.slack.command)(commands.make_command_listener(_runners()))
    confirmed = confirm.make_confirm_listener(executors, approval.ask_approval)
    app.action(render.CONFIRM_ACTION)(confirmed)
    app.action(render.CANCEL_ACTION)(confirm.handle_cancel)
    approval.register(app, executors)
    for feature in FEATURES:
        feature.register(app)


def _executors() -> dict[str, Executor]:
    """Each confirmed action's executor, by its name."""
    executors: dict[str, Executor] = {}
    for feature in FEATURES:
        executors |= feature.EXECUTORS
    return executors


def _runners() -> dict[type, Runner]:
    """Each subcommand's runner, by its parsed type."""
    runners = dict(commands.HEALTH_RUNNERS) | approval.runners(_executors())
    for feature in FEATURES:
        runners |= feature.RUNNERS
    return {kind: listing.with_elsewhere_hint(run) for kind, run in runners.items()}
