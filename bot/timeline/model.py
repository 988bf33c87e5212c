"""What a timeline is made of: entries (when, what, who, why), how far back each source goes,
and the timeline of one cluster over a window. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

# Where an entry comes from, as its line names it.
BOT = "kai-chatops"
FLUX = "Flux"
ARGO = "Argo CD"
ROLLOUT = "rollout"
KAI = "KAI"
APISERVICE = "APIService"
EVICTION = "eviction"
ALERT = "alert"


@dataclass(frozen=True)
class Entry:
    """One thing that happened: when, to what, what, and (where known) who, why, approved by.
    `who` and `approved_by` are Slack user IDs for the bot's own changes, else names."""

    at: datetime
    source: str
    subject: str
    what: str
    who: str = ""
    why: str = ""
    approved_by: str = ""


@dataclass(frozen=True)
class Reach:
    """A source that does not go back to the window's start (or could not be read): how far
    back it goes (`since`, None when unknown), in words."""

    source: str
    since: datetime | None
    note: str


@dataclass(frozen=True)
class Timeline:
    """What changed on `cluster` between `start` and `end`: newest first."""

    cluster: str
    start: datetime
    end: datetime
    entries: tuple[Entry, ...]
    reaches: tuple[Reach, ...] = ()


def newest_first(entries: list[Entry]) -> tuple[Entry, ...]:
    """The entries newest first; at the same moment in a stable order."""
    return tuple(sorted(entries, key=lambda e: (e.at, e.source, e.subject, e.what), reverse=True))


def within(at: datetime | None, start: datetime, end: datetime) -> bool:
    return at is not None and start <= at <= end
