"""The approval gate (`access.approval`): a change on a protected cluster waits for a second
operator, 15 minutes at most.

The request is posted for everyone to see, with its CHANGE_ID, where it was asked (the alert
channel for a direct message, which approvers cannot see); it ends once, by compare-and-set in
the shared state (`bot.access.approval_store`): approved by an approver who is not the
requester, cancelled, or expired; the requester is checked again when it is approved. Once an
approved change has run, its object says who approved it (`kai-chatops/approved-*`). Every
refusal is said and changes nothing. (At start, `bot.changes.approvers` refuses an approvers
list naming no operator.)
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from bot.access import approvals, audit, policy, render_approval
from bot.access.approval_store import ApprovalStep, ApprovalStore, ApprovalsUnavailable
from bot.access.approvals import Approval
from bot.access.confirmations import AskedChange
from bot.changes.kinds import Described
from bot.changes.ports import ServiceParts
from bot.core import errors
from bot.core.rich import rich_text
from bot.slack import blocks
from bot.slack.blocks import Message
from bot.slack.gateway import SlackUnavailable

log = logging.getLogger(__name__)
RESULT_CHARS = 600  # how much of a change's result the request message keeps
APPROVED_BY = "kai-chatops/approved-by"
APPROVED_AT = "kai-chatops/approved-at"
APPROVAL = "kai-chatops/approval"


async def request(parts: ServiceParts, asked: AskedChange, described: Described) -> Message:
    """Post the request for `asked` (confirmed by its requester) and keep it; what the
    requester sees instead of the change.

    Raises:
        UserError: the request could not be posted or kept; nothing will change.
    """
    now, command = parts.clock(), parts.settings.slack.command
    channel = _public_channel(parts, asked.channel_id)
    lines = render_approval.detail_lines(described.duration, described.reason)
    record = approvals.new_approval(
        asked,
        channel_id=channel,
        what=described.line,
        lines=lines,
        now=now,
        change_id=approvals.new_id(),
    )
    channel, ts = await _post_request(parts, record)
    record = replace(record, channel_id=channel, message_ts=ts)
    try:
        await _step(parts, record.id, lambda found: _first(found, record), now)
    except errors.UserError as e:
        await show(parts, record, render_approval.unkept_message(record, e))
        raise
    where = "this channel" if channel == asked.channel_id else "the alert channel"
    return render_approval.waiting_note(record, command, where)


async def _post_request(parts: ServiceParts, record: Approval) -> tuple[str, str]:
    """Post the request where it was asked, else (the bot is not a member there, say) in the
    alert channel; the channel and ts of the post.

    Raises:
        UserError: it could be posted nowhere.
    """
    message = render_approval.request_message(record, parts.settings.slack.command)
    alert_channel = parts.settings.slack.alert_channel
    try:
        return record.channel_id, await parts.slack.post(record.channel_id, message)
    except SlackUnavailable as e:
        if record.channel_id == alert_channel:
            raise _not_posted(record.channel_id, e) from e
        log.warning("could not post approval request %s in %s: %s", record.id, record.channel_id, e)
    try:
        return alert_channel, await parts.slack.post(alert_channel, message)
    except SlackUnavailable as e:
        raise _not_posted(alert_channel, e) from e


def _not_posted(channel: str, error: Exception) -> errors.UserError:
    return errors.UserError(
        f"Could not post the approval request in {channel} ({error}); nothing was changed. "
        "Run the command again."
    )


async def open_request(parts: ServiceParts, change_id: str, user: str) -> Approval:
    """The request `user` approves: still waiting, asked by someone else, `user` an operator
    and an approver (an expired one is shown as expired as it is refused).

    Raises:
        UserError / NotAllowed: as `approvals.check_open`, `check_not_requester`, or
            `require_approver` say; nothing changed.
    """
    record = await _open(parts, change_id, parts.clock())
    approvals.check_not_requester(record, user)
    await _require_approver(parts, user, f"approve change {record.id}")
    return record


async def check_requester(
    parts: ServiceParts, record: Approval, approver: str, described: Described
) -> None:
    """The requester checked again as at the command, asking Slack now: one who no longer
    qualifies (not an operator, a guest or deactivated) ends the request, said on its message
    and in one `failed` audit line.

    Raises:
        UserError: they no longer qualify (the request has ended), or Slack cannot say now
            (the request still waits); nothing changed.
    """
    requester = blocks.mention(record.requested_by)
    try:
        problem = await parts.gate.requester_problem(record.requested_by)
    except SlackUnavailable as e:
        raise errors.UserError(
            rich_text(
                "Cannot tell now whether ",
                requester,
                f" may still make changes ({e}); nothing was changed and change {record.id} "
                "still waits. Try again in a moment.",
            )
        ) from e
    if problem is None:
        return
    now = parts.clock()
    ended = await _step(
        parts,
        record.id,
        lambda found: approvals.refuse(found, record.id, approver, now, problem),
        now,
    )
    await show(parts, ended, render_approval.refused_message(ended))
    refused = described.failure(record.requested_by, now)
    details = {"approval": record.id, "checked_by": approver}
    audit.log_change(replace(refused, note=f"refused at approval: {problem}", details=details))
    raise errors.UserError(
        rich_text(f"Change {record.id} ended: ", requester, f" {problem}; nothing was changed.")
    )


async def approve(parts: ServiceParts, record: Approval, user: str) -> Approval:
    """End the request as approved by `user`, once (an approver clicking at the same time
    hears it was approved already)."""
    now = parts.clock()
    return await _step(
        parts, record.id, lambda found: approvals.approve(found, record.id, user, now), now
    )


async def cancel(parts: ServiceParts, user: str, change_id: str) -> Message:
    """`Cancel` on a request, by its requester or an approver: it ends, nothing changes."""
    now = parts.clock()
    record = await _open(parts, change_id, now)
    if user != record.requested_by:
        await _require_approver(parts, user, f"cancel change {record.id} (or its requester)")
    cancelled = await _step(
        parts, record.id, lambda found: approvals.cancel(found, record.id, user, now), now
    )
    await show(parts, cancelled, render_approval.cancelled_message(cancelled))
    note = f"Change {record.id} is cancelled; nothing was changed."
    return {**blocks.text_message(note), "response_type": "ephemeral", "replace_original": False}


async def finish(parts: ServiceParts, record: Approval, result: str) -> None:
    """Show how the approved change ended, and keep it (best effort: the change is made)."""
    result = blocks.truncate(result, RESULT_CHARS)
    await show(parts, record, render_approval.approved_message(record, result))
    try:
        finished = approvals.finish(record, result)
        await _store(parts).change(record.id, lambda _: finished, parts.clock())
    except errors.BotError as e:
        log.warning("could not keep how change %s ended: %s", record.id, e)


async def annotate(parts: ServiceParts, record: Approval, described: Described) -> None:
    """Write who approved `record`'s change on its object; a failure is logged (the change is
    made, and the audit line names the approver)."""
    if record.decided_at is None:
        return
    body = {"metadata": {"annotations": approval_annotations(record)}}
    try:
        kube = parts.kube_for(described.cluster)
        await kube.patch_object(described.ref, described.name, described.namespace, body)
    except errors.BotError as e:
        log.warning("could not record the approval of %s on the object: %s", record.id, e)


def approval_annotations(record: Approval) -> dict[str, str | None]:
    """The approver, when, and the request's ID (times in RFC 3339 UTC)."""
    assert record.decided_at is not None
    when = record.decided_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {APPROVED_BY: record.decided_by, APPROVED_AT: when, APPROVAL: record.id}


