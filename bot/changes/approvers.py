"""The check at start that an approvers list (`access.approval.approvers`) names someone who is
also an operator: else nothing on those clusters could ever run. Asks Slack for the user groups'
members when the two lists share no entry; when Slack cannot say, the service starts and logs it
(each approval checks the approver again, `bot.changes.approval`).
"""

from __future__ import annotations

import logging

from bot.access import approvals, policy
from bot.changes.ports import ServiceParts
from bot.core import errors
from bot.slack.gateway import SlackGateway, SlackUnavailable

log = logging.getLogger(__name__)


async def check_approvers(parts: ServiceParts) -> None:
    """Refuse an approvers list that names no operator, asking Slack for the user groups' members
    when the lists do not share an entry.

    When Slack cannot be asked at start, the service starts and says so in the log: a wrong
    list cannot let a change through (each approval checks the approver again), it can only
    leave requests to expire.

    Raises:
        ConfigError: no approver is an operator.
    """
    access = parts.settings.access
    if approvals.shares_an_entry(access):
        return
    assert access.approval is not None
    groups = policy.group_entries(access.operators + access.approval.approvers)
    members = await _members(parts.slack, groups)
    if members is None:
        return
    problem = approvals.approvers_problem(access, members)
    if problem is not None:
        raise errors.ConfigError([problem])


async def _members(slack: SlackGateway, groups: list[str]) -> dict[str, frozenset[str]] | None:
    try:
        return await slack.members_now(groups)
    except SlackUnavailable as e:
        log.warning(
            "cannot check at start that an approver (access.approval.approvers) is an operator: "
            "Slack could not say who is in %s (%s); each approval is checked when it is given",
            ", ".join(groups),
            e,
        )
        return None
