"""Authorising the Slack user behind a command or a click (`access` in the config).

Group members come from Slack (cached by the gateway); the decision itself is `bot.access.policy`.
"""

from __future__ import annotations

from bot.access import identity, policy
from bot.core import errors
from bot.kube.acting import ActingAs, acting_as
from bot.kube.ports import KubeWriter
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


async def require_identity(deps: Deps, user_id: str) -> None:
    """Refuse at the command, before a Confirm is shown, a person whose change could not be
    sent as them (`access.impersonate`); the click checks again (`kube_for_change`).

    Raises:
        NotAllowed, UserError: as `kube_for_change`.
    """
    await identity.resolve(deps.settings.access.impersonate, user_id, deps.slack)


async def kube_for_change(deps: Deps, cluster: str | None, actor: str) -> KubeWriter:
    """The cluster's gateway for a change `actor` (a Slack user ID) asked for: its patches are
    sent as that person when `access.impersonate` says so, its reads stay the bot's own.

    Raises:
        NotAllowed, UserError: the person's identity cannot be told (no email, Slack cannot be
            asked): nothing is sent, and never as the bot instead.
    """
    kube = deps.kube_for(cluster)
    mode = deps.settings.access.impersonate
    person = await identity.resolve(mode, actor, deps.slack)
    return kube if person is None else acting_as(kube, person)


def acting_details(kube: object) -> dict[str, str]:
    """For the audit line: the Kubernetes identity a change was sent as, and by whom (empty
    when it was sent as the bot itself)."""
    if not isinstance(kube, ActingAs):
        return {}
    return kube.audit_details()
