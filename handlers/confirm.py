"""Confirm / Cancel: asking before a change, and carrying out the change on a valid click.

A click is authorised again on the server, must carry an unexpired confirmation we signed, and
works once; only then does the feature's executor run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from bot.access import approvals, audit, confirmations
from bot.access.confirmations import AskedChange
from bot.access.once import OnceUnavailable
from bot.core import errors
from bot.core.rich import rich_text
from bot.service.deps import Deps
from bot.slack import blocks as render
from bot.slack.blocks import Message, Text
from handlers import replies
from handlers.invocation import Executor, Invocation

Listener = Callable[..., Awaitable[None]]
# A confirmation's action name where the command's word differs (Flux resume beside KEDA's).
_ACTION_WORDS = {"flux-resume": "resume"}


def ask(
    deps: Deps,
    invocation: Invocation,
    *,
    action: str,
    params: Mapping[str, str],
    title: str,
    lines: list[str],
) -> Message:
    """The private message asking the user to confirm `action` with `params`."""
    pending = confirmations.new_pending(
        action,
        params,
        user_id=invocation.user_id,
        channel_id=invocation.channel_id,
        now=deps.clock(),
    )
    sealed = confirmations.seal(pending, deps.confirm_key)
    return {**render.confirmation_message(title, lines, sealed), "response_type": "ephemeral"}


# Where a confirmed change goes instead of running, when its cluster needs a second operator
# (`handlers.approval.ask_approval`): (deps, the confirmed change) -> the requester's reply.
AskApproval = Callable[[Deps, AskedChange], Awaitable[Message]]


def make_confirm_listener(
    executors: Mapping[str, Executor], ask_approval: AskApproval | None = None
) -> Listener:
    """The `Confirm` button's listener, dispatching to the feature that asked; on a cluster of
    `access.approval` the confirmed change waits for an approver (`ask_approval`) instead."""

    async def confirm(deps: Deps, user_id: str, value: str, _: dict[str, Any]) -> Message:
        pending = confirmations.unseal(value, deps.confirm_key, deps.clock())
        await deps.gate.require_operator(user_id, pending.action)
        if pending.action not in executors:
            raise errors.UserError(f"'{pending.action}' cannot be confirmed in this version.")
        await claim_once(deps, pending)
        if ask_approval is not None and approvals.needs_approval(deps.settings, pending.params):
            return await ask_approval(deps, pending)
        result = await run_change(executors, deps, pending, user_id)
        return {**result, "replace_original": True}

    return replies.button_listener("confirm", confirm)


async def run_change(
    executors: Mapping[str, Executor], deps: Deps, pending: AskedChange, actor: str
) -> Message:
    """Carry out a confirmed (or approved) change as `actor`; an error it raises is recorded
    (its one audit line), then raised.

    Raises:
        UserError: the action is unknown to this version; what the executor raises.
    """
    execute = executors.get(pending.action)
    if execute is None:
        raise errors.UserError(f"'{pending.action}' cannot be carried out in this version.")
    try:
        return await execute(pending, deps, actor)
    except errors.BotError as e:  # executors record what they return; this, they raised
        await _record_error(deps, pending, actor, e)
        raise


async def claim_once(deps: Deps, pending: AskedChange) -> None:
    """Use the confirmation up, on every replica, for good (it is remembered until it expires).

    Raises:
        UserError: it was used (confirmed or cancelled) before, or that cannot be told now:
            a change fails closed.
    """
    key = confirmations.once_key(pending)
    try:
        first = await deps.once.claim(key, pending.expires_at, deps.clock())
    except OnceUnavailable as e:
        raise errors.UserError(
            f"Cannot tell whether this confirmation was already used ({e}); nothing was "
            "changed. Try again in a moment."
        ) from e
    if not first:
        raise errors.UserError("This confirmation was already used; nothing more was changed.")


async def cancel(deps: Deps, user_id: str, value: str, _: dict[str, Any]) -> Message:
    """`Cancel`: nothing changes, and the confirmation can no longer be used anywhere."""
    await claim_once(deps, confirmations.unseal(value, deps.confirm_key, deps.clock()))
    note = rich_text("Cancelled by ", render.mention(user_id), "; nothing was changed.")
    return {**render.text_message(note), "replace_original": True}


handle_cancel = replies.button_listener("cancel", cancel)


async def announce(deps: Deps, pending: AskedChange, change: audit.Change, text: Text) -> None:
    """Record a confirmed change: the log line, and `text` in the channel the command came
    from, and in the alert channel too when that was a direct message (or the bot is not a
    member there)."""
    await audit.record(
        change,
        slack=deps.slack,
        channel=pending.channel_id,
        text=text,
        alert_channel=deps.settings.slack.alert_channel,
        journal=deps.journal,
    )


async def _record_error(
    deps: Deps, pending: AskedChange, user_id: str, error: errors.BotError
) -> None:
    """A confirmed change that raised: `failed` (the clicker sees the error), or `unknown` when
    its write got no answer, said where `announce` says changes, for someone to check."""
    await audit.record_error(
        _change(deps, pending, user_id),
        error,
        who=render.mention(user_id),
        slack=deps.slack,
        channel=pending.channel_id,
        alert_channel=deps.settings.slack.alert_channel,
        journal=deps.journal,
    )


def _change(deps: Deps, pending: AskedChange, user_id: str) -> audit.Change:
    """The record of a confirmed change that ended in an error, from what it asked for (its
    outcome and note are set by `audit.record_error`)."""
    params = pending.params
    what = f"{params.get('kind', '')} {params.get('namespace') or params.get('ns', '')}/"
    what += f"{params.get('name', '')} on {params.get('cluster', '')}"
    reason = params.get("reason", "")
    action = _ACTION_WORDS.get(pending.action, pending.action)
    return audit.Change(user_id, action, what, "failed", deps.clock(), reason)
