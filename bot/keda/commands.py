"""`/kai scaledjobs`, `pause` and `resume` as the slash command reads them (docs/design.md §1.3):
their parsed types, parsers, usage and help lines. Pure. (`resume KIND`, Flux, is
`bot.gitops.commands`'s extension of `resume`.)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from bot.commands.grammar import Args
from bot.commands.kinds import PAUSE_KINDS, PausableKind
from bot.commands.registry import Subcommand


@dataclass(frozen=True)
class ScaledJobs:
    namespace: str | None = None  # None and not all_namespaces: the configured keda.namespaces
    all_namespaces: bool = False
    cluster: str | None = None


@dataclass(frozen=True)
class Pause:
    kind: PausableKind
    namespace: str
    name: str
    duration: timedelta | None  # None: until resumed
    reason: str
    cluster: str | None = None


@dataclass(frozen=True)
class Resume:
    kind: PausableKind
    namespace: str
    name: str
    cluster: str | None = None


def parse_scaledjobs(args: Args) -> ScaledJobs:
    namespace, all_namespaces = args.take_scope()
    return ScaledJobs(namespace, all_namespaces, args.finish())


def parse_pause(args: Args) -> Pause:
    args.take_flags()
    kind = _take_pause_kind(args)
    namespace, name = args.take_object()
    duration = args.take_for_duration()
    reason = args.take_reason()
    return Pause(kind, namespace, name, duration, reason, args.finish())


def parse_resume(args: Args) -> Resume:
    args.take_flags()
    kind = _take_pause_kind(args)
    namespace, name = args.take_object()
    return Resume(kind, namespace, name, args.finish())


def _take_pause_kind(args: Args) -> PausableKind:
    if args.words and args.words[0].lower() in PAUSE_KINDS:
        return PAUSE_KINDS[args.words.pop(0).lower()]
    return "ScaledJob"


SUBCOMMANDS = (
    Subcommand(
        "scaledjobs",
        parse_scaledjobs,
        "{command} scaledjobs [NAMESPACE | --all-namespaces] [--cluster NAME]",
        "list KEDA ScaledJobs with their health and whether they are paused",
        operator=False,
        makes=(ScaledJobs,),
    ),
    Subcommand(
        "pause",
        parse_pause,
        "{command} pause NAMESPACE/NAME [for DURATION] [REASON...]\n"
        "{command} pause scaledobject|so NAMESPACE/NAME [for DURATION] [REASON...]\n"
        "  e.g. {command} pause annia/annia-worker for 2h node drain\n"
        "  DURATION: 30m, 2h, 1d, 1h30m; without it the pause lasts until resumed\n"
        "  REASON: free text, posted in the channel and recorded on the object\n"
        "  KIND words: scaledjob|sj (the default), scaledobject|so",
        "pause a KEDA ScaledJob (or ScaledObject), optionally for a time; asks to confirm",
        operator=True,
        makes=(Pause,),
    ),
    Subcommand(
        "resume",
        parse_resume,
        "{command} resume [scaledobject|so] NAMESPACE/NAME   (KEDA: a paused ScaledJob or "
        "ScaledObject)",
        "resume a paused ScaledJob or ScaledObject; asks to confirm",
        operator=True,
        makes=(Resume,),
    ),
)
