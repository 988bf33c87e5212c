"""A change waiting for a second operator (`access.approval`): what was asked, by whom, and how
the wait ended. Pure: every step takes `now` and returns the next record, or raises a
`UserError` that says why nothing changes.

A request waits 15 minutes. It ends once: approved (by an approver who is not the requester),
cancelled (by the requester or an approver), or expired. The store (`bot.access.approval_store`)
applies each step as a compare-and-set, so two approvers clicking at once approve it once.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta
from typing import Literal

from bot.access import policy
from bot.access.confirmations import AskedChange
from bot.access.policy import Members
from bot.config.settings import AccessSettings, ApprovalSettings, Settings
from bot.core import errors
from bot.core.rich import Rich, rich_text
from bot.slack.blocks import mention

LIFETIME = timedelta(minutes=15)
State = Literal["waiting", "approved", "cancelled", "done", "expired"]
# An ID a person can type: 8 characters, no look-alikes (0/O, 1/I/L).
_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
ID_LENGTH = 8


@dataclass(frozen=True)
class Approval:
    """One change waiting for (or past) its approval; `id` is the CHANGE_ID people type."""

    id: str
    action: str  # the confirmed change's kind (`bot.changes.registry`)
    params: Mapping[str, str]  # its parameters, as `bot.changes.params` encodes them
    requested_by: str
    channel_id: str  # where the request was posted (and the change is announced)
    requested_at: datetime
    state: State = "waiting"
    decided_by: str = ""
    decided_at: datetime | None = None
    message_ts: str = ""  # the posted request, edited as it ends
    result: str = ""  # how the change ended, in words, once it ran
    lines: tuple[str, ...] = field(default_factory=tuple)
    what: str = ""  # the change in one line: `pause ScaledJob annia/annia-worker on prod`

    @property
    def expires_at(self) -> datetime:
        return self.requested_at + LIFETIME

    def is_expired(self, now: datetime) -> bool:
        return self.state == "waiting" and now >= self.expires_at

    def pending(self) -> AskedChange:
        """The change as a confirmed one, to be made (its nonce is the ID)."""
        params, user = dict(self.params), self.requested_by
        return AskedChange(self.action, params, user, self.channel_id, self.expires_at, self.id)


def needs_approval(settings: Settings, cluster: str) -> bool:
    """Whether a change on `cluster` ("": the first) must wait for an approver."""
    approval = settings.access.approval
    if approval is None:
        return False
    return (cluster or settings.clusters[0].name) in approval.clusters


def require_approver(user: str, what: str, approval: ApprovalSettings, members: Members) -> None:
    """Raises NotAllowed unless `user` is one of `approvers` (by ID or user group)."""
    if not policy.is_listed(user, approval.approvers, members):
        raise errors.NotAllowed(
            f"You are not allowed to {what}: only approvers may "
            f"(access.approval.approvers: {', '.join(approval.approvers)}). Nothing was changed."
        )


def shares_an_entry(access: AccessSettings) -> bool:
    """Whether an approver is written among the operators as well (no need to ask Slack)."""
    approval = access.approval
    return approval is None or bool(set(approval.approvers) & set(access.operators))


def approvers_problem(access: AccessSettings, members: Members) -> str | None:
    """Why `access.approval` can never be satisfied, or None: approvers must include someone
    who is also an operator (a change is approved only by an operator). `members` holds every
    user group of both lists."""
    approval = access.approval
    if approval is None or shares_an_entry(access):
        return None
    approvers = _people(approval.approvers, members)
    if approvers & _people(access.operators, members):
        return None
    return (
        f"access.approval.approvers: {', '.join(approval.approvers)} names nobody who is also "
        "in access.operators (expected at least one approver who is an operator: only "
        "operators may approve a change)"
    )


def _people(entries: tuple[str, ...], members: Members) -> frozenset[str]:
    users = {entry for entry in entries if not policy.is_group_entry(entry)}
    for entry in policy.group_entries(entries):
        users |= members.get(entry, frozenset())
    return frozenset(users)


def new_id() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(ID_LENGTH))


def normalise_id(text: str) -> str:
    """What someone typed as a CHANGE_ID, as IDs are stored (case and spaces ignored)."""
    return text.strip().upper()


def new_approval(
    asked: AskedChange,
    *,
    channel_id: str,
    what: str,
    lines: tuple[str, ...],
    now: datetime,
    change_id: str,
) -> Approval:
    """A request for `asked` (`what` it does, and `lines` more), posted in `channel_id`,
    waiting from `now`."""
    params, user = dict(asked.params), asked.requested_by
    return Approval(change_id, asked.action, params, user, channel_id, now, lines=lines, what=what)


def check_open(record: Approval | None, change_id: str, now: datetime) -> Approval:
    """The record, still waiting.

    Raises:
        UserError: there is no such request, or it already ended (said how).
    """
    if record is None:
        raise errors.UserError(
            f"No change is waiting for approval under the ID {change_id}; nothing was changed."
        )
    if record.state in ("approved", "done"):
        raise errors.UserError(
            rich_text(
                f"Change {record.id} was already approved by ",
                _who(record.decided_by),
                "; it runs once, nothing more was changed.",
            )
        )
    if record.state == "cancelled" and record.result:
        raise errors.UserError(
            rich_text(
                f"Change {record.id} ended at {clock_time(_decided(record))}: ",
                mention(record.requested_by),
                f" {record.result}; nothing was changed.",
            )
        )
    if record.state == "cancelled":
        raise errors.UserError(
            rich_text(
                f"Change {record.id} was cancelled by ",
                _who(record.decided_by),
                "; nothing was changed.",
            )
        )
    if record.state == "expired" or record.is_expired(now):
        raise errors.UserError(
            f"Change {record.id} expired at {clock_time(record.expires_at)} (nobody approved it "
            "within 15 minutes); nothing was changed. Run the command again."
        )
    return record


def check_not_requester(record: Approval, user: str) -> None:
    """Raises UserError when the requester tries to approve their own change."""
    if user == record.requested_by:
        raise errors.UserError(
            f"You asked for change {record.id}, so you cannot approve it: another approver "
            "must. Nothing was changed."
        )


def approve(record: Approval | None, change_id: str, user: str, now: datetime) -> Approval:
    """The step of an approver's `Approve`: the record, approved by `user` at `now`.

    Raises:
        UserError: no such request, it ended already, or `user` asked for it.
    """
    waiting = check_open(record, change_id, now)
    check_not_requester(waiting, user)
    return replace(waiting, state="approved", decided_by=user, decided_at=now)


def cancel(record: Approval | None, change_id: str, user: str, now: datetime) -> Approval:
    """The step of `Cancel` (by the requester or an approver, checked by the caller)."""
    waiting = check_open(record, change_id, now)
    return replace(waiting, state="cancelled", decided_by=user, decided_at=now)


def refuse(record: Approval | None, change_id: str, user: str, now: datetime, why: str) -> Approval:
    """The step of an approval whose requester no longer qualifies (`why`: "is no longer an
    operator ..."): the request ends, as cancelled by the approver `user` with `why` as its
    result (a state every release knows: none can approve it).

    Raises:
        UserError: no such request, or it ended already.
    """
    waiting = check_open(record, change_id, now)
    return replace(waiting, state="cancelled", decided_by=user, decided_at=now, result=why)


def expire(record: Approval | None, change_id: str, now: datetime) -> Approval:
    """The step of the expiry sweep: a request nobody approved in time, ended as expired.

    Raises:
        UserError: it ended otherwise meanwhile, or has time left.
    """
    if record is None or not record.is_expired(now):
        raise errors.UserError(f"Change {change_id} is not waiting past its time.")
    return replace(record, state="expired", decided_at=record.expires_at)


def finish(record: Approval, result: str) -> Approval:
    """The approved record once its change ran, with how it ended."""
    return replace(record, state="done", result=result)


def clock_time(moment: datetime) -> str:
    """`08:15 UTC`: when, in the words of the request message."""
    return moment.strftime("%H:%M UTC")


def _decided(record: Approval) -> datetime:
    return record.decided_at or record.requested_at


def _who(user: str) -> Rich:
    return mention(user) if user else rich_text("someone")


def to_json(record: Approval) -> str:
    body = asdict(record)
    body["requested_at"] = record.requested_at.isoformat()
    body["decided_at"] = record.decided_at.isoformat() if record.decided_at else None
    return json.dumps(body, separators=(",", ":"), sort_keys=True)


def from_json(text: str) -> Approval:
    """Raises: ValueError, KeyError, TypeError for a record we did not write."""
    body = json.loads(text)
    decided = body.get("decided_at")
    return Approval(
        str(body["id"]),
        str(body["action"]),
        {str(k): str(v) for k, v in dict(body["params"]).items()},
        str(body["requested_by"]),
        str(body["channel_id"]),
        datetime.fromisoformat(body["requested_at"]),
        body["state"],
        str(body.get("decided_by") or ""),
        datetime.fromisoformat(decided) if decided else None,
        str(body.get("message_ts") or ""),
        str(body.get("result") or ""),
        tuple(str(line) for line in body.get("lines") or ()),
        str(body.get("what") or body["action"]),  # a record of an older version: its action
    )
