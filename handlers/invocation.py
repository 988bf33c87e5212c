"""Who typed a command, where, and how feature handlers plug into the dispatcher."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.changes.progress import Respond
from bot.config.settings import Settings
from bot.service.deps import Deps
from bot.slack.blocks import Message


@dataclass(frozen=True)
class Invocation:
    """The Slack side of one slash command; `respond` posts to its response_url (5 uses)."""

    user_id: str
    channel_id: str
    command_name: str
    respond: Respond | None = None


# A subcommand's work after the ack: (parsed command, deps, invocation) -> the reply.
Runner = Callable[[Any, Deps, Invocation], Awaitable[Message]]


def asking(action: str, change_of: Callable[[Any, Settings], object]) -> Runner:
    """The runner of a change's command: its typed parameters (`change_of(parsed, settings)`)
    handed to the change pipeline (`deps.changes`) as `action`."""

    async def run(parsed: Any, deps: Deps, invocation: Invocation) -> Message:
        return await deps.changes.ask(action, change_of(parsed, deps.settings), invocation)

    return run
