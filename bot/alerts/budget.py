"""A state document's byte budget, and what gives way when it is reached. Pure: no I/O, no clock.

A real API server refuses a ConfigMap over 1 MiB (`Too long: may not be more than 1048576
bytes`), so each document (one cluster's alert state, or the fleet incidents') is kept within
`BUDGET` bytes of JSON before every save, leaving room for the object's metadata and the damaged
text a save may keep aside. What gives way, in this order: eviction notice threads, oldest first
(those owing nothing before those still owing a reply), then recently closed incidents
(`recent`), oldest first. Never what an open or closing incident still owes Slack (its outbox,
its root, its diagnosis), nor the cluster's own notices: a document that cannot shed enough is
saved all the same, so a new page is never stopped by the budget. Reaching it is said in the
alert channel once a day at most (`budget_told`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TypeVar

from bot.alerts import outbox, render_budget
from bot.alerts.document import dump_cluster, incident_bytes, thread_bytes
from bot.alerts.model import AlertState, ClusterAlerts
from bot.alerts.notice_thread import NoticeThread

BUDGET = 800_000  # bytes of JSON per document; the API server's limit is 1 048 576 per object
TOLD_AGAIN_AFTER = timedelta(days=1)  # reaching the budget is said at most this often
NOTICE_ROOM = 1_000  # bytes kept for the notice itself, owed in the same document
P = TypeVar("P", NoticeThread, AlertState)


@dataclass(frozen=True)
class Fitted:
    """The state to save (and its JSON), and what gave way to bring it within the budget."""

    state: ClusterAlerts
    text: str
    threads: tuple[str, ...] = ()  # the keys of the notice threads dropped, oldest first
    closed: tuple[str, ...] = ()  # the incidents dropped from `recent`, oldest first

    @property
    def gave_way(self) -> bool:
        return bool(self.threads or self.closed)


def fit(state: ClusterAlerts, now: datetime, budget: int = BUDGET) -> Fitted:
    """`state` within `budget` bytes of JSON, shedding in the stated order, and owing the
    notice that says so unless it was said within TOLD_AGAIN_AFTER. What no order may shed
    stays: the result may still be over `budget`."""
    text = dump_cluster(state)
    if len(text) <= budget:
        return Fitted(state, text)
    over = len(text) - budget + NOTICE_ROOM
    threads, over = _first_covering(_shed_order(state.threads), thread_bytes, over)
    closed, over = _first_covering(state.recent, incident_bytes, over)
    if not threads and not closed:
        return Fitted(state, text)
    gone = {t.key for t in threads}
    shed = replace(
        state,
        threads=tuple(t for t in state.threads if t.key not in gone),
        recent=state.recent[len(closed) :],
        forgotten=_horizon(state, threads),
    )
    shed = _told(shed, now, budget, len(threads), len(closed))
    keys = tuple(t.key for t in threads)
    return Fitted(shed, dump_cluster(shed), keys, tuple(a.incident for a in closed))


def _shed_order(threads: Sequence[NoticeThread]) -> list[NoticeThread]:
    """Threads owing nothing first, then those still owing; each oldest (by its latest
    occurrence) first."""
    return sorted(threads, key=lambda t: (bool(t.outbox), t.last))


def _first_covering(
    places: Sequence[P], size: Callable[[P], int], over: int
) -> tuple[list[P], int]:
    """The first of `places` whose bytes cover `over`, and what is still over after them."""
    shed: list[P] = []
    for place in places:
        if over <= 0:
            break
        shed.append(place)
        over -= size(place)
    return shed, over


def _horizon(state: ClusterAlerts, threads: list[NoticeThread]) -> datetime | None:
    """`forgotten` moved past the threads dropped, so what they told is not told again."""
    latest = [t.last for t in threads]
    if state.forgotten is not None:
        latest.append(state.forgotten)
    return max(latest) if latest else None


def _told(
    state: ClusterAlerts, now: datetime, budget: int, threads: int, closed: int
) -> ClusterAlerts:
    """The state owing the notice, once a TOLD_AGAIN_AFTER at most."""
    if state.budget_told is not None and now - state.budget_told < TOLD_AGAIN_AFTER:
        return state
    text = render_budget.budget_notice(state.cluster, budget, threads, closed)
    notice_id = f"{state.cluster}:budget:{now.strftime('%Y%m%dT%H%M%S')}"
    return replace(outbox.owe_notice(state, notice_id, text), budget_told=now)
