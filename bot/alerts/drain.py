"""The drain: sends what the alert outboxes owe, in order per incident, exactly once.

For each incident (and the cluster's notices) it takes the head of the outbox and:
- an edit: sends it (an edit is idempotent: an unknown outcome is simply sent again);
- a post that was attempted before with an unknown outcome: looks for it in Slack by its effect
  ID first, and adopts the copy it finds instead of posting again;
- otherwise: stores a fresh attempt (its ID and this replica's identity) *before* posting,
  posts with the effect ID in the message metadata, then records the ts with a compare-and-set
  on the attempt ID (`bot.alerts.outbox.confirmed`). A replica whose attempt was replaced
  meanwhile deletes its copy if another one is kept; whoever finishes a contested entry deletes
  every other copy it finds.
Only the Lease holder posts (`is_holder` is asked before every write). Surely-failed and unknown
outcomes are tried again with backoff, then left for the next drain (every check, and at
start-up). Nothing raises into the scheduler.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from bot.alerts import outbox
from bot.alerts.delivery import AlertMessages, Attempt, Outcome, Sent
from bot.alerts.model import AlertState, ClusterAlerts, EffectKind, Owed
from bot.alerts.outbox import NOTICES, Confirmation
from bot.alerts.store import AlertStore, Repair, StoreUnavailable, update

log = logging.getLogger(__name__)

SLACK_BACKOFFS = (1.0, 2.0, 4.0)  # seconds between tries of an effect within one drain
T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]
Change = Callable[[ClusterAlerts], tuple[ClusterAlerts, T]]


@dataclass(frozen=True)
class Poster:
    """Who this replica is, whether it may post now, and its clocks."""

    identity: str
    is_holder: Callable[[], bool]
    clock: Callable[[], datetime]


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
    ) -> None:
        self._store = store
        self._repair = repair
        self._messages = messages
        self._poster = poster
        self._channel = channel
        self._sleep = sleep
        self._backoffs = tuple(backoffs)
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def drain(self, cluster: str, only: Collection[str] | None = None) -> None:
        """Send everything `cluster` owes that Slack takes now (of the incidents `only`, if
        given). Never raises for Slack or store trouble (each is logged; what is left is tried
        at the next drain)."""
        async with self._locks[cluster]:
            try:
                state = (await self._store.load(cluster)).state
                owing = [NOTICES, *(a.incident for a in outbox.incidents(state))]
                for where in owing if only is None else [w for w in owing if w in only]:
                    await self._drain_one(cluster, where)
            except StoreUnavailable as e:
                log.error("alerts of cluster %s: cannot use the state store: %s", cluster, e)

    async def _drain_one(self, cluster: str, where: str) -> None:
        """The outbox of one incident (or of the notices), head first, until empty or stuck."""
        tries = 0
        while self._poster.is_holder():
            state = (await self._store.load(cluster)).state
            owed = outbox.head(state, where)
            if owed is None or owed.awaits_evidence:
                return  # an empty diagnosis waits for the holder's check to gather it
            if await self._deliver(cluster, where, outbox.find_incident(state, where), owed):
                tries = 0
                continue
            if tries >= len(self._backoffs):
                log.warning("%s: left for the next drain", owed.effect_id)
                return
            await self._sleep(self._backoffs[tries])
            tries += 1

    async def _deliver(
        self, cluster: str, where: str, alert: AlertState | None, owed: Owed
    ) -> bool:
        """One step on the head; whether it moved on (delivered, adopted or given up)."""
        if owed.kind is EffectKind.EDIT:
            return await self._edit(cluster, where, alert, owed)
        if owed.kind is EffectKind.SWEEP:
            return await self._sweep_incident(cluster, where, alert, owed)
        if owed.kind is EffectKind.REPLY and (alert is None or not alert.root_ts):
            log.error("%s: a reply owed before its root; dropped", owed.effect_id)
            await self._change(cluster, _drop(where, owed))
            return True
        channel = alert.root_channel if alert is not None else self._channel
        thread = alert.root_ts if alert is not None and owed.kind is EffectKind.REPLY else ""
        if owed.was_attempted:
            copies = await self._messages.find_copies(
                channel, owed.effect_id, thread_ts=thread, since=owed.attempted_at
            )
            if copies is None:
                return False
            if copies:
                await self._change(cluster, _adopt(where, owed, channel, copies[0]))
                await self._delete(channel, copies[1:])
                return True
        return await self._post(cluster, where, alert, owed, (channel, thread))

    async def _edit(self, cluster: str, where: str, alert: AlertState | None, owed: Owed) -> bool:
        """Edits are idempotent: an unknown outcome is sent again, no look-up needed."""
        if alert is None or not alert.root_ts:
            await self._change(cluster, _drop(where, owed))
            return True
        sent = await self._messages.send(alert, owed, Attempt("", self._poster.identity), "")
        if sent.outcome is Outcome.APPLIED or sent.permanent:
            await self._change(cluster, _drop(where, owed))
            return True
        return False

    async def _post(
        self,
        cluster: str,
        where: str,
        alert: AlertState | None,
        owed: Owed,
        place: tuple[str, str],
    ) -> bool:
        """A fresh attempt: stored first, posted, then recorded if it is still ours."""
        (channel, thread), poster = place, self._poster
        attempt = Attempt(secrets.token_hex(6), poster.identity)
        if not await self._change(cluster, _mark(where, owed, attempt, poster.clock())):
            return True  # no longer the head: someone else delivered it
        if not poster.is_holder():
            return False
        sent = await self._messages.send(alert, owed, attempt, channel)
        if sent.outcome is not Outcome.APPLIED:
            return await self._not_applied(cluster, where, owed, sent)
        verdict = await self._change(cluster, _confirm(where, owed, attempt, channel, sent.ts))
        if verdict is Confirmation.SUPERSEDED:
            log.warning("%s: another replica's copy is kept; deleting ours", owed.effect_id)
            await self._delete(channel, [sent.ts])
        elif verdict is Confirmation.RECORDED and owed.was_attempted:
            await self._sweep(channel, owed, thread, sent.ts)
        return verdict is not Confirmation.CONTESTED

    async def _sweep_incident(
        self, cluster: str, where: str, alert: AlertState | None, owed: Owed
    ) -> bool:
        """The last thing a resolved incident owes: delete any copy of its root or replies
        that landed after it was looked for (a post Slack did after we gave up on it)."""
        if alert is not None and alert.root_ts:
            channel, since = alert.root_channel, alert.firing_since or alert.first_seen
            roots = await self._messages.find_effects(channel, since=since)
            replies = await self._messages.find_effects(channel, thread_ts=alert.root_ts)
            if roots is None or replies is None:
                return False
            found = {
                e: sorted({*roots.get(e, []), *replies.get(e, [])}) for e in {*roots, *replies}
            }
            extra = outbox.extra_copies(alert, found)
            if extra:
                log.warning("%s: deleting %d extra copies", alert.incident, len(extra))
            await self._delete(channel, extra)
        await self._change(cluster, _drop(where, owed))
        return True

    async def _not_applied(self, cluster: str, where: str, owed: Owed, sent: Sent) -> bool:
        if not sent.permanent:
            return False
        log.error("%s: Slack refuses it for good (%s); dropped", owed.effect_id, sent.error)
        await self._change(cluster, _drop(where, owed))
        return True

    async def _sweep(self, channel: str, owed: Owed, thread: str, kept: str) -> None:
        """After a contested or uncertain entry is recorded: delete every other copy."""
        copies = await self._messages.find_copies(
            channel, owed.effect_id, thread_ts=thread, since=owed.attempted_at
        )
        await self._delete(channel, [ts for ts in copies or [] if ts != kept])

    async def _delete(self, channel: str, copies: Sequence[str]) -> None:
        """Delete extra copies; a replica that lost deletes its own even after losing the Lease."""
        for ts in copies:
            await self._messages.delete(channel, ts)

    async def _change(self, cluster: str, change: Change[T]) -> T:
        return await update(self._store, cluster, change, repair=self._repair)


def _mark(where: str, owed: Owed, attempt: Attempt, at: datetime) -> Change[bool]:
    def change(state: ClusterAlerts) -> tuple[ClusterAlerts, bool]:
        marked = outbox.attempted(state, where, owed.effect_id, attempt.attempt, attempt.by, at)
        return (state, False) if marked is None else (marked, True)

    return change


def _confirm(
    where: str, owed: Owed, attempt: Attempt, channel: str, ts: str
) -> Change[Confirmation]:
    return lambda state: outbox.confirmed(
        state, where, owed.effect_id, attempt.attempt, channel, ts
    )


def _adopt(where: str, owed: Owed, channel: str, ts: str) -> Change[None]:
    return lambda state: (outbox.adopted(state, where, owed.effect_id, channel, ts), None)


def _drop(where: str, owed: Owed) -> Change[None]:
    return lambda state: (outbox.dropped(state, where, owed.effect_id), None)
