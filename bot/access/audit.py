"""The record of every change: one structured log line, and a message in the channel.

Who did what, to which object, why, and how it ended, in RFC 3339 UTC. The log line is JSON so a
log pipeline can index it; the channel message is for the humans on call.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Protocol

from bot.slack import blocks as render
from bot.slack.gateway import SlackGateway, SlackUnavailable

log = logging.getLogger("kai_chatops.audit")


@dataclass(frozen=True)
class Change:
    """One change made (or refused) through the bot."""

    user: str
    action: str  # pause, resume, reconcile, sync, ...
    target: str  # "ScaledJob annia/annia-worker on prod"
    outcome: str  # done, refused, failed, timed out, ...
    at: datetime
    reason: str = ""
    details: Mapping[str, str] = field(default_factory=dict)

    def log_line(self) -> str:
        record: dict[str, Any] = asdict(self) | {"event": "change", "at": self.at.isoformat()}
        return json.dumps(record, sort_keys=True)


class Journal(Protocol):
    """Where finished changes are kept for the Home tab (`bot.access.journal`)."""

    async def add(self, change: Change) -> None: ...


async def record(
    change: Change,
    *,
    slack: SlackGateway | None,
    channel: str,
    text: str,
    fallback_channel: str = "",
    journal: Journal | None = None,
) -> None:
    """Log the change, and post `text` in the channel, else in `fallback_channel` (the alert
    channel, where the bot is a member); a failed post is logged, never raised.

    The log line's message is the whole record as JSON; its fields (user, command, object,
    outcome) are also set on the record, so the JSON log format shows them at the top level.
    """
    context = {
        "user": change.user,
        "command": change.action,
        "object": change.target,
        "outcome": change.outcome,
    }
    log.info(change.log_line(), extra=context)
    await _keep(change, journal)
    if slack is None or not channel:
        return
    for where in dict.fromkeys(c for c in (channel, fallback_channel) if c):
        try:
            await slack.post(where, render.text_message(text))
            return
        except SlackUnavailable as e:  # e.g. the bot is not in that channel: try the next
            log.error("could not post the audit message for %s in %s: %s", change.target, where, e)


async def _keep(change: Change, journal: Journal | None) -> None:
    """Add a finished change to the journal (a `requested` line's outcome follows it); a
    journal that cannot be written is logged, never raised: the change itself was made."""
    if journal is None or change.outcome == "requested":
        return
    try:
        await journal.add(change)
    except Exception as e:
        log.error("could not keep %s %s in the change journal: %s", change.action, change.target, e)
