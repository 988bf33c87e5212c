"""`/kai timeline [--since DURATION]` and `/kai timeline ALERT_ID` as the slash command reads them
(docs/design.md §1.3): their parsed types, parser, usage and help line. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import ClassVar

from bot.alerts.seen import KEPT_FOR
from bot.commands.grammar import Args, Command
from bot.commands.registry import Subcommand
from bot.core import durations

DEFAULT_SINCE = timedelta(hours=2)
LONGEST_SINCE = KEPT_FOR  # how far back the bot's own memory of moves goes
SINCE = "--since"
_ALERT_ID = re.compile(r"[0-9a-f]{6}")


@dataclass(frozen=True)
class ShowTimeline:
    """`timeline [--since DURATION]`: what changed on one cluster, newest first."""

    LABEL: ClassVar[str] = "timeline"  # its name in metrics and logs (`label_of`)
    since: timedelta = DEFAULT_SINCE
    cluster: str | None = None


@dataclass(frozen=True)
class IncidentTimeline:
    """`timeline ALERT_ID`: the incident's whole timeline, posted as a Markdown file."""

    LABEL: ClassVar[str] = "timeline-incident"
    alert_id: str
    cluster: str | None = None


def parse_timeline(args: Args) -> Command:
    given = sorted(f for f in args.flags if f.partition("=")[0] == SINCE)
    args.flags -= set(given)
    args.take_flags()
    if len(given) > 1:
        raise args.bad("--since is given more than once")
    if not given:
        if not args.words:
            return ShowTimeline(cluster=args.finish())
        alert_id = _alert_id(args, args.words.pop(0))
        return IncidentTimeline(alert_id, args.finish())
    since = _since(args, given[0].partition("=")[2] or _duration_word(args))
    if args.words and _ALERT_ID.fullmatch(args.words[0].lower()):
        raise args.bad("an ALERT_ID takes no --since: the incident's own window is used")
    return ShowTimeline(since, args.finish())


def _duration_word(args: Args) -> str:
    """The DURATION of `--since DURATION` (the words lost their order to the flags)."""
    found = [w for w in args.words if durations.is_duration(w)] or args.words[:1]
    if not found:
        raise args.bad("--since needs a DURATION after it, like --since 2h")
    if len(found) > 1:
        raise args.bad("--since takes one DURATION")
    args.words.remove(found[0])
    return found[0]


def _since(args: Args, word: str) -> timedelta:
    try:
        since = durations.parse_duration(word)
    except ValueError as e:
        raise args.bad(f"--since {word}: {e}") from None
    if since > LONGEST_SINCE:
        longest = durations.format_duration(LONGEST_SINCE, "coarse")
        raise args.bad(
            f"--since {word} is too far back: the timeline goes back at most {longest} "
            "(the bot's memory of Kustomization, kai-config and APIService moves; Kubernetes "
            "itself keeps Events about an hour)"
        )
    return since


def _alert_id(args: Args, word: str) -> str:
    if _ALERT_ID.fullmatch(word.lower()):
        return word.lower()
    if durations.is_duration(word):
        raise args.bad(f"to look further back, write --since {word}")
    raise args.bad(
        f"{word!r} is not an ALERT_ID (6 letters and digits, as `{args.command_name} alerts` "
        "lists them)"
    )


SUBCOMMANDS = (
    Subcommand(
        "timeline",
        parse_timeline,
        "{command} timeline [--since DURATION]   (default --since 2h, at most --since 7d)\n"
        "{command} timeline ALERT_ID   (the incident's whole timeline, as a Markdown file in "
        "its thread)",
        "what changed, newest first: the bot's changes, Flux and Argo CD applies, KAI and KEDA "
        "rollouts, kai-config, the APIService, evictions, alerts; with ALERT_ID a postmortem "
        "draft",
        operator=False,
        makes=(ShowTimeline, IncidentTimeline),
    ),
)
