"""Listeners for the keda commands (filled in by the issue that builds them)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from handlers.invocation import Executor, Runner

RUNNERS: dict[type, Runner] = {}
EXECUTORS: dict[str, Executor] = {}


def register(app: AsyncApp) -> None:
    """Attach this feature's button listeners (none yet)."""
