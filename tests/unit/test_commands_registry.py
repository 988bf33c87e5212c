"""The table of subcommands (`bot.commands.registry`): what a feature registers is what the
dispatch, the usages and the help read; a second form of a word extends it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from bot.commands.grammar import Args
from bot.commands.registry import Extension, Grammar, Help, Subcommand
from bot.core import errors


@dataclass(frozen=True)
class Poke:
    target: str
    cluster: str | None = None


def parse_poke(args: Args) -> Poke:
    args.take_flags()
    target = args.take_word("a TARGET")
    return Poke(target, args.finish())


def parse_loud_poke(args: Args) -> Poke | None:
    """`poke loud TARGET`; None for any other poke."""
    if not args.words or args.words[0] != "loud":
        return None
    args.words.pop(0)
    return Poke(args.take_word("a TARGET").upper(), args.finish())


POKE = Subcommand("poke", parse_poke, "{command} poke TARGET", "poke it", True, (Poke,))
LOUD = Extension("poke", parse_loud_poke, "{command} poke loud TARGET", "poke it, maybe loudly", ())


def test_a_registered_subcommand_is_dispatched_and_described() -> None:
    grammar = Grammar([POKE])

    assert grammar.parse("poke x --cluster c") == Poke("x", "c")
    assert grammar.parse("poke --help") == Help("poke")
    assert grammar.needs_operator(Poke("x"))
    assert grammar.usage_for("poke", "/z") == "/z poke TARGET"
    assert "  /z poke: poke it" in grammar.help_text("/z").split("For operators only")[1]


def test_an_extension_is_tried_first_and_adds_its_usage() -> None:
    grammar = Grammar([POKE], [LOUD])

    assert grammar.parse("poke loud x") == Poke("X")
    assert grammar.parse("poke x") == Poke("x")
    assert grammar.usage_for("poke", "/z") == "/z poke TARGET\n/z poke loud TARGET"
    assert grammar.help_text("/z", "poke").startswith("/z poke: poke it, maybe loudly.")


def test_a_bad_command_shows_the_usage_of_its_subcommand() -> None:
    with pytest.raises(errors.BadCommand) as caught:
        Grammar([POKE]).parse("poke")

    assert str(caught.value) == "poke needs a TARGET"
    assert caught.value.usage == "/kai poke TARGET"


def test_a_word_registered_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        Grammar([POKE, POKE])
