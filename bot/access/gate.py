"""The gate every command and click passes: may this Slack user look, or change things?

User groups' members come from Slack (cached by the gateway); the decision itself is the pure
`bot.access.policy`. Guests and deactivated accounts never change anything, whatever the lists
say. A change's Kubernetes identity (`access.impersonate`) is told here too, before a Confirm
is shown, so a person whose change could not be sent as them is refused at the command.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.access import identity, policy
from bot.config.settings import AccessSettings
from bot.core import errors
from bot.kube.identity import Impersonation
from bot.slack.gateway import SlackGateway


@dataclass(frozen=True)
class Gate:
    """The access checks of one service: its `access` settings and the Slack that says who is
    in which user group."""

    access: AccessSettings
    slack: SlackGateway

    async def require_operator(self, user_id: str, action: str) -> None:
        """Raises NotAllowed unless the user is an operator (by ID or user group), and neither a
        guest nor deactivated."""
        groups = policy.group_entries(self.access.operators)
        members = await self.slack.members_of(groups)
        policy.require_operator(user_id, action, self.access, members)
        if await self.slack.is_guest_or_deactivated(user_id):
            raise errors.NotAllowed(
                f"You are not allowed to {action}: guest and deactivated accounts cannot make "
                "changes."
            )

    async def requester_problem(self, user_id: str) -> str | None:
        """Why a change `user_id` asked for may no longer run (no longer an operator; a guest
        or deactivated now), or None: the command's check again, asked of Slack now, as an
        approval may come 15 minutes after the command.

        Raises:
            SlackUnavailable: Slack could not be asked (whether they qualify is unknown).
        """
        members = await self.slack.members_now(policy.group_entries(self.access.operators))
        if not policy.is_operator(user_id, self.access, members):
            return "is no longer an operator (access.operators)"
        if await self.slack.is_guest_or_deactivated_now(user_id):
            return "is now a guest or a deactivated account"
        return None

    async def require_viewer(self, user_id: str, action: str) -> None:
        """Raises NotAllowed unless the user may look (everyone, unless access.viewers is a
        list)."""
        if self.access.viewers is None:
            return
        groups = policy.group_entries(self.access.operators + self.access.viewers)
        members = await self.slack.members_of(groups)
        policy.require_viewer(user_id, action, self.access, members)

    async def person(self, user_id: str) -> Impersonation | None:
        """Whom `user_id`'s change is sent as (None: as the bot itself, `impersonate: none`).

        Raises:
            NotAllowed, UserError: the identity cannot be told (no email, Slack cannot be
                asked): nothing is to be sent, and never as the bot instead.
        """
        return await identity.resolve(self.access.impersonate, user_id, self.slack)
