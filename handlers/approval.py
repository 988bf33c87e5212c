"""`/kai approve CHANGE_ID`, and `Approve` / `Cancel` on a request waiting for a second operator
(`access.approval`): each handed to the change pipeline (`bot.changes`)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.access import render_approval
from bot.commands.approve import Approve
from bot.service.deps import Deps
from bot.slack.blocks import Message
from handlers import replies
from handlers.invocation import Invocation, Runner


async def run_approve(parsed: Approve, deps: Deps, invocation: Invocation) -> Message:
    """`/kai approve CHANGE_ID`: checked, ended once, then the change is made."""
    return await deps.changes.approve(invocation.user_id, parsed.change_id)


async def on_approve(deps: Deps, user_id: str, value: str, _: dict[str, Any]) -> Message:
    return await deps.changes.approve(user_id, value)


async def on_cancel(deps: Deps, user_id: str, value: str, _: dict[str, Any]) -> Message:
    return await deps.changes.cancel_request(user_id, value)


RUNNERS: dict[type, Runner] = {Approve: run_approve}


def register(app: AsyncApp) -> None:
    """`Approve` and `Cancel` on a request message."""
    app.action(render_approval.APPROVE_ACTION)(replies.button_listener("approve", on_approve))
    cancel = replies.button_listener("approval-cancel", on_cancel)
    app.action(render_approval.CANCEL_ACTION)(cancel)
