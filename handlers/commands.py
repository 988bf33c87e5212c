"""The slash command listener (`/kai` by default), dispatched by subcommand; `/kai health`'s runner.

Bad input, help and "restarting" were answered in the ack as the command came in
(`bot/service/app.py`); the listener gets the rest parsed, in Bolt's context (`acks.PARSED`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond

from bot.commands.registry import label_of
from bot.health import render, usecase
from bot.health.commands import CheckHealth
from bot.service.deps import Deps
from bot.slack.blocks import Message
from bot.subcommands import CHANGES, acks
from handlers import replies
from handlers.invocation import Invocation, Runner
from handlers.replies import Listener


def make_command_listener(runners: Mapping[type, Runner]) -> Listener:
    """The slash command's listener, running each subcommand with its feature's runner."""

    async def handle_command(
        ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond, context: dict[str, Any]
    ) -> None:
        """Ack (empty), then run the parsed command and post its reply to the response_url."""
        await ack()
        deps: Deps = context["deps"]
        parsed = context[acks.PARSED]
        subcommand, run = label_of(parsed), runners[type(parsed)]
        user_id, channel_id = str(command.get("user_id", "")), str(command.get("channel_id", ""))
        invocation = Invocation(user_id, channel_id, deps.settings.slack.command, respond)

        async def reply() -> None:
            work = run(parsed, deps, invocation)
            await replies.deliver(respond, work, subcommand=subcommand, deps=deps, user_id=user_id)

        # The ack leaves when this listener returns (`process_before_response`, see
        # bot/service/app.py); the work runs after it (unless the request is a replay another
        # replica handled), and from now on a shutdown waits for it.
        refuse = replies.refusal(respond) if type(parsed) in CHANGES else None
        deps.inflight.spawn(reply(), first_time=context.get("first_time"), refuse=refuse)

    return handle_command


async def reply_health(parsed: CheckHealth, deps: Deps, invocation: Invocation) -> Message:
    """`/kai health`: the KAI and APIService report, posted for the whole channel to see."""
    await deps.gate.require_viewer(invocation.user_id, "check health")
    kube = deps.kube_for(parsed.cluster)
    report = await usecase.shared_check(deps.health_checks, kube, deps.settings, deps.clock())
    return {**render.health_message(report), "response_type": "in_channel"}


HEALTH_RUNNERS: dict[type, Runner] = {CheckHealth: reply_health}
