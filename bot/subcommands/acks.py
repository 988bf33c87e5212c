"""What the ack of `/kai TEXT` says, from the text alone: "restarting" while draining, the usage
of a command that does not parse, the help, or nothing (the parsed command, whose work follows
the empty ack).

Pure. The service decides it as the command comes in (`bot/service/app.py`: before Bolt in
HTTP mode, in Bolt's middleware in Socket Mode) and hands the parsed command to the listener
under `PARSED` in Bolt's context, so the text is parsed once.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.grammar import Command
from bot.commands.registry import Help
from bot.config.settings import GitopsSettings
from bot.core import errors
from bot.gitops import render
from bot.slack import blocks
from bot.slack.blocks import Message
from bot.subcommands import GRAMMAR

# The key of Bolt's request context under which the listener finds the parsed command.
PARSED = "kai_chatops_parsed"


@dataclass(frozen=True)
class Decided:
    """What a slash command's ack says (`answer`), or None: the ack is empty and the work of
    `parsed` follows. `invalid`: the text did not parse (counted as `invalid`, `rejected`)."""

    answer: Message | None
    parsed: Command | None = None
    invalid: bool = False


def decide(text: str, command_name: str, gitops: GitopsSettings, *, draining: bool) -> Decided:
    """The ack of `TEXT` typed after `command_name`; `gitops` gives the help its shortcuts."""
    if draining:
        return Decided(_ephemeral(blocks.text_message(blocks.RESTARTING)))
    try:
        parsed = GRAMMAR.parse(text, command_name=command_name)
    except errors.BadCommand as e:
        return Decided(_ephemeral(blocks.usage_message(str(e), e.usage)), invalid=True)
    if isinstance(parsed, Help):
        shown = help_text(command_name, parsed.topic, gitops)
        return Decided(_ephemeral(blocks.help_message(shown)))
    return Decided(None, parsed)


def help_text(command_name: str, topic: str | None, gitops: GitopsSettings) -> str:
    """The help, with the configured `reconcile kai|keda` shortcuts where they belong."""
    text = GRAMMAR.help_text(command_name, topic)
    if topic in (None, "reconcile"):
        text = f"{text}\n{render.describe_shortcuts(gitops, command_name)}"
    return text


def _ephemeral(message: Message) -> Message:
    return {**message, "response_type": "ephemeral"}
