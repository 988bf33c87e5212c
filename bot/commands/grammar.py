"""The slash command's grammar (docs/design.md §1.3): `parse_command` turns its text into a `Command`.

Pure: no I/O, no clock, no Slack or Kubernetes. It checks shape only (names, kinds, durations,
flags); whether the cluster, the object or the user's rights exist is decided elsewhere.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from bot.commands import usage
from bot.commands.parsed import (
    Ack,
    AlertAction,
    Alerts,
    Change,
    Command,
    Diagnose,
    FluxKind,
    FluxResume,
    Health,
    Help,
    ListKind,
    ListObjects,
    Pause,
    PauseKind,
    Pending,
    Query,
    Queues,
    Reconcile,
    ReconcileKind,
    ReconcileShortcut,
    Resume,
    ScaledJobs,
    Silence,
    Suspend,
    Sync,
    Unsilence,
    Why,
)
from bot.core import durations, errors

__all__ = [
    "KINDS",
    "USAGE",
    "Ack",
    "AlertAction",
    "Alerts",
    "Change",
    "Command",
    "Diagnose",
    "FluxResume",
    "Health",
    "Help",
    "ListObjects",
    "Pause",
    "PauseKind",
    "Pending",
    "Query",
    "Queues",
    "Reconcile",
    "ReconcileKind",
    "ReconcileShortcut",
    "Resume",
    "ScaledJobs",
    "Silence",
    "Suspend",
    "Sync",
    "Unsilence",
    "Why",
    "help_text",
    "needs_operator",
    "parse_command",
    "usage_for",
]

# The texts live in bot.commands.usage; these names keep the parser's public surface in one module.
USAGE = usage.USAGE
usage_for = usage.usage_for
help_text = usage.help_text

# Canonical kind, then the words that name it (case-insensitive), as docs/design.md §1.3 lists them.
_FLUX_KIND_WORDS: tuple[tuple[FluxKind, str, str], ...] = (
    ("HelmRelease", "helmrelease", "hr"),
    ("Kustomization", "kustomization", "ks"),
    ("GitRepository", "gitrepository", "gitrepo"),
    ("HelmRepository", "helmrepository", "helmrepo"),
    ("OCIRepository", "ocirepository", "ocirepo"),
)
_KIND_WORDS: tuple[tuple[ReconcileKind, str, str], ...] = (
    *_FLUX_KIND_WORDS,
    ("Application", "application", "app"),
)
KINDS: dict[str, ReconcileKind] = {word: kind for kind, *words in _KIND_WORDS for word in words}
_WITH_SOURCE_KINDS = ("HelmRelease", "Kustomization")
# The kinds `suspend` and `resume KIND` take: the Flux words of `KINDS` (not Application).
FLUX_KINDS: dict[str, FluxKind] = {
    word: kind for kind, *words in _FLUX_KIND_WORDS for word in words
}
_PAUSE_KINDS: dict[str, PauseKind] = {"scaledjob": "ScaledJob", "scaledobject": "ScaledObject"}
LIST_KINDS: dict[str, ListKind] = {**KINDS, **_PAUSE_KINDS, "sj": "ScaledJob", "so": "ScaledObject"}
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_NAME = re.compile(r"(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_NAMESPACE_EXPECTED = "expected lowercase letters, digits and '-'"
_NAME_EXPECTED = "expected lowercase letters, digits, '-' and '.'"
# Slack clients turn a typed "--" into a dash and straight quotes into curly ones.
_DASHES = ("\u2014", "\u2013")
_QUOTES = "\"'\u201c\u201d\u2018\u2019"


def parse_command(text: str, command_name: str = "/kai") -> Command:
    """Read the text after the slash command; empty text means help.

    Raises:
        BadCommand: the text does not parse; the message says what is wrong and `usage` holds
            the usage of that subcommand (of the closest one for a typo, of every subcommand
            when nothing is close).
    """
    args = _Args.split(text, command_name)
    if args.sub is None or {"--help", "-h"} & args.flags:
        return Help(args.sub if args.sub in usage.USAGE else None, args.take_cluster())
    parse = _PARSERS.get(args.sub)
    if parse is None:
        raise _unknown(args, "command", args.sub)
    return parse(args)


def needs_operator(command: Command) -> bool:
    """True for what only `access.operators` may run: changes and alert actions."""
    return not isinstance(command, Query)


def _unknown(args: _Args, what: str, word: str) -> errors.BadCommand:
    """An unknown subcommand or help topic: say so and suggest the closest, with that one's
    usage only; with no close match, every usage."""
    hint = difflib.get_close_matches(word, usage.USAGE, n=1)
    if hint:
        shown = usage.usage_for(hint[0], args.command_name)
        return errors.BadCommand(f"unknown {what} {word!r} (did you mean {hint[0]}?)", shown)
    return errors.BadCommand(f"unknown {what} {word!r}", usage.usage_for(None, args.command_name))


@dataclass
class _Args:
    """The words of one command: subcommand, positional words in order, options."""

    sub: str | None
    words: list[str]
    flags: set[str]
    clusters: list[str]  # every --cluster value given; "" when the value is missing
    command_name: str

    @classmethod
    def split(cls, text: str, command_name: str) -> _Args:
        words, flags, clusters = [], set(), []
        tokens = [_normalize(word) for word in text.split()]
        while tokens:
            token = tokens.pop(0)
            option, equals, value = token.partition("=")
            if option.lower() == "--cluster":
                if not equals and tokens and not _is_flag(tokens[0]):
                    value = tokens.pop(0)
                clusters.append(value)
            elif _is_flag(token):
                flags.add(token.lower() if token.startswith("--") else token)
            else:
                words.append(token)
        sub = words.pop(0).lower() if words else None
        return cls(sub, words, flags, clusters, command_name)

    def bad(self, message: str) -> errors.BadCommand:
        return errors.BadCommand(message, usage.usage_for(self.sub, self.command_name))

    def take_cluster(self) -> str | None:
        if len(self.clusters) > 1:
            raise self.bad("--cluster is given more than once")
        if self.clusters and not self.clusters[0]:
            raise self.bad("--cluster needs a NAME, like --cluster prod")
        return self.clusters[0] if self.clusters else None

    def take_flags(self, *allowed: str) -> set[str]:
        unknown = sorted(self.flags - set(allowed))
        if unknown:
            raise self.bad(f"{self.sub} does not take {unknown[0]}")
        return self.flags

    def take_word(self, what: str) -> str:
        if not self.words:
            raise self.bad(f"{self.sub} needs {what}")
        return self.words.pop(0)

    def finish(self) -> str | None:
        """The cluster, once every word has been used."""
        if self.words:
            raise self.bad(f"unexpected {self.words[0]!r}")
        return self.take_cluster()

    def take_object(self) -> tuple[str, str]:
        ref = self.take_word("NAMESPACE/NAME, like annia/annia-worker")
        namespace, slash, name = ref.partition("/")
        if not slash or not namespace or not name:
            raise self.bad(f"{ref!r} is not NAMESPACE/NAME (expected e.g. annia/annia-worker)")
        if not _NAMESPACE.fullmatch(namespace):
            raise self.bad(f"{namespace!r} is not a namespace ({_NAMESPACE_EXPECTED})")
        if not _NAME.fullmatch(name):
            raise self.bad(f"{name!r} is not an object name ({_NAME_EXPECTED})")
        return namespace, name

    def take_duration(self) -> timedelta:
        word = self.take_word("a DURATION, like 30m, 2h, 1d or 1h30m")
        try:
            return durations.parse_duration(word)
        except ValueError as e:
            raise self.bad(str(e)) from None

    def take_reason(self) -> str:
        """The remaining words as one reason, without the quotes people wrap it in."""
        reason = " ".join(self.words)
        self.words = []
        if len(reason) >= 2 and reason[0] in _QUOTES and reason[-1] in _QUOTES:
            reason = reason[1:-1].strip()
        return reason


def _normalize(word: str) -> str:
    """The word as typed: Slack clients may have turned a leading `--` into a dash."""
    return "--" + word[1:] if word.startswith(_DASHES) and len(word) > 1 else word


def _is_flag(word: str) -> bool:
    return (word.startswith("--") and len(word) > 2) or word in ("-A", "-h")


def _parse_simple(make: Callable[[str | None], Command]) -> Callable[[_Args], Command]:
    def parse(args: _Args) -> Command:
        args.take_flags()
        return make(args.finish())

    return parse


def _parse_help(args: _Args) -> Command:
    args.take_flags()
    topic = args.words.pop(0).lower() if args.words else None
    if topic is not None and topic not in usage.USAGE:
        raise _unknown(args, "help topic", topic)
    return Help(topic, args.finish())


def _parse_scaledjobs(args: _Args) -> Command:
    namespace, all_namespaces = _take_scope(args)
    return ScaledJobs(namespace, all_namespaces, args.finish())


def _take_scope(args: _Args) -> tuple[str | None, bool]:
    """`[NAMESPACE | --all-namespaces]`: the namespace (or None) and whether -A was given."""
    flags = args.take_flags("--all-namespaces", "-A")
    all_namespaces = bool(flags & {"--all-namespaces", "-A"})
    namespace = args.words.pop(0) if args.words else None
    if namespace is not None and all_namespaces:
        raise args.bad("give a NAMESPACE or --all-namespaces, not both")
    if namespace is not None and not _NAMESPACE.fullmatch(namespace):
        raise args.bad(f"{namespace!r} is not a namespace ({_NAMESPACE_EXPECTED})")
    return namespace, all_namespaces


def _parse_diagnose(args: _Args) -> Command:
    args.take_flags()
    word = args.take_word("kai, keda or NAMESPACE/DEPLOYMENT")
    if word.lower() in ("kai", "keda"):
        target: Literal["kai", "keda"] = "kai" if word.lower() == "kai" else "keda"
        return Diagnose(target, cluster=args.finish())
    args.words.insert(0, word)
    namespace, name = args.take_object()
    return Diagnose("", namespace, name, args.finish())


def _parse_pending(args: _Args) -> Command:
    namespace, all_namespaces = _take_scope(args)
    return Pending(namespace, all_namespaces, args.finish())


def _parse_why(args: _Args) -> Command:
    args.take_flags()
    namespace, name = args.take_object()
    return Why(namespace, name, args.finish())


def _parse_list(args: _Args) -> Command:
    word = args.take_word("a KIND, like hr, ks, app, sj or so").lower()
    kind = LIST_KINDS.get(word)
    if kind is None:
        hint = difflib.get_close_matches(word, LIST_KINDS, n=1)
        maybe = f" (did you mean {hint[0]}?)" if hint else ""
        raise args.bad(f"unknown kind {word!r}{maybe}")
    namespace, all_namespaces = _take_scope(args)
    return ListObjects(kind, namespace, all_namespaces, args.finish())


def _parse_pause(args: _Args) -> Command:
    args.take_flags()
    kind = _take_pause_kind(args)
    namespace, name = args.take_object()
    duration = _take_for_duration(args)
    reason = args.take_reason()
    return Pause(kind, namespace, name, duration, reason, args.finish())


def _take_for_duration(args: _Args) -> timedelta | None:
    """`[for DURATION]` before the reason of a pause or a suspend."""
    if args.words and args.words[0].lower() == "for":
        args.words.pop(0)
        return args.take_duration()
    if args.words and _is_duration(args.words[0]):
        # Without "for" the time would silently become the reason and the change last forever.
        raise args.bad(f"to {args.sub} for a time, write 'for {args.words[0]}' before the reason")
    return None


def _parse_resume(args: _Args) -> Command:
    args.take_flags()
    flux_kind = _take_flux_kind(args)
    if flux_kind is not None:
        namespace, name = args.take_object()
        return FluxResume(flux_kind, namespace, name, args.finish())
    kind = _take_pause_kind(args)
    namespace, name = args.take_object()
    return Resume(kind, namespace, name, args.finish())


def _parse_suspend(args: _Args) -> Command:
    args.take_flags()
    kind = _take_flux_kind(args)
    if kind is None:
        raise _flux_kind_needed(args)
    namespace, name = args.take_object()
    duration = _take_for_duration(args)
    reason = args.take_reason()
    return Suspend(kind, namespace, name, duration, reason, args.finish())


def _take_flux_kind(args: _Args) -> FluxKind | None:
    """A leading Flux KIND word, or None (for `resume`, no KIND means KEDA's resume)."""
    word = args.words[0].lower() if args.words else ""
    if word in ("application", "app"):
        raise args.bad(
            f"{args.sub} is for Flux objects; an Argo CD Application stops syncing when its "
            "automated sync policy is turned off in Git"
        )
    return FLUX_KINDS[args.words.pop(0).lower()] if word in FLUX_KINDS else None


def _flux_kind_needed(args: _Args) -> errors.BadCommand:
    kinds = ", ".join(f"{long}|{short}" for _, long, short in _FLUX_KIND_WORDS)
    word = args.words[0] if args.words else ""
    if not word or "/" in word:
        return args.bad(f"{args.sub} needs a Flux KIND ({kinds}) before NAMESPACE/NAME")
    return args.bad(f"unknown kind {word.lower()!r} (expected one of {kinds})")


def _take_pause_kind(args: _Args) -> PauseKind:
    if args.words and args.words[0].lower() in _PAUSE_KINDS:
        return _PAUSE_KINDS[args.words.pop(0).lower()]
    return "ScaledJob"


def _parse_reconcile(args: _Args) -> Command:
    flags = args.take_flags("--with-source", "--hard", "--force", "--reset")
    with_source, hard = "--with-source" in flags, "--hard" in flags
    force, reset = "--force" in flags, "--reset" in flags
    word = args.take_word("a KIND and NAMESPACE/NAME, or kai or keda").lower()
    if word in ("kai", "keda"):
        target: Literal["kai", "keda"] = "kai" if word == "kai" else "keda"
        cluster = args.finish()
        return ReconcileShortcut(target, with_source, hard, cluster, force, reset)
    kind = KINDS.get(word)
    if kind is None:
        kinds = ", ".join(f"{long}|{short}" for _, long, short in _KIND_WORDS)
        raise args.bad(f"unknown kind {word!r} (expected one of {kinds})")
    if with_source and kind not in _WITH_SOURCE_KINDS:
        raise args.bad(f"--with-source is only for helmrelease and kustomization, not {word}")
    if hard and kind != "Application":
        raise args.bad(f"--hard is only for application (Argo CD hard refresh), not {word}")
    for flag in sorted({"--force", "--reset"} & flags):
        if kind != "HelmRelease":
            raise args.bad(f"{flag} is only for helmrelease (as flux reconcile hr), not {word}")
    namespace, name = args.take_object()
    return Reconcile(kind, namespace, name, with_source, hard, args.finish(), force, reset)


def _parse_sync(args: _Args) -> Command:
    args.take_flags()
    namespace, name = args.take_object()
    return Sync(namespace, name, args.finish())


def _parse_alert(make: Callable[[str, str | None], Command]) -> Callable[[_Args], Command]:
    def parse(args: _Args) -> Command:
        args.take_flags()
        alert_id = args.take_word("an ALERT_ID")
        return make(alert_id, args.finish())

    return parse


def _parse_silence(args: _Args) -> Command:
    args.take_flags()
    alert_id = args.take_word("an ALERT_ID and a DURATION")
    if args.words and args.words[0].lower() == "for":
        args.words.pop(0)
    duration = args.take_duration()
    return Silence(alert_id, duration, args.take_reason(), args.finish())


def _is_duration(word: str) -> bool:
    try:
        durations.parse_duration(word)
    except ValueError:
        return False
    return True


_PARSERS: dict[str, Callable[[_Args], Command]] = {
    "help": _parse_help,
    "health": _parse_simple(Health),
    "scaledjobs": _parse_scaledjobs,
    "pause": _parse_pause,
    "resume": _parse_resume,
    "reconcile": _parse_reconcile,
    "sync": _parse_sync,
    "suspend": _parse_suspend,
    "alerts": _parse_simple(Alerts),
    "ack": _parse_alert(Ack),
    "silence": _parse_silence,
    "unsilence": _parse_alert(Unsilence),
    "diagnose": _parse_diagnose,
    "queues": _parse_simple(Queues),
    "pending": _parse_pending,
    "why": _parse_why,
    "list": _parse_list,
}
