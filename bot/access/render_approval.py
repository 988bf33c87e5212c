"""How a change waiting for approval looks in Slack: the public request with `Approve` /
`Cancel`, and the same message once it ended (approved and run, cancelled, its requester no
longer qualified, expired).

Pure. What the change is, is said as its kind described it when the request was made
(`Approval.what`, `bot.changes.kinds.Described.line`).
"""

from __future__ import annotations

from datetime import timedelta

from bot.access.approvals import Approval, clock_time
from bot.core.durations import format_duration
from bot.core.rich import Rich, rich_text
from bot.slack import blocks
from bot.slack.blocks import Message

APPROVE_ACTION = "kai_approve"
CANCEL_ACTION = "kai_approval_cancel"


def detail_lines(duration: timedelta | None, reason: str) -> tuple[str, ...]:
    """The duration and reason a pause or suspend carries, as lines of the request."""
    lines = []
    if duration is not None:
        lines.append(f"For {format_duration(duration)}")
    if reason:
        lines.append(f"Reason: {reason}")
    return tuple(lines)


def request_message(record: Approval, command: str) -> Message:
    """The public request: who asks what, its ID, until when, and the two buttons."""
    buttons = {
        "type": "actions",
        "block_id": "kai_approval",
        "elements": [
            blocks.button("Approve", APPROVE_ACTION, record.id, style="primary"),
            blocks.button("Cancel", CANCEL_ACTION, record.id),
        ],
    }
    until = clock_time(record.expires_at)
    how = (
        f"An approver (access.approval.approvers) other than the requester clicks Approve or "
        f"runs `{command} approve {record.id}` by {until}; until then nothing changes."
    )
    shown = [blocks.section(_asked(record)), buttons, blocks.context(blocks.escape(how))]
    text = rich_text(_asked_plain(record), f" Approve by {until}.")
    return blocks.fit_message({"text": text, "blocks": shown})


def approved_message(record: Approval, result: str) -> Message:
    """The request once approved and run: who asked, who approved, when, and how it ended."""
    assert record.decided_at is not None
    said = rich_text(
        _asked(record),
        "\n:white_check_mark: Approved by ",
        blocks.mention(record.decided_by),
        f" at {clock_time(record.decided_at)}.",
    )
    outcome = blocks.escape(result) if result else "It ran."
    return _ended(said, f"Result: {outcome}")


def cancelled_message(record: Approval) -> Message:
    assert record.decided_at is not None
    said = rich_text(
        _asked(record),
        "\n:no_entry_sign: Cancelled by ",
        blocks.mention(record.decided_by),
        f" at {clock_time(record.decided_at)}; nothing was changed.",
    )
    return _ended(said)


def refused_message(record: Approval) -> Message:
    """The request once its requester no longer qualified when it was approved
    (`approvals.refuse`: `result` says why)."""
    assert record.decided_at is not None
    said = rich_text(
        _asked(record),
        f"\n:no_entry_sign: Ended at {clock_time(record.decided_at)}, when ",
        blocks.mention(record.decided_by),
        " approved it: ",
        blocks.mention(record.requested_by),
        f" {blocks.escape(record.result)}; nothing was changed.",
    )
    return _ended(said)


def expired_message(record: Approval) -> Message:
    said = rich_text(
        _asked(record),
        f"\n:hourglass: Expired at {clock_time(record.expires_at)}: nobody approved it within "
        "15 minutes; nothing was changed.",
    )
    return _ended(said)


def unkept_message(record: Approval, why: object) -> Message:
    """The request once it turned out it could not be kept (`why`, in words): it can never be
    approved."""
    said = rich_text(
        _asked(record),
        "\n:warning: This request could not be kept, so it cannot be approved: ",
        blocks.escape(str(why)),
    )
    return _ended(said)


def waiting_note(record: Approval, command: str, where: str) -> Message:
    """What the requester sees in place of the Confirm: the change now waits for an approver."""
    text = (
        f"Change {record.id} ({record.what}) now waits for a second "
        f"operator's approval, asked in {where}: an approver clicks Approve or runs "
        f"`{command} approve {record.id}` by {clock_time(record.expires_at)}. "
        "Nothing has changed yet."
    )
    return {**blocks.text_message(text), "replace_original": True}


def _asked(record: Approval) -> Rich:
    what = blocks.escape(record.what)
    details = "".join(f"\n{blocks.escape(line)}" for line in record.lines)
    return rich_text(
        f":lock: *Approval needed* for change `{record.id}`\n",
        blocks.mention(record.requested_by),
        f" asked to *{what}*{details}",
    )


def _asked_plain(record: Approval) -> Rich:
    what = record.what
    return rich_text(
        f"Change {record.id}: ", blocks.mention(record.requested_by), f" asked to {what}."
    )


def _ended(said: Rich, note: str = "") -> Message:
    shown = [blocks.section(said)] + ([blocks.context(note)] if note else [])
    text = rich_text(said, f" {note}" if note else "")
    return blocks.fit_message({"text": text, "blocks": shown})
