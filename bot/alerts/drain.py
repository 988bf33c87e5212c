"""The drain: sends what the alert outboxes owe, in order per incident, exactly once.

For each incident (and the cluster's notices, and each notice thread: an eviction told in its
namespace's channel, its root and replies delivered and converged as an incident's) it takes
the head of the outbox and:
- an edit: sends it (an edit is idempotent: an unknown outcome is simply sent again);
- a post that was attempted before with an unknown outcome: looks for it in Slack by its effect
  ID, newer than the attempt's anchor (a Slack ts), and adopts the copy it finds; a root not
  found is posted again only `landing_bound` after it was first looked for, so a slow copy
  still on its way is found rather than doubled (a reply is posted again at once);
- otherwise: stores a fresh attempt (its ID, this replica, its anchor) *before* posting,
  posts with the effect ID in the message metadata, then records the ts with a compare-and-set
  on the attempt ID (`bot.alerts.outbox.confirmed`); a copy superseded is deleted;
- the sweep of a resolved incident: converges its channel (`bot.alerts.converge`) until
  `SETTLE_PASSES` drains in a row saw it agree; the drain goes on converging it for `settle`.
Only the Lease holder sends: it is asked before every call, and a call is abandoned when the
holder's time to act ends. An incident with a call of unknown outcome or an uncertain record,
and every open and recently closed incident when this replica becomes the holder, is
converged at every drain for `settle` (while such a call may still land), and until its
channel agreed. Then what the incidents owe PagerDuty (`PageSender`). Nothing raises from here.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import secrets
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeVar

from bot.alerts import outbox, pages
from bot.alerts.converge import Converger
from bot.alerts.delivery import AlertMessages, Attempt, CallOutcome, Sent
from bot.alerts.model import AlertState, ClusterAlerts, EffectKind, Owed
from bot.alerts.notice_thread import NoticeThread
from bot.alerts.outbox import NOTICES, Confirmation, Place
from bot.alerts.pages import PageSender
from bot.alerts.reconcile import Reconciler
from bot.alerts.store import AlertStore, Repair, StoreUnavailable, update
from bot.core.models import Sleep
from bot.slack import budget

log = logging.getLogger(__name__)

SLACK_BACKOFFS = (1.0, 2.0, 4.0)  # seconds between tries of an effect within one drain
T = TypeVar("T")
StateChange = Callable[[ClusterAlerts], tuple[ClusterAlerts, T]]


@dataclass(frozen=True)
class Poster:
    """Who this replica is, whether it may post now and for how long, and its clocks.

    `acting_left`: seconds left of this replica's right to act (None: no limit, no Lease);
    `term`: changes whenever this replica becomes the Lease holder again;
    `landing_bound`: seconds a call of ours may still land after it was sent;
    `settle`: how long a resolved incident is still converged (a deposed replica's calls may
    land until then: its acting window, a Lease, and the Slack timeout).
    """

    identity: str
    is_holder: Callable[[], bool]
    clock: Callable[[], datetime]
    acting_left: Callable[[], float | None] = lambda: None
    term: Callable[[], int] = lambda: 0
    monotonic: Callable[[], float] = time.monotonic
    landing_bound: float = 0.0
    settle: timedelta = timedelta(0)


class Progress(enum.Enum):
    """How far one step on an outbox's head got (the drain's own word: not the state
    machine's `Transition`, nor a Slack call's `CallOutcome`)."""

    MOVED = "moved"  # delivered, adopted or given up: go on with the next
    RETRY = "retry"  # failed: try again after a backoff
    LATER = "later"  # waits for a later drain


@dataclass
class _Memory:
    """What this process remembers between drains of one cluster."""

    absent: dict[tuple[str, str], float] = field(default_factory=dict)  # attempt -> first miss
    # Attempts whose call Slack answered (if with a 5xx): not found means not applied.
    answered: set[tuple[str, str]] = field(default_factory=set)


class Drain:
    """Delivers each cluster's outboxes; one drain per cluster at a time in this process."""

    def __init__(
        self,
        store: AlertStore,
        messages: AlertMessages,
        poster: Poster,
        channel: str,
        *,
        repair: Repair | None = None,
        sleep: Sleep = asyncio.sleep,
        backoffs: Sequence[float] = SLACK_BACKOFFS,
        pager: PageSender | None = None,
    ) -> None:
        self._store = store
        self._pager = pager or pages.NO_PAGES
        self._repair = repair
        self._messages = messages
        self._poster = poster
        self._channel = channel
        self._sleep = sleep
        self._backoffs = tuple(backoffs)
        self._converger = Converger(messages, poster.identity, poster.acting_left)
        self._looks = Reconciler(self._converger, messages.channels, poster)
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._waiting: defaultdict[str, int] = defaultdict(int)  # drains waiting for the lock
        self._memory: defaultdict[str, _Memory] = defaultdict(_Memory)

    async def drain(
        self,
        cluster: str,
        only: Collection[str] | None = None,
        *,
        known: ClusterAlerts | None = None,
    ) -> None:
        """Send everything `cluster` owes that Slack takes now (of the incidents `only`, if
        given), then look at the channels due a look. `known`: the state as the caller has
        just loaded or saved it; when it owes nothing and no look is due, there is nothing to
        do, and the store is not read again (a check at rest). What is owed goes first: a new
        page never waits behind a read of the channel. Never raises for Slack or store
        trouble (each is logged; what is left is tried at the next drain)."""
        if known is not None and self._is_idle(cluster, known):
            return
        self._waiting[cluster] += 1  # a drain that looks at channels gives way to this one
        async with self._locks[cluster]:
            self._waiting[cluster] -= 1
            try:
                await self._pager.drain(cluster)  # what is due now waits for no Slack trouble
                state = (await self._store.load(cluster)).state
                owing = outbox.owing(state)
                for where in owing if only is None else [w for w in owing if w in only]:
                    await self._drain_one(cluster, where)
                await self._pager.drain(cluster)  # a trigger whose thread was just posted
                state = (await self._store.load(cluster)).state
                await self._looks.reconcile(cluster, state, lambda: self._waiting[cluster] > 0)
            except StoreUnavailable as e:
                log.error("alerts of cluster %s: cannot use the state store: %s", cluster, e)

    def _is_idle(self, cluster: str, state: ClusterAlerts) -> bool:
        """Whether a drain of `state` would do nothing: no outbox holds anything, and no
        look at the channel is due (`Reconciler.is_due`)."""
        return not self._looks.is_due(cluster) and pages.owes_nothing(state)

    async def _drain_one(self, cluster: str, where: str) -> None:
        """The outbox of one incident (or of the notices), head first, until empty or stuck."""
        tries = 0
        while self._poster.is_holder():
            state = (await self._store.load(cluster)).state
            owed = outbox.head(state, where)
            if owed is None or owed.awaits_evidence:
                return  # an empty diagnosis waits for the holder's check to gather it
            step = await self._deliver(cluster, where, outbox.find_place(state, where), owed)
            if step is Progress.MOVED:
                tries = 0
                continue
            if step is Progress.LATER:
                return
            if tries >= len(self._backoffs):
                log.warning("%s: left for the next drain", owed.effect_id)
                return
            await self._sleep(self._backoffs[tries])
            tries += 1

    async def _deliver(self, cluster: str, where: str, place: Place | None, owed: Owed) -> Progress:
        """One step on the head, at the urgency of who waits for it (`_priority`)."""
        with budget.urgency(_priority(place, owed)):
            return await self._step(cluster, where, place, owed)

    async def _step(self, cluster: str, where: str, place: Place | None, owed: Owed) -> Progress:
        if isinstance(place, NoticeThread):  # its root, or a reply under it once it is posted
            thread = place.root_ts if owed.kind is not EffectKind.ROOT else ""
            return await self._send_new(cluster, where, None, owed, (place.channel, thread))
        alert = place
        if owed.kind is EffectKind.EDIT:
            return await self._edit(cluster, where, alert, owed)
        if owed.kind is EffectKind.SWEEP:
            return await self._sweep(cluster, where, alert)
        if owed.kind is EffectKind.REPLY and (alert is None or not alert.root_ts):
            log.error("%s: a reply owed before its root; dropped", owed.effect_id)
            await self._change(cluster, _drop(where, owed))
            return Progress.MOVED
        channel = alert.root_channel if alert is not None else self._channel
        thread = alert.root_ts if alert is not None and owed.kind is EffectKind.REPLY else ""
        return await self._send_new(cluster, where, alert, owed, (channel, thread))

    async def _send_new(
        self,
        cluster: str,
        where: str,
        alert: AlertState | None,
        owed: Owed,
        place: tuple[str, str],
    ) -> Progress:
        """A root, reply or notice: looked for first when an attempt's outcome is unknown."""
        channel, thread = place
        if owed.was_attempted:
            copies = await self._messages.find_copies(
                channel, owed.effect_id, thread_ts=thread, after=owed.anchor
            )
            if copies is None:
                return Progress.RETRY  # "don't know" is never "absent"
            if copies:
                await self._change(cluster, _adopt(where, owed, channel, copies[0]))
                await self._converger.delete(channel, copies[1:])
                # Other tries of it may still be on their way: look until they cannot land.
                root = alert.root_anchor if alert is not None and alert.root_anchor else owed.anchor
                ours = owed.attempted_by == self._poster.identity
                self._looks.watch_looks(cluster, [(where, channel, root)], eager=True, ours=ours)
                return Progress.MOVED
            if owed.kind is EffectKind.ROOT and not self._waited_out(cluster, owed):
                return Progress.LATER
        return await self._post(cluster, where, alert, owed, (channel, thread))

    def _waited_out(self, cluster: str, owed: Owed) -> bool:
        """Whether a root not found has been missing for `landing_bound` on this replica's
        clock: only then can no slow copy of it still land, and a second page is no risk. A
        call Slack answered (a 5xx) cannot land later: not found, it was not applied."""
        memory, attempt = self._memory[cluster], (owed.effect_id, owed.attempt)
        if attempt in memory.answered:
            return True
        first = memory.absent.setdefault(attempt, self._poster.monotonic())
        return self._poster.monotonic() - first >= self._poster.landing_bound

    async def _edit(
        self, cluster: str, where: str, alert: AlertState | None, owed: Owed
    ) -> Progress:
        """Edits are idempotent: an unknown outcome is sent again, no look-up needed. Each
        try is marked first, so that a holder after us knows one may still land (an edit of
        an older state, landing last, is undone by the looks that follow: `Looks`)."""
        if alert is None or not alert.root_ts:
            await self._change(cluster, _drop(where, owed))
            return Progress.MOVED
        attempt, tried_before = Attempt(secrets.token_hex(6), self._poster.identity), owed
        marked = await self._change(cluster, _mark(where, owed, attempt, self._poster.clock(), ""))
        if marked is None:
            return Progress.MOVED  # no longer the head: someone else sent it
        alert = _as_marked(marked, where, alert)
        sent = await self._messages.send(alert, owed, attempt, "", within=self._within())
        if tried_before.was_attempted or sent.in_flight:  # a try may land after this one
            ours = tried_before.attempted_by in ("", self._poster.identity)
            self._looks.watch(cluster, [alert], eager=True, ours=ours)
        if sent.outcome is CallOutcome.APPLIED or sent.permanent:
            # Only our edit: one owed since (the state moved on meanwhile) is sent next.
            await self._change(cluster, _drop(where, owed, attempt.attempt))
            return Progress.MOVED
        return Progress.RETRY

    async def _post(
        self,
        cluster: str,
        where: str,
        alert: AlertState | None,
        owed: Owed,
        place: tuple[str, str],
    ) -> Progress:
        """A fresh attempt: stored first, posted, then recorded if it is still ours."""
        (channel, thread), poster = place, self._poster
        attempt = Attempt(secrets.token_hex(6), poster.identity)
        anchor = await self._messages.anchor(channel)
        marked = await self._change(cluster, _mark(where, owed, attempt, poster.clock(), anchor))
        if marked is None:
            return Progress.MOVED  # no longer the head: someone else delivered it
        alert = None if alert is None else _as_marked(marked, where, alert)
        if not poster.is_holder():
            return Progress.RETRY
        sent = await self._messages.send(
            alert, owed, attempt, channel, within=self._within(), thread=thread
        )
        if sent.outcome is CallOutcome.UNKNOWN and not sent.in_flight:
            self._memory[cluster].answered.add((owed.effect_id, attempt.attempt))
        if sent.outcome is CallOutcome.UNKNOWN and where != NOTICES:
            root = alert.root_anchor if alert is not None else anchor
            looks = [(where, channel, root)]
            self._looks.watch_looks(cluster, looks, eager=True, ours=True)  # ours, on its way
        if sent.outcome is CallOutcome.NOT_APPLIED:
            await self._change(cluster, _unmark(where, owed, attempt))
        if sent.outcome is not CallOutcome.APPLIED:
            return await self._not_applied(cluster, where, owed, sent)
        verdict = await self._change(cluster, _confirm(where, owed, attempt, channel, sent.ts))
        if verdict is Confirmation.SUPERSEDED:
            log.warning("%s: another copy is kept; deleting ours", owed.effect_id)
            await self._converger.delete(channel, [sent.ts])
        elif verdict is Confirmation.RECORDED and owed.was_attempted:
            # An earlier attempt's copy may still be on its way: look until it cannot land.
            await self._delete_other_copies(owed, (channel, thread, sent.ts))
            root = alert.root_anchor if alert is not None else owed.anchor
            ours = owed.attempted_by == self._poster.identity
            self._looks.watch_looks(cluster, [(where, channel, root)], eager=True, ours=ours)
        return Progress.RETRY if verdict is Confirmation.CONTESTED else Progress.MOVED

    async def _delete_other_copies(self, owed: Owed, kept: tuple[str, str, str]) -> bool:
        """After an uncertain entry is recorded: delete every other copy of it; whether the
        look could be made (else the incident is converged at a later drain)."""
        channel, thread, ts = kept
        copies = await self._messages.find_copies(
            channel, owed.effect_id, thread_ts=thread, after=owed.anchor
        )
        if copies is None:
            return False
        await self._converger.delete(channel, [c for c in copies if c != ts])
        return True

    async def _sweep(self, cluster: str, where: str, alert: AlertState | None) -> Progress:
        """The last thing a resolved incident owes: the channel converged, seen agreeing in
        `SETTLE_PASSES` drains in a row (a post Slack did after we gave up lands meanwhile);
        a look that could not read Slack counts as not agreeing."""
        with budget.urgency(budget.Priority.CONVERGE):
            agreed = alert is None or bool(await self._converger.converge(alert))
        state = await self._change(cluster, _swept(where, agreed))
        if alert is not None and outbox.head(state, where) is None:
            # Closed: a late call may still land a while (looked at eagerly if it ever had one
            # on its way, `Looks`; this replica's calls within their landing bound).
            self._looks.watch(cluster, [alert], ours=True)
        return Progress.MOVED if outbox.head(state, where) is None else Progress.LATER

    async def _not_applied(self, cluster: str, where: str, owed: Owed, sent: Sent) -> Progress:
        if not sent.permanent:
            return Progress.RETRY
        log.error("%s: Slack refuses it for good (%s); dropped", owed.effect_id, sent.error)
        await self._change(cluster, _drop(where, owed))
        return Progress.MOVED

    def _within(self) -> float | None:
        """How long a call may take: never past this replica's right to act."""
        return self._poster.acting_left()

    async def _change(self, cluster: str, change: StateChange[T]) -> T:
        return await update(self._store, cluster, change, repair=self._repair)


