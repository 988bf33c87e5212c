"""Alert messages into Slack, one call at a time, each with one of three outcomes.

`send` carries out one owed effect (a root post, a thread reply, a root edit, a notice) and
says what happened: applied (with the message's ts), surely not applied, or unknown; a call
still unanswered when the caller's right to act ends is abandoned (unknown). Roots, replies
and notices carry their effect ID in Slack message metadata (a root also a digest of what it
shows, rewritten by each edit), and `find_effects` finds them again (`conversations.history`
for the channel, `conversations.replies` for a thread), newer than an anchor on Slack's own
clock, to the last page, so a call whose answer was lost is looked for instead of repeated.
Nothing is retried here and nothing raises: the drain (`bot.alerts.drain`) decides.
Rendering is `bot.alerts.render`'s (`render_replies`, `render_evidence`, `render_reminders`).
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from bot.alerts import render, render_evidence, render_reminders, render_replies
from bot.alerts.looks import ts_order
from bot.alerts.model import AlertState, EffectKind, Note, NoteKind, Owed, Phase, Severity
from bot.core.metrics import Metrics
from bot.slack import blocks, budget
from bot.slack.gateway import SlackUnavailable

log = logging.getLogger(__name__)

METADATA_EVENT = "kai_chatops_effect"  # Slack metadata event_type: letters and underscores
SEND_MARGIN = 1.0  # seconds before the end of the right to act by which a call must be sent
SCANS_KEPT = 600.0  # seconds a read of a channel is kept, to serve other looks at it
LONG_READ = 200  # messages (a page): a thread this long is read on, not read whole again


class MessageSender(Protocol):
    """Posting, editing, finding and deleting messages (`bot.slack.gateway.SlackGateway`)."""

    async def post(
        self,
        channel: str,
        message: Mapping[str, Any],
        *,
        thread_ts: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> str: ...

    async def update(
        self,
        channel: str,
        ts: str,
        message: Mapping[str, Any],
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> None: ...

    async def delete(self, channel: str, ts: str) -> None: ...

    async def find_messages(
        self, channel: str, *, thread_ts: str | None = None, oldest: str | None = None
    ) -> list[Mapping[str, Any]]: ...

    async def thread_head(self, channel: str, thread_ts: str) -> Mapping[str, Any] | None: ...

    async def newest_ts(self, channel: str) -> str: ...

    async def resolve_mentions(self, entries: Iterable[str]) -> list[str]: ...


@dataclass(frozen=True)
class Paging:
    """Who alerts mention (docs/design.md §1.4): `mention` on the root of a critical alert,
    `escalate_to`
    in the escalation reply. User IDs, group IDs or `@handles`, resolved when sent."""

    mention: tuple[str, ...] = ()
    escalate_to: tuple[str, ...] = ()


class CallOutcome(enum.Enum):
    """What one Slack call came to: applied (Slack answered with the message), surely not
    applied (an error answer, a refused connection), or unknown (a timeout, a dropped
    connection, a 5xx: Slack may have applied it). The record of the call is `Sent`."""

    APPLIED = "applied"
    NOT_APPLIED = "not applied"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Sent:
    """The record of one Slack write, as `send` hands it to the drain: what it came to
    (`CallOutcome`), the message's `ts` when applied, the error otherwise, `permanent` when
    not applied and never will be (an edit of a deleted message), and `in_flight` when its
    answer never came (a timeout, a dropped connection): only then may it still land later."""

    outcome: CallOutcome
    ts: str = ""
    error: str = ""
    permanent: bool = False
    in_flight: bool = False


@dataclass(frozen=True)
class _Scan:
    """What is known of a channel (or a thread) from `after` to `newest` (the newest ts
    read), as of the `number`th read, begun at `read_at` (the drain's monotonic clock): its
    messages carrying effect IDs."""

    number: int
    read_at: float
    after: str
    newest: str
    effects: dict[str, list[Copy]]
    size: int = 0  # messages the last read saw
    whole: bool = True  # the last read was of everything since `after` (not read on)


@dataclass(frozen=True)
class Fresh:
    """How recent a read must be to serve a look: begun at or after `since` (the drain's
    monotonic clock) and made after the first `after_read` reads."""

    since: float
    after_read: int


@dataclass(frozen=True)
class Attempt:
    """Who tries an effect, under which attempt ID: written into the message's metadata."""

    attempt: str
    by: str


@dataclass(frozen=True)
class Copy:
    """A message found in Slack carrying an effect ID: its ts and, for a root, the digest of
    what it shows (`shown`, "" when unknown)."""

    ts: str
    shown: str = ""


def effect_metadata(owed: Owed, attempt: Attempt, *, shown: str = "") -> dict[str, Any]:
    """Slack message metadata naming the effect (payload values must be strings or numbers).
    An edit names its root's effect (the root stays findable) and what the edit shows."""
    effect = owed.effect_id
    if owed.kind is EffectKind.EDIT:
        effect = effect.rpartition(":")[0] + ":0"
    payload = {"effect": effect, "attempt": attempt.attempt, "by": attempt.by}
    if owed.note is not None:
        payload["note"] = owed.note.kind.value
    if shown:
        payload["shown"] = shown
    return {"event_type": METADATA_EVENT, "event_payload": payload}


def digest(message: Mapping[str, Any]) -> str:
    """A short fingerprint of a rendered message: equal when it shows the same."""
    return hashlib.sha256(json.dumps(message, sort_keys=True).encode()).hexdigest()[:16]


def _payload(message: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = message.get("metadata")
    if not isinstance(metadata, Mapping) or metadata.get("event_type") != METADATA_EVENT:
        return {}
    payload = metadata.get("event_payload")
    return payload if isinstance(payload, Mapping) else {}


def effect_of(message: Mapping[str, Any]) -> str:
    """The effect ID a message found in Slack carries ("" for any other message)."""
    return str(_payload(message).get("effect") or "")


class AlertMessages:
    """One effect at a time through a sender; a missing sender (no Slack) applies nothing."""

    def __init__(
        self,
        sender: MessageSender | None,
        metrics: Metrics,
        paging: Paging = Paging(),
        *,
        command: str,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sender = sender
        self._metrics = metrics
        self._paging = paging
        self._command = command  # the configured slash command, named in every root
        self._monotonic = monotonic  # the drain's clock, which `fresh_since` is read on
        self._newest: dict[str, str] = {}  # channel -> the newest Slack ts seen there
        self._scans: dict[tuple[str, str], _Scan] = {}  # (channel, thread) -> last read
        self.reads = 0  # reads of a channel or thread made so far, for `Fresh`

    async def send(
        self,
        alert: AlertState | None,
        owed: Owed,
        attempt: Attempt,
        channel: str,
        *,
        within: float | None = None,
        thread: str = "",
    ) -> Sent:
        """Carry out `owed` (of `alert`, or a notice in `channel` when `alert` is None: in the
        `thread` of an earlier notice, if given); a call not answered `within` seconds is
        abandoned (unknown: Slack may still apply it)."""
        sender = self._sender
        if sender is None:
            return Sent(CallOutcome.NOT_APPLIED, error="no Slack")
        # A call that cannot get Slack's budget before the right to act ends is never sent:
        # surely not applied, not "unknown" (`bot.slack.budget`).
        sent_by = None if within is None else time.monotonic() + max(0.0, within - SEND_MARGIN)
        try:
            with budget.urgency(budget.current().priority, sent_by=sent_by):
                call = self._call(sender, alert, owed, attempt, (channel, thread))
                ts = await asyncio.wait_for(call, timeout=within)
        except TimeoutError:
            return self._failed(
                owed, SlackUnavailable("abandoned at the end of its time to act", ambiguous=True)
            )
        except SlackUnavailable as e:
            return self._failed(owed, e)
        self._metrics.slack_sends.labels("ok").inc()
        self._saw(alert.root_channel if alert is not None and alert.root_channel else channel, ts)
        return Sent(CallOutcome.APPLIED, ts=ts)

    def _failed(self, owed: Owed, e: SlackUnavailable) -> Sent:
        self._metrics.slack_sends.labels("error").inc()
        outcome = CallOutcome.UNKNOWN if e.ambiguous else CallOutcome.NOT_APPLIED
        log.warning("%s: %s (%s)", owed.effect_id, e, outcome.value)
        in_flight = e.ambiguous and not e.answered
        return Sent(outcome, error=str(e), permanent=e.is_permanent, in_flight=in_flight)

    async def anchor(self, channel: str) -> str:
        """A Slack ts that anything posted from now on comes after: the newest this process
        has seen in `channel`, else the channel's newest message ("" when Slack cannot say:
        a later search then reads the whole channel)."""
        if channel in self._newest or self._sender is None:
            return self._newest.get(channel, "")
        try:
            self._saw(channel, await self._sender.newest_ts(channel))
        except SlackUnavailable as e:
            log.warning("cannot read the newest message of %s: %s", channel, e)
        return self._newest.get(channel, "")

    async def find_copies(
        self, channel: str, effect_id: str, *, thread_ts: str = "", after: str = ""
    ) -> list[str] | None:
        """The ts of every message carrying `effect_id` newer than `after`, oldest first;
        None when Slack could not be read to the end (then nobody knows whether one exists)."""
        found = await self.find_effects(channel, thread_ts=thread_ts, after=after)
        return None if found is None else [c.ts for c in found.get(effect_id, [])]

    async def find_effects(
        self,
        channel: str,
        *,
        thread_ts: str = "",
        after: str = "",
        fresh: Fresh | None = None,
        scan_from: str | None = None,
    ) -> dict[str, list[Copy]] | None:
        """Every message carrying an effect ID in the channel, or in one thread, newer than
        `after`: effect ID -> copies, oldest first; None when Slack could not be read.

        With `fresh`, a read of the same channel or thread as recent as that, from no later
        than `after`, answers instead of a new one: one read of a channel serves every
        incident that looks at it. `scan_from` (older than `after`) widens a new read so
        that it can serve the others too.
        """
        key = (channel, thread_ts)
        kept = self._scans.get(key)
        if fresh is not None and kept is not None and _serves(kept, fresh, after):
            return _newer(kept.effects, after)
        start = after
        if scan_from is not None and ts_order(scan_from) < ts_order(after):
            start = scan_from
        self.reads += 1
        number, read_at = self.reads, self._monotonic()
        # A channel, or a thread too long for one page, is read on from what was read before.
        known = kept if kept is not None and (not thread_ts or kept.size >= LONG_READ) else None
        if known is not None and ts_order(known.after) <= ts_order(start):
            scan = await self._read_on(channel, thread_ts, known, number, read_at)
        else:
            scan = await self._read_from(channel, thread_ts, start, number, read_at)
        if scan is None:
            return None
        self._keep(key, scan)
        return _newer(scan.effects, after)

    async def _read_from(
        self, channel: str, thread_ts: str, start: str, number: int, read_at: float
    ) -> _Scan | None:
        read = await self._read_effects(channel, thread_ts, start)
        if read is None:
            return None
        effects, newest, size = read
        return _Scan(number, read_at, start, newest or start, effects, size)

    async def _read_on(
        self, channel: str, thread_ts: str, known: _Scan, number: int, read_at: float
    ) -> _Scan | None:
        """A channel read before, read on from the newest message it saw: a message a later
        read has not seen can only be newer (Slack stamps it when it lands), so what the two
        reads saw together is the whole channel since `known.after`. A channel is a busy
        place; this reads a page where the whole would be many."""
        read = await self._read_effects(channel, thread_ts, known.newest)
        if read is None:
            return None
        effects, newest, size = read
        merged = {e: list(c) for e, c in known.effects.items()}
        for effect, copies in effects.items():
            seen = {c.ts for c in merged.get(effect, [])}
            merged.setdefault(effect, []).extend(c for c in copies if c.ts not in seen)
        newest = newest or known.newest
        return _Scan(number, read_at, known.after, newest, merged, known.size + size, False)

    async def _read_effects(
        self, channel: str, thread_ts: str, after: str
    ) -> tuple[dict[str, list[Copy]], str, int] | None:
        """The messages newer than `after` that carry effect IDs, the newest ts read, and how
        many messages were read."""
        if self._sender is None:
            return None
        try:
            found = await self._sender.find_messages(
                channel, thread_ts=thread_ts or None, oldest=after or None
            )
        except SlackUnavailable as e:
            log.warning("cannot look for alert messages in Slack: %s", e)
            return None
        effects: dict[str, list[Copy]] = {}
        newest = ""
        for message in sorted(found, key=lambda m: ts_order(str(m.get("ts")))):
            newest = str(message.get("ts") or "") or newest
            self._saw(channel, newest)
            if effect := effect_of(message):
                copy = Copy(str(message.get("ts")), str(_payload(message).get("shown") or ""))
                effects.setdefault(effect, []).append(copy)
        return effects, newest, len(found)

    def _keep(self, key: tuple[str, str], scan: _Scan) -> None:
        """Keep `scan` for later looks; forget reads too old to serve any."""
        self._scans[key] = scan
        stale = [k for k, s in self._scans.items() if s.read_at < scan.read_at - SCANS_KEPT]
        for old in stale:
            del self._scans[old]

    async def root_now(self, alert: AlertState) -> Copy | None:
        """The root as Slack shows it now (its ts and the digest it carries): from the read of
        its thread just made when that read was whole, else read afresh (one call); None
        when it is gone or Slack cannot say."""
        channel, incident = alert.root_channel, f"{alert.incident}:0"
        kept = self._scans.get((channel, alert.root_ts))
        if kept is not None and kept.whole:
            return next((c for c in kept.effects.get(incident, []) if c.ts == alert.root_ts), None)
        if self._sender is None:
            return None
        try:
            head = await self._sender.thread_head(channel, alert.root_ts)
        except SlackUnavailable as e:
            log.warning("cannot read the root of %s: %s", alert.incident, e)
            return None
        if head is None or effect_of(head) != incident:
            return None
        return Copy(str(head.get("ts")), str(_payload(head).get("shown") or ""))

    async def root_shown(self, alert: AlertState) -> str:
        """The digest of the root message as the state says it should look now."""
        sender = self._sender
        if sender is None:
            return ""
        paged = await _resolved(sender, self._paged(alert))
        return digest(self._root(alert, paged))

    def _root(self, alert: AlertState, paged: list[str]) -> Mapping[str, Any]:
        """The root as it should look now: an alert's, or a reminder's (`render_reminders`)."""
        if alert.key.is_reminder:
            return render_reminders.root_message(alert, command=self._command)
        return render.root_message(alert, paged, command=self._command)

    def _saw(self, channel: str, ts: str) -> None:
        if ts and ts_order(ts) > ts_order(self._newest.get(channel, "")):
            self._newest[channel] = ts

    async def delete(self, channel: str, ts: str) -> bool:
        """Delete a copy that lost; whether Slack confirmed (or it was already gone)."""
        if self._sender is None:
            return False
        try:
            await self._sender.delete(channel, ts)
        except SlackUnavailable as e:
            if e.error == "message_not_found":
                self._forget(channel, ts)
                return True
            log.warning("cannot delete the extra copy %s in %s: %s", ts, channel, e)
            return False
        self._forget(channel, ts)
        return True

    def _forget(self, channel: str, ts: str) -> None:
        """A message is gone: no kept read of the channel may show it any more."""
        for (where, thread), scan in list(self._scans.items()):
            if where == channel:
                effects = {e: [c for c in cs if c.ts != ts] for e, cs in scan.effects.items()}
                self._scans[(where, thread)] = replace(scan, effects=effects)

    async def post_notice(self, channel: str, text: str) -> bool:
        """A plain message in the alert channel; whether Slack confirmed it."""
        if self._sender is None:
            return False
        try:
            await self._sender.post(channel, blocks.text_message(text))
        except SlackUnavailable as e:
            self._metrics.slack_sends.labels("error").inc()
            log.error("notice not posted: %s", e)
            return False
        self._metrics.slack_sends.labels("ok").inc()
        return True

    def _paged(self, alert: AlertState) -> tuple[str, ...]:
        """Who the root mentions: `alerts.mention` while a critical alert is live; nobody for a
        warning, nor once resolved (the edit to resolved pages no one)."""
        critical = alert.observation.severity is Severity.CRITICAL
        if alert.key.is_fleet and alert.paged:  # its clusters' own roots paged already
            return ()
        return self._paging.mention if critical and alert.phase is not Phase.RESOLVED else ()

    async def _call(
        self,
        sender: MessageSender,
        alert: AlertState | None,
        owed: Owed,
        attempt: Attempt,
        place: tuple[str, str],
    ) -> str:
        if alert is None or owed.kind is EffectKind.NOTICE:
            channel, thread = place
            meta = effect_metadata(owed, attempt)
            message = blocks.text_message(owed.text)
            if owed.blocks:  # a notice rendered when it was owed: sent as stored
                message = {"text": owed.text, "blocks": [dict(b) for b in owed.blocks]}
            return await sender.post(channel, message, thread_ts=thread or None, metadata=meta)
        where = alert.root_channel
        if owed.kind in (EffectKind.ROOT, EffectKind.EDIT):
            paged = await _resolved(sender, self._paged(alert))
            root = self._root(alert, paged)
            meta = effect_metadata(owed, attempt, shown=digest(root))
            if owed.kind is EffectKind.ROOT:
                return await sender.post(where, root, metadata=meta)
            await sender.update(where, alert.root_ts, root, metadata=meta)
            return alert.root_ts
        meta = effect_metadata(owed, attempt)
        note = owed.note or Note(NoteKind.REMINDER, alert.first_seen)  # loading ensures a note
        if alert.key.is_reminder:
            message = render_reminders.reply_message(alert, note)
        elif note.kind is NoteKind.DIAGNOSIS:
            message = render_evidence.evidence_message(owed.text, owed.blocks)
        elif note.kind is NoteKind.ESCALATED:
            who = await _resolved(sender, self._paging.escalate_to)
            message = render_replies.reply_message(alert, note, who)
        else:
            message = render_replies.reply_message(alert, note)
        return await sender.post(where, message, thread_ts=alert.root_ts, metadata=meta)


async def _resolved(sender: MessageSender, entries: tuple[str, ...]) -> list[str]:
    """The entries as mentions take them (`@handles` resolved by the gateway, cached)."""
    return await sender.resolve_mentions(entries) if entries else []


def _serves(scan: _Scan, fresh: Fresh, after: str) -> bool:
    """Whether `scan` is recent enough for `fresh` and reaches back to `after`."""
    recent = scan.read_at >= fresh.since and scan.number > fresh.after_read
    return recent and ts_order(scan.after) <= ts_order(after)


def _newer(effects: Mapping[str, list[Copy]], after: str) -> dict[str, list[Copy]]:
    """The copies of each effect newer than `after` (effects with none left out)."""
    bound = ts_order(after)
    newer = {e: [c for c in copies if ts_order(c.ts) > bound] for e, copies in effects.items()}
    return {e: copies for e, copies in newer.items() if copies}
