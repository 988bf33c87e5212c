"""A second pair of eyes on protected clusters (`access.approval`): the request, `Approve` /
`Cancel`, and `/kai approve CHANGE_ID`.

A change on one of `access.approval.clusters`, once confirmed, is posted for everyone to see
with its CHANGE_ID and waits 15 minutes. An operator who is one of the approvers, and not the
requester, approves it (button or command): the record ends once, by compare-and-set in the
shared state (`bot.access.approval_store`), then the change runs exactly as a Confirm would
have, as the requester; its records also name the approver (`bot.access.audit.approved`, and
`kai-chatops/approved-*` on the object). Every refusal is said and changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.access import approvals, audit, policy
from bot.access import render_approval as words
from bot.access.approval_store import ApprovalStep, ApprovalStore, ApprovalsUnavailable
from bot.access.approvals import Approval
from bot.access.confirmations import AskedChange
from bot.commands.approve import Approve
from bot.core import errors
from bot.service.deps import Deps
from bot.slack import blocks as render
from bot.slack.blocks import Message
from bot.slack.gateway import SlackUnavailable
from handlers import confirm, replies
from handlers.approval_record import annotate
from handlers.invocation import Executor, Invocation, Runner

log = logging.getLogger(__name__)
RESULT_CHARS = 600  # how much of a change's result the request message keeps


async def ask_approval(deps: Deps, pending: AskedChange) -> Message:
    """Post the request for `pending` (confirmed by its requester) where the command was given
    (the alert channel for a direct message, which approvers cannot see), and keep it.

    Raises:
        UserError: the request could not be posted or kept; nothing will change.
    """
    now, command = deps.clock(), deps.settings.slack.command
    channel = _public_channel(deps, pending.channel_id)
    lines = words.detail_lines(pending.params)
    record = approvals.new_approval(
        pending, channel_id=channel, lines=lines, now=now, change_id=approvals.new_id()
    )
    channel, ts = await _post_request(deps, record)
    record = replace(record, channel_id=channel, message_ts=ts)
    try:
        await _change(deps, record.id, lambda found: _first(found, record), now)
    except errors.UserError:
        await _show(deps, record, words.unkept_message(record))
        raise
    where = "this channel" if channel == pending.channel_id else "the alert channel"
    return words.waiting_note(record, command, where)


async def _post_request(deps: Deps, record: Approval) -> tuple[str, str]:
    """Post the request where it was asked, else (the bot is not a member there, say) in the
    alert channel; the channel and ts of the post.

    Raises:
        UserError: it could be posted nowhere.
    """
    message = words.request_message(record, deps.settings.slack.command)
    alert_channel = deps.settings.slack.alert_channel
    try:
        return record.channel_id, await deps.slack.post(record.channel_id, message)
    except SlackUnavailable as e:
        if record.channel_id == alert_channel:
            raise _not_posted(record.channel_id, e) from e
        log.warning("could not post approval request %s in %s: %s", record.id, record.channel_id, e)
    try:
        return alert_channel, await deps.slack.post(alert_channel, message)
    except SlackUnavailable as e:
        raise _not_posted(alert_channel, e) from e


def _not_posted(channel: str, error: Exception) -> errors.UserError:
    return errors.UserError(
        f"Could not post the approval request in {channel} ({error}); nothing was changed. "
        "Run the command again."
    )


async def approve(
    executors: Mapping[str, Executor], deps: Deps, user: str, change_id: str
) -> Message:
    """`Approve` or `/kai approve CHANGE_ID` by `user`: checked, ended once, then run.

    Raises:
        UserError / NotAllowed: no such request, it ended, `user` asked for it, or is not an
            operator and approver; nothing changed. What the change raised, once it ran.
    """
    now = deps.clock()
    record = await _open(deps, change_id, now)
    approvals.check_not_requester(record, user)
    await _require_approver(deps, user, f"approve change {record.id}")
    approved = await _change(
        deps, record.id, lambda found: approvals.approve(found, record.id, user, now), now
    )
    result = await _run(executors, deps, approved)
    return {**result, "response_type": "ephemeral", "replace_original": False}


async def cancel(deps: Deps, user: str, change_id: str) -> Message:
    """`Cancel` on a request, by its requester or an approver: it ends, nothing changes."""
    now = deps.clock()
    record = await _open(deps, change_id, now)
    if user != record.requested_by:
        await _require_approver(deps, user, f"cancel change {record.id} (or its requester)")
    cancelled = await _change(
        deps, record.id, lambda found: approvals.cancel(found, record.id, user, now), now
    )
    await _show(deps, cancelled, words.cancelled_message(cancelled))
    note = f"Change {record.id} is cancelled; nothing was changed."
    return {**render.text_message(note), "response_type": "ephemeral", "replace_original": False}


async def expire_requests(deps: Deps) -> None:
    """End the requests nobody approved in time, each said on its message (the scheduler's
    job, on the Lease holder); one that ended otherwise meanwhile is left as it is."""
    now = deps.clock()
    for record in await _store(deps).records():
        if record.is_expired(now):
            await _expire(deps, record.id, now)


async def _expire(deps: Deps, change_id: str, now: datetime) -> None:
    try:
        expired = await _store(deps).change(
            change_id, lambda found: approvals.expire(found, change_id, now), now
        )
    except errors.UserError:
        return  # approved, cancelled or expired by someone else meanwhile
    await _show(deps, expired, words.expired_message(expired))


async def _open(deps: Deps, change_id: str, now: datetime) -> Approval:
    """The request, still waiting; an expired one is shown as expired as it is refused."""
    change_id = approvals.normalise_id(change_id)
    try:
        record = await _store(deps).get(change_id)
    except ApprovalsUnavailable as e:
        raise _unavailable(e) from e
    if record is not None and record.is_expired(now):
        await _show(deps, record, words.expired_message(record))
    return approvals.check_open(record, change_id, now)


async def _run(executors: Mapping[str, Executor], deps: Deps, record: Approval) -> Message:
    """The approved change, run as its requester, its records naming the approver; the
    request message then says who asked, who approved, when, and how it ended."""
    try:
        with audit.approved(record.decided_by, record.id) as context:
            pending = record.pending()
            result = await confirm.run_change(executors, deps, pending, record.requested_by)
    except errors.BotError as e:
        await _finish(deps, record, f"failed: {e}")
        raise
    if any(outcome != "failed" for outcome in context.outcomes):
        await annotate(deps, record)
    await _finish(deps, record, str(result.get("text", "")))
    return result


async def _finish(deps: Deps, record: Approval, result: str) -> None:
    """Show how the approved change ended, and keep it (best effort: the change is made)."""
    result = render.truncate(result, RESULT_CHARS)
    await _show(deps, record, words.approved_message(record, result))
    try:
        finished = approvals.finish(record, result)
        await _store(deps).change(record.id, lambda _: finished, deps.clock())
    except errors.BotError as e:
        log.warning("could not keep how change %s ended: %s", record.id, e)


async def _require_approver(deps: Deps, user: str, what: str) -> None:
    """Raises NotAllowed unless `user` is an operator and one of the approvers."""
    approval = deps.settings.access.approval
    if approval is None:  # a request kept from before the configuration changed
        raise errors.NotAllowed(
            f"You cannot {what}: nobody can, access.approval is not configured now."
        )
    await deps.gate.require_operator(user, what)
    members = await deps.slack.members_of(policy.group_entries(approval.approvers))
    approvals.require_approver(user, what, approval, members)


async def _change(deps: Deps, change_id: str, step: ApprovalStep, now: datetime) -> Approval:
    try:
        return await _store(deps).change(change_id, step, now)
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


async def _show(deps: Deps, record: Approval, message: Message) -> None:
    """Edit the posted request to say how it stands; a failed edit is logged, never raised."""
    if not record.message_ts:
        return
    try:
        await deps.slack.update(record.channel_id, record.message_ts, message)
    except SlackUnavailable as e:
        log.warning("could not update the approval request %s: %s", record.id, e)


def _public_channel(deps: Deps, channel: str) -> str:
    if not channel or audit.is_direct_message(channel):
        return deps.settings.slack.alert_channel
    return channel


def _store(deps: Deps) -> ApprovalStore:
    assert deps.approvals is not None  # `build_deps` opens it
    return deps.approvals


def runners(executors: Mapping[str, Executor]) -> dict[type, Runner]:
    """`/kai approve CHANGE_ID`, carrying out the change with `executors`."""

    async def run_approve(parsed: Approve, deps: Deps, invocation: Invocation) -> Message:
        return await approve(executors, deps, invocation.user_id, parsed.change_id)

    return {Approve: run_approve}


def register(app: AsyncApp, executors: Mapping[str, Executor]) -> None:
    """`Approve` and `Cancel` on a request message."""

    async def on_approve(deps: Deps, user: str, value: str, _: dict[str, Any]) -> Message:
        return await approve(executors, deps, user, value)

    async def on_cancel(deps: Deps, user: str, value: str, _: dict[str, Any]) -> Message:
        return await cancel(deps, user, value)

    app.action(words.APPROVE_ACTION)(replies.button_listener("approve", on_approve))
    app.action(words.CANCEL_ACTION)(replies.button_listener("approval-cancel", on_cancel))
