"""Trouble notices: faults outside any alert's state (the store, the Lease) said in the alert
channel after a few failures in a row, at most hourly and once across replicas, then an
all-clear once things have worked for `alerts.hold` (the timing is the pure
`bot.alerts.trouble`'s). Without its state the desk posts no alert: it says so instead.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.alerts import trouble
from bot.alerts.delivery import Attempt, CallOutcome
from bot.alerts.model import EffectKind, Owed
from bot.alerts.usecase_context import DeskContext
from bot.slack.blocks import escape

TROUBLE_REPEAT = timedelta(hours=1)
NOTICE_LOOK_BACK_HOURS = 2  # a trouble notice is looked for this far back on Slack's clock


@dataclass(frozen=True)
class Words:
    """What a trouble notice says: the `warning` while it lasts, the `recovery` once over."""

    warning: str
    recovery: str


def hours_before(ts: str, hours: int) -> str:
    """A Slack ts `hours` before `ts` (Slack's clock, not ours); "" when `ts` is unknown."""
    seconds, _, micros = ts.partition(".")
    if not seconds.isdigit():
        return ""
    return f"{max(0, int(seconds) - hours * 3600)}.{micros or '000000'}"


class TroubleNotices:
    """What this replica knows of each kind of trouble, and the notices it says."""

    def __init__(self, context: DeskContext) -> None:
        self._context = context
        self._troubles: dict[str, trouble.Trouble] = {}

    async def store_trouble(self, cluster: str, now: datetime, error: str | None) -> None:
        """One more failure (`error`) or success (None) of `cluster`'s state store: without
        its state the desk cannot avoid duplicate posts, so it posts no alert and says so in
        the alert channel instead (never a silent gap), and says when it is over."""
        words = Words(
            warning=(
                f":warning: kai-chatops cannot keep its alert state for cluster {cluster}, so "
                f"it posts no alerts for it until this is fixed: {escape(error or '')}"
            ),
            recovery=(
                f":white_check_mark: kai-chatops can keep its alert state for cluster {cluster} "
                "again: its alerts are checked and posted as before."
            ),
        )
        await self.note(f"store:{cluster}", now, error, words, speaker=True)

    async def note(
        self, key: str, now: datetime, error: str | None, words: Words, *, speaker: bool
    ) -> None:
        """One more failure (`error`) or success (None) of `key` (`AlertDesk.note_trouble`)."""
        a = self._context.settings.alerts
        policy = trouble.TroublePolicy(a.failures_before_alert, a.hold, TROUBLE_REPEAT)
        known = self._troubles.get(key, trouble.Trouble())
        if error is None:
            known, is_due = trouble.succeeded(known, now, policy)
        else:
            known, is_due = trouble.failed(known, now, policy)
        kind, text = ("recovery", words.recovery) if error is None else ("warning", words.warning)
        if is_due and await self._say_once(f"{key}:{kind}", now, text, speaker=speaker):
            known = trouble.said(known, now, warning=error is not None)
        self._troubles[key] = known

    async def _say_once(self, kind: str, now: datetime, text: str, *, speaker: bool) -> bool:
        """Post `text` unless a replica already did this hour; whether Slack holds it. A look
        that cannot be made is "don't know": only the `speaker` posts then (the others try
        again at the next failure). Two replicas that both posted keep the older copy: each
        deletes every later one."""
        notice_id = f"{kind}:{now.astimezone(UTC):%Y%m%dT%H}"
        messages, channel = self._context.messages, self._context.channel
        after = hours_before(await messages.anchor(channel), NOTICE_LOOK_BACK_HOURS)
        copies = await messages.find_copies(channel, notice_id, after=after)
        if copies is None and not speaker:
            return False
        if not copies:
            owed = Owed(notice_id, EffectKind.NOTICE, text=text)
            attempt = Attempt(secrets.token_hex(6), self._context.poster.identity)
            sent = await messages.send(None, owed, attempt, channel)
            if sent.outcome is not CallOutcome.APPLIED:
                return False
            copies = await messages.find_copies(channel, notice_id, after=after)
        for ts in (copies or [])[1:]:
            await messages.delete(channel, ts)
        return True
