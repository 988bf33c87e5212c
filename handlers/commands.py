"""The slash command listener (`/kai` by default): one entry, dispatched by subcommand."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond

from bot.commands.grammar import Command
from bot.commands.registry import Help
from bot.core import errors
from bot.gitops import render as render_gitops
from bot.health import render as health_render
from bot.health import usecase as usecases
from bot.health.commands import Health
from bot.service.deps import Deps
from bot.slack import blocks as render
from bot.slack.blocks import Message
from bot.subcommands import CHANGES, GRAMMAR
from handlers import replies
from handlers.invocation import Invocation, Runner

Listener = Callable[..., Awaitable[None]]
# The Bolt context key by which HTTP mode tells the listener that the (empty) ack has left.
ACK_SENT = "kai_chatops_ack_sent"


def make_command_listener(runners: Mapping[type, Runner]) -> Listener:
    """The slash command's listener, running each subcommand with its feature's runner."""

    async def handle_command(
        ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond, context: dict[str, Any]
    ) -> None:
        """Ack at once; bad input and help are answered in the ack itself, work via response_url."""
        deps: Deps = context["deps"]
        # In HTTP mode the endpoint has sent the ack already, decided when the command came:
        # a command that came before a shutdown began is carried out (the shutdown waits for it).
        draining = deps.inflight.draining and not context.get(ACK_SENT)
        decided = decide(command.get("text") or "", deps, runners, draining=draining)
        if decided.answer is not None:
            await ack(**decided.answer)
            return
        await ack()
        assert decided.parsed is not None  # a command that needs no work is answered above
        parsed, name = decided.parsed, deps.settings.slack.command
        subcommand, run = type(parsed).__name__.lower(), runners[type(parsed)]
        user_id, channel_id = (
            str(command.get("user_id", "")),
            str(command.get("channel_id", "")),
        )
        invocation = Invocation(user_id, channel_id, name, respond)

        async def reply() -> None:
            work = run(parsed, deps, invocation)
            await replies.deliver(respond, work, subcommand=subcommand, deps=deps, user_id=user_id)

        # The ack leaves when this listener returns (`process_before_response`, see
        # bot/service/app.py); the work runs after it (unless the request is a replay another
        # replica handled), and from now on a shutdown waits for it.
        refuse = replies.refusal(respond) if type(parsed) in CHANGES else None
        deps.inflight.spawn(reply(), first_time=context.get("first_time"), refuse=refuse)

    return handle_command


@dataclass(frozen=True)
class Decided:
    """What a slash command's ack says (`answer`), or None: the ack is empty and the work of
    `parsed` follows."""

    answer: Message | None
    parsed: Command | None = None


def decide(
    text: str, deps: Deps, runners: Mapping[type, Runner], *, draining: bool | None = None
) -> Decided:
    """The ack of `/kai TEXT`: "restarting", the usage of a bad command, the help, or nothing.

    It depends on the text alone, so HTTP mode sends it before Bolt runs the listener
    (`bot/service/endpoint.py`); the listener decides the same way in Socket Mode.
    """
    name = deps.settings.slack.command
    if deps.inflight.draining if draining is None else draining:
        return Decided(_ephemeral(render.text_message(render.RESTARTING)))
    try:
        parsed = GRAMMAR.parse(text, command_name=name)
    except errors.BadCommand as e:
        deps.metrics.commands.labels("invalid", "rejected").inc()
        return Decided(_ephemeral(render.usage_message(str(e), e.usage)))
    if isinstance(parsed, Help):
        return Decided(_ephemeral(render.help_message(help_text(deps, parsed.topic))))
    if type(parsed) not in runners:
        subcommand = type(parsed).__name__.lower()
        note = f"`{name} {subcommand}` is not available in this version of kai-chatops yet."
        return Decided(_ephemeral(render.text_message(note)))
    return Decided(None, parsed)


def _ephemeral(message: Message) -> Message:
    return {**message, "response_type": "ephemeral"}


def help_text(deps: Deps, topic: str | None) -> str:
    """The help, with the configured `reconcile kai|keda` shortcuts where they belong."""
    name = deps.settings.slack.command
    text = GRAMMAR.help_text(name, topic)
    if topic in (None, "reconcile"):
        text = f"{text}\n{render_gitops.describe_shortcuts(deps.settings.gitops, name)}"
    return text


async def reply_health(parsed: Health, deps: Deps, invocation: Invocation) -> Message:
    """`/kai health`: the KAI and APIService report, posted for the whole channel to see."""
    await deps.gate.require_viewer(invocation.user_id, "check health")
    kube = deps.kube_for(parsed.cluster)
    report = await deps.health_checks.run(
        kube.cluster, lambda: usecases.check_health(kube, deps.settings, deps.clock())
    )
    return {**health_render.health_message(report), "response_type": "in_channel"}


HEALTH_RUNNERS: dict[type, Runner] = {Health: reply_health}
