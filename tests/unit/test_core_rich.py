"""Message text with mentions as data (issue 22): composed like strings, never one until the end."""

from __future__ import annotations

import pytest

from bot.core.rich import Mention, Rich, rich_cut, rich_join, rich_text

WHO = Mention("U0OPERATOR")


def test_pieces_compose_in_order_and_empty_strings_vanish() -> None:
    text = rich_text("a", "", Rich((WHO,)), "b")
    assert text.parts == ("a", WHO, "b")
    assert ("x" + text).parts == ("x", "a", WHO, "b")
    assert (text + "y").parts == ("a", WHO, "b", "y")
    assert (text + rich_text("z")).parts == ("a", WHO, "b", "z")


def test_join_puts_the_separator_between_items_only() -> None:
    assert rich_join(", ", []).parts == ()
    assert rich_join(", ", [Rich((WHO,))]).parts == (WHO,)
    assert rich_join(", ", ["a", Rich((WHO,)), "b"]).parts == ("a", ", ", WHO, ", ", "b")


def test_plain_text_length_and_truth_are_those_a_reader_would_count() -> None:
    text = rich_text("by ", WHO, " and ", Mention("@oncall"))
    assert str(text) == "by @U0OPERATOR and @oncall"
    assert len(text) == len("by <@U0OPERATOR> and <@@oncall>")
    assert not Rich() and not rich_text("") and rich_text(WHO)
    with pytest.raises(TypeError, match="lose its mentions"):
        format(text)


@pytest.mark.parametrize(
    ("limit", "parts"),
    [
        (100, ("x" * 10, WHO, "y" * 10)),  # fits: as it is
        (33, ("x" * 10, WHO, "y" * 10)),  # exactly fits
        (32, ("x" * 10, WHO, "y" * 8, "…")),  # cut in the text after the mention
        (24, ("x" * 10, WHO, "…")),  # the mention whole, nothing after it
        (23, ("x" * 10, "…")),  # no room for the whole mention: none of it
        (5, ("x" * 4, "…")),
    ],
)
def test_a_cut_keeps_mentions_whole_and_ends_with_the_note(
    limit: int, parts: tuple[object, ...]
) -> None:
    text = rich_text("x" * 10, WHO, "y" * 10)
    assert rich_cut(text, limit, "…").parts == parts
