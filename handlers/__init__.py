"""Slack listeners: the parsed command in, call one use-case (a change: `bot.changes`), respond."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.service.deps import Deps
from bot.slack import blocks
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
    nodes,
    suspend,
    timeline,
    workloads,
)
from handlers.invocation import Runner

FEATURES = (keda, gitops, alerts, diagnostics, workloads, listing, suspend, home, nodes, timeline)


def register(app: AsyncApp, deps: Deps) -> None:
    """Attach every listener: the slash command, Confirm/Cancel, and each feature's buttons."""
    # Bolt tries listeners in the order they were added, running each one's matchers: the
    # slash command and Confirm/Cancel go first, as they carry most requests.
    app.command(deps.settings.slack.command)(commands.make_command_listener(_runners()))
    app.action(blocks.CONFIRM_ACTION)(confirm.handle_confirm)
    app.action(blocks.CANCEL_ACTION)(confirm.handle_cancel)
    approval.register(app)
    for feature in FEATURES:
        feature.register(app)


def _runners() -> dict[type, Runner]:
    """Each subcommand's runner, by its parsed type."""
    runners = dict(commands.HEALTH_RUNNERS) | approval.RUNNERS
    for feature in FEATURES:
        runners |= feature.RUNNERS
    return {kind: listing.with_elsewhere_hint(run) for kind, run in runners.items()}