async def expire_requests(parts: ServiceParts) -> None:
    """Forget the records a day past their expiry, then end the requests nobody approved in
    time, each said on its message (the scheduler's job, on the Lease holder); one that ended
    otherwise meanwhile is left as it is."""
    now = parts.clock()
    await _store(parts).prune(now)
    for record in await _store(parts).records():
        if record.is_expired(now):
            await _expire(parts, record.id, now)


async def _expire(parts: ServiceParts, change_id: str, now: datetime) -> None:
    try:
        expired = await _store(parts).change(
            change_id, lambda found: approvals.expire(found, change_id, now), now
        )
    except errors.UserError:
        return  # approved, cancelled or expired by someone else meanwhile
    await show(parts, expired, render_approval.expired_message(expired))


async def _open(parts: ServiceParts, change_id: str, now: datetime) -> Approval:
    """The request, still waiting; an expired one is shown as expired as it is refused."""
    change_id = approvals.normalise_id(change_id)
    try:
        record = await _store(parts).get(change_id)
    except ApprovalsUnavailable as e:
        raise _unavailable(e) from e
    if record is not None and record.is_expired(now):
        await show(parts, record, render_approval.expired_message(record))
    return approvals.check_open(record, change_id, now)


async def _require_approver(parts: ServiceParts, user: str, what: str) -> None:
    """Raises NotAllowed unless `user` is an operator and one of the approvers."""
    approval = parts.settings.access.approval
    if approval is None:  # a request kept from before the configuration changed
        raise errors.NotAllowed(
            f"You cannot {what}: nobody can, access.approval is not configured now."
        )
    await parts.gate.require_operator(user, what)
    members = await parts.slack.members_of(policy.group_entries(approval.approvers))
    approvals.require_approver(user, what, approval, members)


async def _step(parts: ServiceParts, change_id: str, step: ApprovalStep, now: datetime) -> Approval:
    try:
        return await _store(parts).change(change_id, step, now)
    except ApprovalsUnavailable as e:
        raise _unavailable(e) from e


def _first(found: Approval | None, record: Approval) -> Approval:
    if found is not None:  # eight characters of 31: a clash is all but impossible, yet refused
        raise errors.UserError("That change ID is taken; nothing was changed. Try again.")
    return record


def _unavailable(error: Exception) -> errors.UserError:
    return errors.UserError(
        f"Cannot reach the memory of approvals just now ({error}); nothing was changed. "
        "Try again in a moment."
    )


async def show(parts: ServiceParts, record: Approval, message: Message) -> None:
    """Edit the posted request to say how it stands; a failed edit is logged, never raised."""
    if not record.message_ts:
        return
    try:
        await parts.slack.update(record.channel_id, record.message_ts, message)
    except SlackUnavailable as e:
        log.warning("could not update the approval request %s: %s", record.id, e)


def _public_channel(parts: ServiceParts, channel: str) -> str:
    if not channel or audit.is_direct_message(channel):
        return parts.settings.slack.alert_channel
    return channel


def _store(parts: ServiceParts) -> ApprovalStore:
    assert parts.approvals is not None  # `build_deps` opens it
    return parts.approvals
