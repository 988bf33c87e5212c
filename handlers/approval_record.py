"""The approver on the object, and the approvers list checked at start (`access.approval`).

The change itself writes its own record (who asked, when, why) as for a Confirm; this adds, on
the same object, who approved it, when, and the request's ID, under `kai-chatops/` (the fields
the admission policy lets the bot write). At start, an approvers list naming nobody who is an
operator is refused: nothing on those clusters could ever run.
"""

from __future__ import annotations

import logging

from bot.access import approvals, policy
from bot.access.approvals import Approval
from bot.core import errors
from bot.gitops.kinds import BY_KIND
from bot.kube import kinds
from bot.kube.kinds import ResourceRef
from bot.service.deps import Deps
from bot.slack.gateway import SlackGateway, SlackUnavailable

log = logging.getLogger(__name__)
APPROVED_BY = "kai-chatops/approved-by"
APPROVED_AT = "kai-chatops/approved-at"
APPROVAL = "kai-chatops/approval"
_REFS: dict[str, ResourceRef] = {
    **BY_KIND,
    "ScaledJob": kinds.SCALED_JOB,
    "ScaledObject": kinds.SCALED_OBJECT,
}


async def annotate(deps: Deps, record: Approval) -> None:
    """Write who approved `record`'s change on its object; a failure is logged (the change is
    made, and the audit line names the approver)."""
    params = record.params
    ref = _REFS.get(params.get("kind", ""))
    if ref is None or record.decided_at is None:
        return
    namespace = params.get("namespace") or params.get("ns", "")
    body = {"metadata": {"annotations": approval_annotations(record)}}
    try:
        kube = deps.kube_for(params.get("cluster"))
        await kube.patch_object(ref, params.get("name", ""), namespace, body)
    except errors.BotError as e:
        log.warning("could not record the approval of %s on the object: %s", record.id, e)


def approval_annotations(record: Approval) -> dict[str, str | None]:
    """The approver, when, and the request's ID (times in RFC 3339 UTC)."""
    assert record.decided_at is not None
    when = record.decided_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {APPROVED_BY: record.decided_by, APPROVED_AT: when, APPROVAL: record.id}


async def check_approvers(deps: Deps) -> None:
    """Refuse an approvers list that names no operator, asking Slack for the user groups' members
    when the lists do not share an entry.

    When Slack cannot be asked at start, the service starts and says so in the log: a wrong
    list cannot let a change through (each approval checks the approver again), it can only
    leave requests to expire.

    Raises:
        ConfigError: no approver is an operator.
    """
    access = deps.settings.access
    if approvals.shares_an_entry(access):
        return
    assert access.approval is not None
    groups = policy.group_entries(access.operators + access.approval.approvers)
    members = await _members(deps.slack, groups)
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
