"""The slash command's shared grammar (docs/design.md §1.3): the words of one command (`Args`) and
what every subcommand reads the same way: `--cluster`, flags, NAMESPACE/NAME, durations, reasons.

Pure: no I/O, no clock, no Slack or Kubernetes. It checks shape only (names, kinds, durations,
flags); whether the cluster, the object or the user's rights exist is decided elsewhere. Each
feature's `commands` module reads its own subcommands with these; `bot.commands.registry`
dispatches to them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from bot.core import durations, errors

_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_NAME = re.compile(r"(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_NAMESPACE_EXPECTED = "expected lowercase letters, digits and '-'"
_NAME_EXPECTED = "expected lowercase letters, digits, '-' and '.'"
# Slack clients turn a typed "--" into a dash and straight quotes into curly ones.
_DASHES = ("\u2014", "\u2013")
_QUOTES = "\"'\u201c\u201d\u2018\u2019"


class Command(Protocol):
    """A parsed subcommand: a frozen dataclass of its feature's `commands` module, carrying the
    cluster of `--cluster NAME` (None: the first configured cluster)."""

    @property
    def cluster(self) -> str | None: ...


@dataclass
class Args:
    """The words of one command: subcommand, positional words in order, options."""

    sub: str | None
    words: list[str]
    flags: set[str]
    clusters: list[str]  # every --cluster value given; "" when the value is missing
    command_name: str
    usage: str  # what a BadCommand shows: this subcommand's usage, or every one

    @classmethod
    def split(cls, text: str, command_name: str, usage_for: Callable[[str | None], str]) -> Args:
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
        return cls(sub, words, flags, clusters, command_name, usage_for(sub))

    def bad(self, message: str) -> errors.BadCommand:
        return errors.BadCommand(message, self.usage)

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

    def take_scope(self) -> tuple[str | None, bool]:
        """`[NAMESPACE | --all-namespaces]`: the namespace (or None) and whether -A was given."""
        flags = self.take_flags("--all-namespaces", "-A")
        all_namespaces = bool(flags & {"--all-namespaces", "-A"})
        namespace = self.words.pop(0) if self.words else None
        if namespace is not None and all_namespaces:
            raise self.bad("give a NAMESPACE or --all-namespaces, not both")
        if namespace is not None and not _NAMESPACE.fullmatch(namespace):
            raise self.bad(f"{namespace!r} is not a namespace ({_NAMESPACE_EXPECTED})")
        return namespace, all_namespaces

    def take_duration(self) -> timedelta:
        word = self.take_word("a DURATION, like 30m, 2h, 1d or 1h30m")
        try:
            return durations.parse_duration(word)
        except ValueError as e:
            raise self.bad(str(e)) from None

    def take_for_duration(self) -> timedelta | None:
        """`[for DURATION]` before the reason of a pause or a suspend."""
        if self.words and self.words[0].lower() == "for":
            self.words.pop(0)
            return self.take_duration()
        if self.words and durations.is_duration(self.words[0]):
            # Without "for" the time would silently become the reason and the change last forever.
            raise self.bad(
                f"to {self.sub} for a time, write 'for {self.words[0]}' before the reason"
            )
        return None

    def take_reason(self) -> str:
        """The remaining words as one reason, without the quotes people wrap it in."""
        reason = " ".join(self.words)
        self.words = []
        if len(reason) >= 2 and reason[0] in _QUOTES and reason[-1] in _QUOTES:
            reason = reason[1:-1].strip()
        return reason


def simple(make: Callable[[str | None], Command]) -> Callable[[Args], Command]:
    """The parser of a subcommand that takes nothing but `--cluster`."""

    def parse(args: Args) -> Command:
        args.take_flags()
        return make(args.finish())

    return parse


def _normalize(word: str) -> str:
    """The word as typed: Slack clients may have turned a leading `--` into a dash."""
    return "--" + word[1:] if word.startswith(_DASHES) and len(word) > 1 else word


def _is_flag(word: str) -> bool:
    return (word.startswith("--") and len(word) > 2) or word in ("-A", "-h")
