"""Message text whose mentions are data, not markup: mrkdwn pieces and `Mention`s side by side.

A mention is never written into a string before the last step of rendering
(`bot.slack.blocks.fit_message` formats it from the ID it holds), so no text from the cluster or a
user can imitate one, and no marker or secret ever sits in a string. Pure; knows no Slack syntax.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Mention:
    """Someone the bot mentions on its own account: a user ID, a user-group ID, or (shown as
    text, notifying nobody) anything else."""

    entry: str


Part = str | Mention


@dataclass(frozen=True)
class Rich:
    """mrkdwn pieces (the renderer's own markup and escaped text) and mentions, in order.

    `str(rich)` is plain text for logs and errors (a mention as `@ID`); an f-string cannot
    take one (it would lose the mentions), so `+`, `rich_join` and `rich_text` compose it.
    """

    parts: tuple[Part, ...] = ()

    def __add__(self, other: str | Rich) -> Rich:
        return rich_text(self, other)

    def __radd__(self, other: str) -> Rich:
        return rich_text(other, self)

    def __bool__(self) -> bool:
        return any(self.parts)

    def __len__(self) -> int:
        """About the length Slack counts: a mention as `<@ID>`."""
        return sum(len(p) if isinstance(p, str) else len(p.entry) + 3 for p in self.parts)

    def __format__(self, spec: str) -> str:
        raise TypeError("a Rich text in an f-string would lose its mentions: use rich_text")

    def __str__(self) -> str:
        return "".join(p if isinstance(p, str) else f"@{p.entry.lstrip('@')}" for p in self.parts)


def rich_text(*pieces: str | Rich | Mention) -> Rich:
    """The pieces one after another (strings are mrkdwn, escaped by whoever made them)."""
    parts: list[Part] = []
    for piece in pieces:
        parts.extend(piece.parts if isinstance(piece, Rich) else (piece,))
    return Rich(tuple(p for p in parts if p != ""))


def rich_join(separator: str, items: Iterable[str | Rich]) -> Rich:
    """Like `separator.join(items)`, for items some of which hold mentions."""
    pieces: list[str | Rich] = []
    for index, item in enumerate(items):
        pieces.extend((separator, item) if index else (item,))
    return rich_text(*pieces)


def rich_cut(text: Rich, limit: int, note: str) -> Rich:
    """`text` within about `limit` characters, mentions kept whole, ending with `note` when cut."""
    if len(text) <= limit:
        return text
    kept: list[Part] = []
    room = limit - len(note)
    for part in text.parts:
        size = len(Rich((part,)))
        if size > room:
            kept.append(part[:room] if isinstance(part, str) else "")
            break
        kept.append(part)
        room -= size
    return rich_text(*kept, note)
