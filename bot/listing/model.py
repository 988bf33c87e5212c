"""What `/kai list` and the not-found hint find, as plain values. Pure data."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.models import RawObject, Verdict


@dataclass(frozen=True)
class Found:
    """An object of the name looked for: its kind, namespace and name."""

    kind: str
    namespace: str
    name: str


@dataclass(frozen=True)
class Listed:
    """One object as listed, with its verdict."""

    verdict: Verdict
    obj: RawObject
