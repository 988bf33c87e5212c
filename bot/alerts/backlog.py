"""How long the alert outbox has owed Slack: every effect stamped when first saved, and the age
of the oldest one still owed (served on `/metrics`). Pure: `now` is passed in."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TypeVar

from bot.alerts.model import AlertState, ClusterAlerts, Owed
from bot.alerts.notice_thread import NoticeThread

P = TypeVar("P", AlertState, NoticeThread)


def stamped(state: ClusterAlerts, now: datetime) -> ClusterAlerts:
    """`state` with every owed effect not stamped yet stamped `now` (the save that first
    stores it); the state itself when nothing is new."""
    if all(o.owed_at is not None for o in _every_owed(state)):
        return state
    return replace(
        state,
        notices=_stamp(state.notices, now),
        alerts={k: _stamp_place(a, now) for k, a in state.alerts.items()},
        reminders={k: _stamp_place(a, now) for k, a in state.reminders.items()},
        closing=tuple(_stamp_place(a, now) for a in state.closing),
        threads=tuple(_stamp_place(t, now) for t in state.threads),
    )


def oldest_age(state: ClusterAlerts, now: datetime) -> timedelta:
    """How long the oldest effect the state owes has been owed (zero when it owes nothing; an
    effect not saved yet was owed just now)."""
    since = [o.owed_at or now for o in _every_owed(state)]
    return max(timedelta(0), now - min(since)) if since else timedelta(0)


def _every_owed(state: ClusterAlerts) -> Iterator[Owed]:
    yield from state.notices
    for place in (*state.alerts.values(), *state.reminders.values(), *state.closing):
        yield from place.outbox
    for thread in state.threads:
        yield from thread.outbox


def _stamp(outbox: tuple[Owed, ...], now: datetime) -> tuple[Owed, ...]:
    return tuple(o if o.owed_at is not None else replace(o, owed_at=now) for o in outbox)


def _stamp_place(place: P, now: datetime) -> P:
    if all(o.owed_at is not None for o in place.outbox):
        return place
    return replace(place, outbox=_stamp(place.outbox, now))
