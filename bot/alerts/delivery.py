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
from dataclasses import dataclass
from typing import Any, Protocol

from bot.alerts import render, render_evidence, render_reminders, render_replies
from bot.alerts.channel_reads import METADATA_EVENT, ChannelReads, MessageReader
from bot.alerts.model import (
    EVIDENCE_NOTES,
    AlertState,
    EffectKind,
    Note,
    NoteKind,
    Owed,
    Phase,
    Severity,
)
from bot.core.metrics import Metrics
from bot.slack import blocks, budget
from bot.slack.gateway import SlackUnavailable

log = logging.getLogger(__name__)

SEND_MARGIN = 1.0  # seconds before the end of the right to act by which a call must be sent


class MessageSender(MessageReader, Protocol):
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
class Attempt:
    """Who tries an effect, under which attempt ID: written into the message's metadata."""

    attempt: str
    by: str


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
        self.channels = ChannelReads(sender, monotonic=monotonic)  # what is read back

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
        leaving = budget.Leaving()
        try:
            with (
                budget.urgency(budget.current().priority, sent_by=sent_by),
                budget.leaving() as leaving,
            ):
                call = self._call(sender, alert, owed, attempt, (channel, thread))
                ts = await asyncio.wait_for(call, timeout=within)
        except TimeoutError:
            if leaving.unsent:  # still waiting for its budget: never sent
                return self._failed(
                    owed, SlackUnavailable("no Slack budget before the end of its time to act")
                )
            return self._failed(
                owed, SlackUnavailable("abandoned at the end of its time to act", ambiguous=True)
            )
        except SlackUnavailable as e:
            return self._failed(owed, e)
        self._metrics.slack_sends.labels("ok").inc()
        self.channels.saw(alert.root_channel if alert and alert.root_channel else channel, ts)
        return Sent(CallOutcome.APPLIED, ts=ts)

    def _failed(self, owed: Owed, e: SlackUnavailable) -> Sent:
        self._metrics.slack_sends.labels("error").inc()
        outcome = CallOutcome.UNKNOWN if e.ambiguous else CallOutcome.NOT_APPLIED
        log.warning("%s: %s (%s)", owed.effect_id, e, outcome.value)
        in_flight = e.ambiguous and not e.answered
        return Sent(outcome, error=str(e), permanent=e.is_permanent, in_flight=in_flight)

    async def anchor(self, channel: str) -> str:
        """A Slack ts that anything posted from now on comes after (`ChannelReads.anchor`)."""
        return await self.channels.anchor(channel)

    async def find_copies(
        self, channel: str, effect_id: str, *, thread_ts: str = "", after: str = ""
    ) -> list[str] | None:
        """The ts of every message carrying `effect_id` newer than `after`, oldest first;
        None when Slack could not be read to the end (then nobody knows whether one exists)."""
        found = await self.channels.find_effects(channel, thread_ts=thread_ts, after=after)
        return None if found is None else [c.ts for c in found.get(effect_id, [])]

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

    async def delete(self, channel: str, ts: str) -> bool:
        """Delete a copy that lost; whether Slack confirmed (or it was already gone)."""
        if self._sender is None:
            return False
        try:
            await self._sender.delete(channel, ts)
        except SlackUnavailable as e:
            if e.error == "message_not_found":
                self.channels.forget(channel, ts)
                return True
            log.warning("cannot delete the extra copy %s in %s: %s", ts, channel, e)
            return False
        self.channels.forget(channel, ts)
        return True

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
        elif note.kind in EVIDENCE_NOTES:  # gathered and rendered once: sent as stored
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
