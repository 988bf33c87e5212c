"""Authorising the Slack user behind a command or a click (`access` in the config).

Group members come from Slack (cached by the gateway); the decision itself is `bot.policy`.
"""

from __future__ import annotations

from bot import policy
from bot.deps import Deps


async def require_operator(deps: Deps, user_id: str, action: str) -> None:
    """Raises NotAllowed unless the user is an operator (by ID or user group)."""
    access = deps.settings.access
    members = await deps.slack.members_of(access.operators) if deps.slack else {}
    policy.require_operator(user_id, action, access, members)


async def require_viewer(deps: Deps, user_id: str, action: str) -> None:
    """Raises NotAllowed unless the user may look (everyone, unless access.viewers is a list)."""
    access = deps.settings.access
    if access.viewers is None:
        return
    entries = access.operators + access.viewers
    members = await deps.slack.members_of(entries) if deps.slack else {}
    policy.require_viewer(user_id, action, access, members)
