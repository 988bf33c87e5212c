"""Delivering a reply after the ack: expected errors as a short ephemeral note, the rest logged.

Bolt discards an ack when a listener raises right after it (Slack then shows a timeout), so no
exception may escape the work that follows an ack: everything ends as a message to the user.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond

from bot.core import errors
from bot.core.metrics import Metrics
from bot.service.deps import Deps
from bot.slack import blocks
from bot.slack.blocks import Message

log = logging.getLogger(__name__)


async def deliver(
    respond: AsyncRespond,
    work: Awaitable[Message],
    *,
    subcommand: str,
    deps: Deps,
    user_id: str = "",
) -> None:
    """Await the reply, then post it to the command's response_url, whatever happened; in flight
    all along (a shutdown waits for it), it ends with one log line (command, user, outcome)."""
    with deps.inflight.track():
        outcome = await _deliver(respond, work, subcommand=subcommand, metrics=deps.metrics)
    context = {"command": subcommand, "user": user_id, "outcome": outcome}
    log.info("%s by %s: %s", subcommand, user_id or "?", outcome, extra=context)


async def _deliver(
    respond: AsyncRespond, work: Awaitable[Message], *, subcommand: str, metrics: Metrics
) -> str:
    started = time.monotonic()
    outcome = "ok"
    try:
        message = await work
    except errors.BotError as e:
        outcome = "rejected"
        message = {**blocks.error_message(e), "response_type": "ephemeral"}
    except Exception:
        outcome = "error"
        log.exception("%s failed", subcommand)
        message = {**blocks.text_message(blocks.GENERIC_FAILURE), "response_type": "ephemeral"}
    metrics.commands.labels(subcommand, outcome).inc()
    metrics.command_seconds.labels(subcommand).observe(time.monotonic() - started)
    await respond(**message)
    return outcome


ButtonWork = Callable[[Deps, str, str, dict[str, Any]], Awaitable[Message]]
Listener = Callable[..., Awaitable[None]]


def refusal(respond: AsyncRespond) -> Callable[[], Awaitable[None]]:
    """What a change says instead of running when its replay cannot be ruled out."""

    async def refuse() -> None:
        await respond(**blocks.text_message(blocks.REPLAY_UNKNOWN), response_type="ephemeral")

    return refuse


def button_listener(name: str, run: ButtonWork, *, change: bool = True) -> Listener:
    """A button's listener: ack at once, then deliver `run(deps, user_id, value, body)`; a
    `change` is refused when its replay cannot be ruled out (`refusal`)."""

    async def handle_click(
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        respond: AsyncRespond,
        context: dict[str, Any],
    ) -> None:
        await ack()
        deps: Deps = context["deps"]
        # Decided now, not when the work starts: a click that came before a shutdown began is
        # carried out (the shutdown waits for it); one that came during it could be cut off.
        draining = deps.inflight.draining
        work = answer_click(deps, body, str(action.get("value", "")), respond, draining)
        refuse = refusal(respond) if change else None
        deps.inflight.spawn(work, first_time=context.get("first_time"), refuse=refuse)

    async def answer_click(
        deps: Deps, body: dict[str, Any], value: str, respond: AsyncRespond, draining: bool
    ) -> None:
        """After the ack has left: the work and its reply, or "restarting" while draining."""
        if draining:
            await respond(**blocks.text_message(blocks.RESTARTING), response_type="ephemeral")
            return
        user_id = str(body.get("user", {}).get("id", ""))
        work = run(deps, user_id, value, body)
        await deliver(respond, work, subcommand=name, deps=deps, user_id=user_id)

    return handle_click
