"""Who typed a command, where, and how feature handlers plug into the dispatcher."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.access.confirmations import AskedChange
from bot.service.deps import Deps
from bot.slack.blocks import Message

Respond = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class Invocation:
    """The Slack side of one slash command; `respond` posts to its response_url (5 uses)."""

    user_id: str
    channel_id: str
    command_name: str
    respond: Respond | None = None


# A subcommand's work after the ack: (parsed command, deps, invocation) -> the reply.
Runner = Callable[[Any, Deps, Invocation], Awaitable[Message]]
# A confirmed change: (what was asked, deps, the user who clicked Confirm) -> the result message.
Executor = Callable[[AskedChange, Deps, str], Awaitable[Message]]
