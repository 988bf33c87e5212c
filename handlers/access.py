"""Authorising the Slack user behind a command or a click (`access` in the config).

Group members come from Slack (cached by the gateway); the decision itself is `bot.access.policy`.
"""

from __future__ import annotations

from bot.access import policy
from bot.core import errors
from bot.service.deps import Deps


async def require_operator(deps: Deps, user_id: str, action: str) -> None:
    """Raises NotAllowed unless the user is an operator (by ID or user group).

    Guests and deactivated accounts never change anything, whatever the lists say.
    """
    access = deps.settings.access
    groups = policy.group_entries(access.operators)
    members = await deps.slack.members_of(groups)
    policy.require_operator(user_id, action, access, members)
    if await deps.slack.is_guest_or_deactivated(user_id):
        raise errors.NotAllowed(
            f"You are not allowed to {action}: guest and deactivated accounts cannot make changes."
        )


async def require_viewer(deps: Deps, user_id: str, action: str) -> None:
    """Raises NotAllowed unless the user may look (everyone, unless access.viewers is a list)."""
    access = deps.settings.access
    if access.viewers is None:
        return
    entries = access.operators + access.viewers
    groups = policy.group_entries(entries)
    members = await deps.slack.members_of(groups)
    policy.require_viewer(user_id, action, access, members)
