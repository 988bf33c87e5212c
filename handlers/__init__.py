"""Slack listeners: ack first, parse, authorize, call a use-case, render, respond."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.deps import Deps
from handlers import commands


def register(app: AsyncApp, deps: Deps) -> None:
    """Attach every listener to the app, under the configured slash command."""
    app.command(deps.settings.slack.command)(commands.handle_command)
