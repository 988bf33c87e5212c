"""Making the channel agree with the alert state: extra copies deleted, the root's edit right.

Level-triggered, like a controller: `converge` reads what the channel shows of one incident
(its roots newer than the root's anchor, its whole thread), deletes every copy of a root or
reply that the state does not keep, whoever posted it and however late it landed, and, when
nothing more is owed, re-applies the root's edit if the root does not show what the state
says (a deposed replica's slow edit may have landed last). It answers whether it saw the
channel agree; the drain repeats it until it has. Nothing raises.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from bot.alerts import outbox
from bot.alerts.channel_reads import Fresh
from bot.alerts.delivery import AlertMessages, Attempt
from bot.alerts.model import AlertState, EffectKind, Owed
from bot.alerts.notice_thread import NoticeThread
from bot.alerts.outbox import Place

log = logging.getLogger(__name__)


class Converger:
    """One incident's channel brought in line with its state."""

    def __init__(
        self,
        messages: AlertMessages,
        identity: str,
        acting_left: Callable[[], float | None],
    ) -> None:
        self._messages = messages
        self._identity = identity
        self._acting_left = acting_left

    async def converge(
        self, alert: Place, *, fresh: Fresh | None = None, scan_from: str | None = None
    ) -> bool | None:
        """Whether the channel agreed with `alert` (nothing to delete, the root right): False
        when a repair was needed, None when Slack could not be read to the end. A read of the
        channel as recent as `fresh` serves (`bot.alerts.channel_reads`); a new one starts
        at `scan_from` when that is older than the root's anchor, so that it serves the other
        incidents looking at the same channel."""
        if not alert.root_ts:
            return True  # nothing posted yet that could have copies
        channel = alert.root_channel
        roots = await self._messages.channels.find_effects(
            channel, after=alert.root_anchor, fresh=fresh, scan_from=scan_from
        )
        thread = await self._messages.channels.find_effects(
            channel, thread_ts=alert.root_ts, fresh=fresh
        )
        if roots is None or thread is None:
            return None
        found = {
            effect: sorted({c.ts for c in [*roots.get(effect, []), *thread.get(effect, [])]})
            for effect in {*roots, *thread}
        }
        extra = outbox.extra_copies(alert, found)
        if extra:
            log.warning("%s: deleting %d extra copies: %s", alert.incident, len(extra), extra)
            await self.delete(channel, extra)
        if isinstance(alert, NoticeThread):
            return not extra  # a notice is never edited: its copies are all there is
        root_right = await self._root_right(alert)
        return not extra and root_right

    async def delete(self, channel: str, copies: Sequence[str]) -> None:
        """Delete copies that lost (a replica deletes its own even after losing the Lease)."""
        for ts in copies:
            await self._messages.delete(channel, ts)

    async def _root_right(self, alert: AlertState) -> bool:
        """Whether the kept root shows what the state says (as Slack shows it now: a slow edit
        may have landed on it since); if not (and no edit or root is still owed, which would
        fix it anyway), the edit is applied again."""
        if any(o.kind in (EffectKind.ROOT, EffectKind.EDIT) for o in alert.outbox):
            return True
        kept = await self._messages.channels.root_now(alert)
        if kept is None:
            return True  # deleted, or unreadable: nothing to correct now
        if kept.shown == await self._messages.root_shown(alert):
            return True
        log.warning("%s: the root does not show the state; editing it again", alert.incident)
        edit = Owed(f"{alert.incident}:{EffectKind.EDIT.value}", EffectKind.EDIT)
        attempt = Attempt("", self._identity)
        await self._messages.send(alert, edit, attempt, "", within=self._acting_left())
        return False  # repaired, not yet seen agreeing: the next pass looks again
