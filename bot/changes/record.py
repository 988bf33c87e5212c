"""The record of a change: its audit line, the change journal, and what is said in Slack.

One audit line per change, with the outcome it really had (`bot.access.audit`). A confirmed
change is announced where it was asked (and in the alert channel when that was a direct
message, or the post failed); a change made at once has a public reply that is the channel's
record, so it is said in the alert channel only when asked in a direct message. A refusal by
the cluster is its log line alone: the person sees why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from bot.access import audit
from bot.access.audit import Change
from bot.changes import render
from bot.changes.kinds import Described, Done, Run
from bot.changes.ports import ServiceParts
from bot.core import errors
from bot.slack import blocks
from bot.slack.blocks import Text


async def record_done(
    parts: ServiceParts, announced: bool, done: Done, run: Run, acting: Mapping[str, str]
) -> None:
    """Record what `apply` returned; `acting` is whom its writes were sent as."""
    if done.change is None:
        return
    change = replace(done.change, details={**done.change.details, **acting})
    if done.refused:
        audit.log_change(change)
    elif announced:
        await announce_record(parts, change, run.channel_id, done.text)
    else:
        await _replied_record(parts, change, run)


async def record_failure(
    parts: ServiceParts, announced: bool, described: Described, run: Run, error: errors.BotError
) -> None:
    """The one audit line of a change that raised `error`: `failed`, or `unknown` when its
    write got no answer (said where the change would have been, for someone to check)."""
    change = described.failure(run.user, parts.clock())
    if announced:
        await audit.record_error(
            change,
            error,
            who=blocks.mention(run.user),
            slack=parts.slack,
            channel=run.channel_id,
            alert_channel=parts.settings.slack.alert_channel,
            journal=parts.journal,
        )
        return
    unknown = isinstance(error, errors.KubeWriteUnknown)
    details = dict(error.details) if isinstance(error, errors.KubeError) else {}
    failed = replace(
        change, outcome="unknown" if unknown else "failed", note=str(error), details=details
    )
    await _replied_record(parts, failed, run)


async def announce_record(parts: ServiceParts, change: Change, channel: str, text: Text) -> None:
    """The log line, the journal, and `text` in `channel` (and in the alert channel when that
    is a direct message, or the bot could not post there)."""
    await audit.record(
        change,
        slack=parts.slack,
        channel=channel,
        text=text,
        alert_channel=parts.settings.slack.alert_channel,
        journal=parts.journal,
    )


async def announce(parts: ServiceParts, channel: str, text: Text) -> None:
    """Say `text` about a change under way, where its record will be said."""
    alert_channel = parts.settings.slack.alert_channel
    await audit.announce(text, slack=parts.slack, channel=channel, alert_channel=alert_channel)


async def _replied_record(parts: ServiceParts, change: Change, run: Run) -> None:
    """The log line and the journal; said in the alert channel when asked in a direct message
    (nobody else on call sees that reply)."""
    if not audit.is_direct_message(run.channel_id):
        await audit.record(change, slack=None, channel="", text="", journal=parts.journal)
        return
    text = render.request_record(run.user, change.action, change.target, change.note)
    channel = parts.settings.slack.alert_channel
    await audit.record(change, slack=parts.slack, channel=channel, text=text, journal=parts.journal)
