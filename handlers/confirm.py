"""Confirm / Cancel on a change's confirmation: each click handed to the change pipeline
(`bot.changes`), which checks it (signed, unexpired, used once, the clicker an operator)."""

from __future__ import annotations

from typing import Any

from bot.service.deps import Deps
from bot.slack.blocks import Message
from handlers import replies


async def confirm(deps: Deps, user_id: str, value: str, _: dict[str, Any]) -> Message:
    """`Confirm`: the change is made (or waits for an approver)."""
    return await deps.changes.confirm(user_id, value)


async def cancel(deps: Deps, user_id: str, value: str, _: dict[str, Any]) -> Message:
    """`Cancel`: nothing changes, and the confirmation can no longer be used anywhere."""
    return await deps.changes.cancel(user_id, value)


handle_confirm = replies.button_listener("confirm", confirm)
handle_cancel = replies.button_listener("cancel", cancel)
