"""The record of every action: one structured log line, and a message in the channel.

Who did what, to which object, why, and how it ended (`ok`, `failed`, or `unknown` when the
result could not be read back), in RFC 3339 UTC. The log line is JSON so a log pipeline can index
it; the channel message is for the humans on call, and a change asked for in a direct message is
also announced in the alert channel (docs/design.md §2 "Safety").
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

from bot.access.outcomes import AuditOutcome
from bot.core import errors
from bot.core.rich import rich_text
from bot.slack import blocks
from bot.slack.blocks import Text
from bot.slack.gateway import SlackGateway, SlackUnavailable

log = logging.getLogger("kai_chatops.audit")


@dataclass(frozen=True)
class Change:
    """One action taken (or refused) through the bot."""

    user: str
    action: str  # pause, resume, reconcile, sync, acknowledge, silence, unsilence, ...
    target: str  # "ScaledJob annia/annia-worker on prod"
    outcome: AuditOutcome
    at: datetime
    reason: str = ""
    details: Mapping[str, str] = field(default_factory=dict)
    note: str = ""  # how it ended, in words: "not acknowledged by KEDA", "timed out", ...

    def log_line(self) -> str:
        record: dict[str, Any] = asdict(self) | {"event": "change", "at": self.at.isoformat()}
        return json.dumps(record, sort_keys=True)


class Journal(Protocol):
    """Where finished changes are kept for the Home tab (`bot.access.journal`)."""

    async def add(self, change: Change) -> None: ...


def is_direct_message(channel: str) -> bool:
    """Whether a channel ID is a direct message (`D…`), which nobody else on call can see."""
    return channel.startswith("D")


@dataclass
class Approved:
    """The approval a change runs under (`access.approval`): who approved which request, and
    the outcomes of the changes recorded while it ran."""

    approver: str
    change_id: str
    outcomes: list[AuditOutcome] = field(default_factory=list)


# Set while an approved change runs, so every record it makes names the approver too, whatever
# feature makes it (a change kind's records are built as for a Confirm).
_APPROVED: ContextVar[Approved | None] = ContextVar("kai_chatops_approved", default=None)


@contextmanager
def approved(approver: str, change_id: str) -> Iterator[Approved]:
    """Within this block, every change recorded names `approver` and the request's ID."""
    context = Approved(approver, change_id)
    token = _APPROVED.set(context)
    try:
        yield context
    finally:
        _APPROVED.reset(token)


def _with_approval(change: Change) -> Change:
    context = _APPROVED.get()
    if context is None:
        return change
    context.outcomes.append(change.outcome)
    names = {"approved_by": context.approver, "approval": context.change_id}
    return replace(change, details={**change.details, **names})


def log_change(change: Change) -> None:
    """The audit log line. Its message is the whole record as JSON; its fields (user, command,
    object, outcome) are also set on the record, so the JSON log format shows them at the top.
    A change made under an approval names the approver too (`approved`)."""
    _log(_with_approval(change))


def _log(change: Change) -> None:
    context = {
        "user": change.user,
        "command": change.action,
        "object": change.target,
        "outcome": change.outcome,
    }
    log.info(change.log_line(), extra=context)


async def record(
    change: Change,
    *,
    slack: SlackGateway | None,
    channel: str,
    text: Text,
    alert_channel: str = "",
    journal: Journal | None = None,
) -> None:
    """Log the change, keep it in the `journal` (the Home tab's last changes, `/kai timeline`),
    and `announce` it. Kept as logged: naming its approver, if any."""
    change = _with_approval(change)
    _log(change)
    await _keep(change, journal)
    await announce(text, slack=slack, channel=channel, alert_channel=alert_channel)


async def record_error(
    change: Change,
    error: Exception,
    *,
    who: Text,
    why: str = "",
    slack: SlackGateway | None,
    channel: str,
    alert_channel: str = "",
    journal: Journal | None = None,
) -> None:
    """The one audit line of an action that raised `error`.

    A write that got no answer (`KubeWriteUnknown`) may have been applied: `unknown`, kept in
    the journal and said in `channel` (`who`, mrkdwn, asked to do it; `why`, plain text, says
    more), since nothing later would. Anything else is `failed` and logged only: whoever asked
    sees the error, or the job that tried tries again.
    """
    if isinstance(error, errors.KubeError) and error.details:
        change = replace(change, details={**change.details, **error.details})
    if not isinstance(error, errors.KubeWriteUnknown):
        log_change(replace(change, outcome="failed", note=str(error)))
        return
    target = blocks.escape(change.target) + blocks.escape(why)
    text = rich_text(
        who,
        f" asked to {change.action} {target}; the cluster did not answer in time, so it "
        "may or may not have been done. Check the object.",
    )
    unknown = replace(change, outcome="unknown", note=str(error))
    await record(
        unknown,
        slack=slack,
        channel=channel,
        text=text,
        alert_channel=alert_channel,
        journal=journal,
    )


async def _keep(change: Change, journal: Journal | None) -> None:
    """A journal that cannot be written is logged, never raised: the change itself was made."""
    if journal is None:
        return
    try:
        await journal.add(change)
    except Exception as e:
        log.error("could not keep %s %s in the change journal: %s", change.action, change.target, e)


async def announce(
    text: Text, *, slack: SlackGateway | None, channel: str, alert_channel: str = ""
) -> None:
    """Post `text` in `channel`; also in `alert_channel` when `channel` is a direct message, or
    when the post there failed (e.g. the bot is not a member). A failed post is logged, never
    raised.
    """
    if slack is None or not channel:
        return
    posted = await _post(slack, channel, text)
    if alert_channel and alert_channel != channel and (is_direct_message(channel) or not posted):
        await _post(slack, alert_channel, text)


async def _post(slack: SlackGateway, channel: str, text: Text) -> bool:
    try:
        await slack.post(channel, blocks.text_message(text))
    except SlackUnavailable as e:
        log.error("could not post a change's announcement in %s: %s", channel, e)
        return False
    return True
