"""`/kai alerts`, `ack`, `silence` and `unsilence` as the slash command reads them
(docs/design.md §1.3): their parsed types, parsers, usage and help lines. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from bot.commands.grammar import Args, Command, simple
from bot.commands.registry import Subcommand


@dataclass(frozen=True)
class Alerts:
    cluster: str | None = None


@dataclass(frozen=True)
class Ack:
    alert_id: str
    cluster: str | None = None


@dataclass(frozen=True)
class Silence:
    alert_id: str
    duration: timedelta
    reason: str = ""
    cluster: str | None = None


@dataclass(frozen=True)
class Unsilence:
    alert_id: str
    cluster: str | None = None


def parse_silence(args: Args) -> Silence:
    args.take_flags()
    alert_id = args.take_word("an ALERT_ID and a DURATION")
    if args.words and args.words[0].lower() == "for":
        args.words.pop(0)
    duration = args.take_duration()
    return Silence(alert_id, duration, args.take_reason(), args.finish())


def _parse_alert(make: Callable[[str, str | None], Command]) -> Callable[[Args], Command]:
    """The parser of a subcommand that takes one ALERT_ID."""

    def parse(args: Args) -> Command:
        args.take_flags()
        alert_id = args.take_word("an ALERT_ID")
        return make(alert_id, args.finish())

    return parse


SUBCOMMANDS = (
    Subcommand(
        "alerts",
        simple(Alerts),
        "{command} alerts",
        "list the alerts that are firing, acknowledged or silenced (a critical one pages "
        "alerts.mention; each alert's thread starts with its diagnosis)",
        operator=False,
        makes=(Alerts,),
    ),
    Subcommand(
        "ack",
        _parse_alert(Ack),
        "{command} ack ALERT_ID",
        "acknowledge an alert: you are on it, reminders stop, it does not escalate",
        operator=True,
        makes=(Ack,),
    ),
    Subcommand(
        "silence",
        parse_silence,
        "{command} silence ALERT_ID DURATION [REASON...]\n"
        "  ALERT_ID: as {command} alerts and the alert messages show it; DURATION: 30m, 2h, 1d",
        "silence an alert for a while: no reminders, and no escalation if it falls due meanwhile",
        operator=True,
        makes=(Silence,),
    ),
    Subcommand(
        "unsilence",
        _parse_alert(Unsilence),
        "{command} unsilence ALERT_ID",
        "end an alert's silence",
        operator=True,
        makes=(Unsilence,),
    ),
)