def _mark(
    where: str, owed: Owed, attempt: Attempt, at: datetime, anchor: str
) -> StateChange[ClusterAlerts | None]:
    """The head marked as `attempt`: the state as marked, None when it is no longer the head."""

    def change(state: ClusterAlerts) -> tuple[ClusterAlerts, ClusterAlerts | None]:
        marked = outbox.attempted(
            state, where, owed.effect_id, attempt.attempt, attempt.by, at, anchor
        )
        return (state, None) if marked is None else (marked, marked)

    return change


def _as_marked(marked: ClusterAlerts, where: str, alert: AlertState) -> AlertState:
    """The incident as the state that marked the attempt holds it, which is what is sent: a
    cluster that joined a fleet incident while its root was being prepared (its anchor read)
    found the root not attempted yet and owed no edit, so the root must list it."""
    place = outbox.find_place(marked, where)
    return place if isinstance(place, AlertState) else alert


def _confirm(
    where: str, owed: Owed, attempt: Attempt, channel: str, ts: str
) -> StateChange[Confirmation]:
    return lambda state: outbox.confirmed(
        state, where, owed.effect_id, attempt.attempt, channel, ts
    )


def _adopt(where: str, owed: Owed, channel: str, ts: str) -> StateChange[None]:
    return lambda state: (outbox.adopted(state, where, owed.effect_id, channel, ts), None)


def _unmark(where: str, owed: Owed, attempt: Attempt) -> StateChange[None]:
    return lambda state: (outbox.unattempted(state, where, owed.effect_id, attempt.attempt), None)


def _drop(where: str, owed: Owed, attempt: str | None = None) -> StateChange[None]:
    return lambda state: (outbox.dropped(state, where, owed.effect_id, attempt), None)


def _swept(where: str, agreed: bool) -> StateChange[ClusterAlerts]:
    def change(state: ClusterAlerts) -> tuple[ClusterAlerts, ClusterAlerts]:
        swept = outbox.swept(state, where, agreed=agreed)
        return swept, swept

    return change


def _priority(place: Place | None, owed: Owed) -> budget.Priority:
    """Whose call it is: a new page first (a fleet-wide failure pages every cluster before
    the diagnoses), then what an open incident's thread owes; notice threads (evictions) and
    reminders of forgotten pauses after everything a person waits for."""
    if isinstance(place, NoticeThread) or (place is not None and place.key.is_reminder):
        return budget.Priority.BACKGROUND
    return budget.Priority.PAGE if owed.kind is EffectKind.ROOT else budget.Priority.THREAD
