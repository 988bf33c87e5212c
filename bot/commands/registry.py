"""The table of subcommands the features register, and what is read from it: the dispatch of
`/kai TEXT` to a subcommand's parser, `help`, each subcommand's usage, and the help listing.

Pure; imports only the shared grammar and `bot.core`. The table itself is filled above the
features (`bot/subcommands/`), so this package never imports a feature.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.commands.grammar import Args, Command
from bot.core import errors

_HELP_USAGE = "{command} help [COMMAND]"
_HELP_DESCRIPTION = "show this help, or how to use one command"
_VIEWERS = "For everyone allowed to view (access.viewers)"
_OPERATORS = "For operators only (access.operators)"
_CLUSTER_NOTE = (
    "Every command takes --cluster NAME; without it the first configured cluster is used."
)


@dataclass(frozen=True)
class Help:
    topic: str | None = None
    cluster: str | None = None


@dataclass(frozen=True)
class Subcommand:
    """One subcommand, as its feature's `commands` module registers it."""

    word: str
    parse: Callable[[Args], Command]
    usage: str  # `{command}` stands for the configured command name
    description: str  # its line in the help
    operator: bool  # only access.operators may run it (changes and alert actions)
    makes: tuple[type, ...]  # the parsed types `parse` returns


@dataclass(frozen=True)
class Extension:
    """Another feature's form of a registered subcommand (`resume KIND`, Flux, beside KEDA's
    `resume`). Its `parse` is tried first and returns None when the words are not its form; its
    usage follows the subcommand's; its description, which speaks of both forms, replaces it."""

    word: str
    parse: Callable[[Args], Command | None]
    usage: str
    description: str
    makes: tuple[type, ...]


class Grammar:
    """The slash command read through a table of subcommands (docs/design.md §1.3)."""

    def __init__(
        self,
        subcommands: Sequence[Subcommand],
        extensions: Sequence[Extension] = (),
        help_first: Sequence[str] = (),
    ) -> None:
        """`subcommands` in the order of the usage listing; the help lists `help_first` first,
        then the rest in that order."""
        own = Subcommand("help", self._parse_help, _HELP_USAGE, _HELP_DESCRIPTION, False, (Help,))
        self._table = {entry.word: entry for entry in (own, *subcommands)}
        if len(self._table) != len(subcommands) + 1:
            # A second feature's form of a word is an Extension, never a silent replacement.
            raise ValueError("a subcommand word is registered twice")
        for extension in extensions:
            self._table[extension.word] = _extended(self._table[extension.word], extension)
        self._help_order = sorted(self._table, key=lambda word: _rank(word, help_first))

    def parse(self, text: str, command_name: str = "/kai") -> Command:
        """Read the text after the slash command; empty text means help.

        Raises:
            BadCommand: the text does not parse; the message says what is wrong and `usage` holds
                the usage of that subcommand (of the closest one for a typo, of every subcommand
                when nothing is close).
        """
        args = Args.split(text, command_name, lambda sub: self.usage_for(sub, command_name))
        if args.sub is None or {"--help", "-h"} & args.flags:
            return Help(args.sub if args.sub in self._table else None, args.take_cluster())
        entry = self._table.get(args.sub)
        if entry is None:
            raise self._unknown(args, "command", args.sub)
        return entry.parse(args)

    def needs_operator(self, command: Command) -> bool:
        """True for what only `access.operators` may run: changes and alert actions."""
        return any(
            type(command) in entry.makes and entry.operator for entry in self._table.values()
        )

    def usage_for(self, sub: str | None, command_name: str = "/kai") -> str:
        """The usage lines of subcommand `sub`; of every subcommand for None or an unknown one."""
        if sub in self._table:
            return self._table[sub].usage.format(command=command_name)
        lines = [entry.usage.format(command=command_name) for entry in self._table.values()]
        return "\n".join([*lines, _CLUSTER_NOTE])

    def help_text(self, command_name: str = "/kai", topic: str | None = None) -> str:
        """What `help` shows: every command with a one-line description, grouped by who may run
        it. With a known `topic`, that subcommand's description and usage instead."""
        if topic in self._table:
            entry = self._table[topic]
            who = _OPERATORS if entry.operator else _VIEWERS
            usage = self.usage_for(topic, command_name)
            return f"{command_name} {topic}: {entry.description}. {who}.\n{usage}"
        sections = []
        for operator, title in ((False, _VIEWERS), (True, _OPERATORS)):
            lines = [
                f"  {command_name} {word}: {self._table[word].description}"
                for word in self._help_order
                if self._table[word].operator is operator
            ]
            sections.append(f"{title}:\n" + "\n".join(lines))
        footer = f"{_CLUSTER_NOTE}\nDetails: {command_name} help COMMAND"
        return "\n".join([*sections, footer])

    @property
    def words(self) -> tuple[str, ...]:
        """Every subcommand word, in the order of the usage listing."""
        return tuple(self._table)

    @property
    def types(self) -> frozenset[type]:
        """Every parsed type the table makes, `Help` included: what a dispatcher must run."""
        return frozenset(kind for entry in self._table.values() for kind in entry.makes)

    def _parse_help(self, args: Args) -> Command:
        args.take_flags()
        topic = args.words.pop(0).lower() if args.words else None
        if topic is not None and topic not in self._table:
            raise self._unknown(args, "help topic", topic)
        return Help(topic, args.finish())

    def _unknown(self, args: Args, what: str, word: str) -> errors.BadCommand:
        """An unknown subcommand or help topic: say so and suggest the closest, with that one's
        usage only; with no close match, every usage."""
        hint = difflib.get_close_matches(word, self._table, n=1)
        if hint:
            shown = self.usage_for(hint[0], args.command_name)
            return errors.BadCommand(f"unknown {what} {word!r} (did you mean {hint[0]}?)", shown)
        return errors.BadCommand(
            f"unknown {what} {word!r}", self.usage_for(None, args.command_name)
        )


def label_of(command: object) -> str:
    """The subcommand a parsed command is counted and logged as: its type's `LABEL` where it
    gives one (`CheckHealth` is `health`), else the type's name in lower case (`Pause`)."""
    kind = type(command)
    return str(getattr(kind, "LABEL", kind.__name__.lower()))


def _extended(entry: Subcommand, extension: Extension) -> Subcommand:
    def parse(args: Args) -> Command:
        parsed = extension.parse(args)
        return entry.parse(args) if parsed is None else parsed

    usage = f"{entry.usage}\n{extension.usage}"
    makes = entry.makes + extension.makes
    return Subcommand(entry.word, parse, usage, extension.description, entry.operator, makes)


def _rank(word: str, first: Sequence[str]) -> int:
    return first.index(word) if word in first else len(first)
