"""A change waiting for a second operator: each step's decision, the start check of the
approvers list, the `approve` grammar and the words of the request. Pure tables."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.access import approvals
from bot.access import render_approval as words
from bot.access.approvals import Approval
from bot.access.confirmations import AskedChange, new_pending
from bot.commands.approve import Approve
from bot.config import settings as config
from bot.config.settings import AccessSettings, ApprovalSettings
from bot.core import errors
from bot.subcommands import GRAMMAR

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
PARAMS = {"kind": "ScaledJob", "namespace": "annia", "name": "w", "cluster": "prod"}
WHAT = "pause ScaledJob annia/w on prod"  # as the pause kind describes it (test_changes_kinds)


def waiting(**changes: object) -> Approval:
    pending = new_pending("pause", PARAMS, user_id="UASK", channel_id="C1", now=T0)
    record = approvals.new_approval(
        pending, channel_id="C1", what=WHAT, lines=(), now=T0, change_id="ID1"
    )
    return replace(record, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("record", "user", "at", "said"),
    [
        (None, "UOK", T0, "No change is waiting for approval under the ID ID1"),
        (waiting(), "UASK", T0, "You asked for change ID1, so you cannot approve it"),
        (waiting(), "UOK", T0 + timedelta(minutes=15), "expired at 10:15 UTC"),
        (waiting(state="approved", decided_by="UX"), "UOK", T0, "already approved by @UX"),
        (waiting(state="done", decided_by="UX"), "UOK", T0, "already approved by @UX"),
        (waiting(state="cancelled", decided_by="UX"), "UOK", T0, "was cancelled by @UX"),
    ],
    ids=["unknown", "self", "expired-at-15-minutes", "approved", "done", "cancelled"],
)
def test_an_approval_that_cannot_be_given_says_why(
    record: Approval | None, user: str, at: datetime, said: str
) -> None:
    with pytest.raises(errors.UserError, match=said):
        approvals.approve(record, "ID1", user, at)


def test_an_approval_within_15_minutes_by_another_user_approves_once() -> None:
    at = T0 + timedelta(minutes=14, seconds=59)
    approved = approvals.approve(waiting(), "ID1", "UOK", at)

    assert (approved.state, approved.decided_by, approved.decided_at) == ("approved", "UOK", at)
    with pytest.raises(errors.UserError, match="already approved"):
        approvals.approve(approved, "ID1", "UOTHER", at)


def test_cancel_ends_the_request_and_the_record_survives_json() -> None:
    cancelled = approvals.cancel(waiting(lines=("Reason: x",)), "ID1", "UASK", T0)

    assert approvals.from_json(approvals.to_json(cancelled)) == cancelled
    assert cancelled.pending().params == PARAMS and cancelled.pending().nonce == "ID1"


def access(operators: tuple[str, ...], approvers: tuple[str, ...]) -> AccessSettings:
    return AccessSettings(operators=operators, approval=ApprovalSettings(("prod",), approvers))


@pytest.mark.parametrize(
    ("operators", "approvers", "members", "refused"),
    [
        (("@ops",), ("@ops",), {}, False),
        (("UA",), ("UA", "@leads"), {}, False),
        (("@ops",), ("@leads",), {"@ops": {"UA"}, "@leads": {"UA", "UB"}}, False),
        (("UB",), ("@leads",), {"@leads": {"UA", "UB"}}, False),
        (("@ops",), ("@leads",), {"@ops": {"UA"}, "@leads": {"UB"}}, True),
        (("@ops",), ("UB",), {"@ops": {"UA"}}, True),
        (("@ops",), ("@leads",), {}, True),
    ],
    ids=[
        "same-group",
        "same-user",
        "a-member-of-both",
        "an-operator-by-id-in-the-group",
        "groups-apart",
        "an-approver-by-id-who-is-no-operator",
        "empty-groups",
    ],
)
def test_an_approvers_list_naming_no_operator_is_refused(
    operators: tuple[str, ...],
    approvers: tuple[str, ...],
    members: dict[str, set[str]],
    refused: bool,
) -> None:
    resolved = {group: frozenset(users) for group, users in members.items()}
    problem = approvals.approvers_problem(access(operators, approvers), resolved)
    assert (problem is not None) is refused
    if problem:
        assert problem.startswith("access.approval.approvers:")


@pytest.mark.parametrize(
    ("cluster", "needs"),
    [("prod", True), ("", True), ("staging", False)],
    ids=["listed", "the-default-cluster-listed", "not-listed"],
)
def test_only_changes_on_approval_clusters_wait(cluster: str, needs: bool) -> None:
    approval = {"clusters": ["prod"], "approvers": ["U0LEAD"]}
    raw = {
        "clusters": [{"name": "prod"}, {"name": "staging"}],
        "slack": {"alert_channel": "C0ALERTS"},
        "access": {"operators": ["U0LEAD"], "approval": approval},
    }
    settings = config.parse_settings(raw)
    assert approvals.needs_approval(settings, cluster) is needs


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("approve 7kq2mxd4", Approve("7KQ2MXD4")),
        ("approve 7KQ2MXD4 --cluster prod", Approve("7KQ2MXD4", "prod")),
    ],
    ids=["lowercase", "with-cluster"],
)
def test_approve_reads_a_change_id(text: str, parsed: Approve) -> None:
    assert GRAMMAR.parse(text) == parsed


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("approve", "approve needs a CHANGE_ID"),
        ("approve 7KQ2", "'7KQ2' is not a CHANGE_ID"),
        ("approve 7KQ2MXD4 extra", "unexpected 'extra'"),
    ],
    ids=["missing", "too-short", "extra-word"],
)
def test_a_bad_approve_gets_its_usage(text: str, problem: str) -> None:
    with pytest.raises(errors.BadCommand, match=problem) as caught:
        GRAMMAR.parse(text)
    assert caught.value.usage.startswith("/kai approve CHANGE_ID")


def test_approve_is_in_the_help_for_operators() -> None:
    help_text = GRAMMAR.help_text("/kai")
    operators = help_text.split("For operators only")[1]
    assert "/kai approve: approve a change another operator asked for" in operators


def test_a_request_shows_who_asked_its_id_and_deadline_with_two_buttons() -> None:
    record = waiting(lines=words.detail_lines(timedelta(hours=2), "drain"))

    message = words.request_message(record, "/kai")

    shown = str(message["blocks"])
    assert "<@UASK> asked to *pause ScaledJob annia/w on prod*\\nFor 2h\\nReason: drain" in shown
    assert "`/kai approve ID1` by 10:15 UTC" in shown
    labels = [e["text"]["text"] for e in message["blocks"][1]["elements"]]
    assert labels == ["Approve", "Cancel"]


def test_the_expiry_sweep_ends_only_requests_past_their_15_minutes() -> None:
    with pytest.raises(errors.UserError, match="not waiting past its time"):
        approvals.expire(waiting(), "ID1", T0 + timedelta(minutes=14, seconds=59))
    with pytest.raises(errors.UserError, match="not waiting past its time"):
        approvals.expire(waiting(state="approved"), "ID1", T0 + timedelta(hours=1))

    expired = approvals.expire(waiting(), "ID1", T0 + timedelta(minutes=15))

    assert expired.state == "expired"
    with pytest.raises(errors.UserError, match="expired at 10:15 UTC"):
        approvals.approve(expired, "ID1", "UOK", T0)  # even by a clock that lags


def test_a_requester_who_no_longer_qualifies_ends_the_request_said_by_every_release() -> None:
    at = T0 + timedelta(minutes=10)
    why = "is no longer an operator (access.operators)"

    ended = approvals.refuse(waiting(), "ID1", "UOK", at, why)

    assert (ended.state, ended.decided_by, ended.decided_at, ended.result) == (
        "cancelled",  # a state older releases know: none of them can approve it
        "UOK",
        at,
        why,
    )
    assert approvals.from_json(approvals.to_json(ended)) == ended
    with pytest.raises(errors.UserError) as late:
        approvals.approve(ended, "ID1", "UOTHER", at)
    assert str(late.value) == (f"Change ID1 ended at 10:10 UTC: @UASK {why}; nothing was changed.")
    shown = str(words.refused_message(ended))
    assert f"Ended at 10:10 UTC, when <@UOK> approved it: <@UASK> {why}; nothing was" in shown
    with pytest.raises(errors.UserError, match="was cancelled by @UOK"):
        approvals.refuse(replace(ended, result=""), "ID1", "UOK", at, why)


def test_a_request_that_ended_or_expired_cannot_be_ended_again_by_a_requester_check() -> None:
    with pytest.raises(errors.UserError, match="expired at 10:15 UTC"):
        approvals.refuse(waiting(), "ID1", "UOK", T0 + timedelta(minutes=15), "is gone")
    with pytest.raises(errors.UserError, match="No change is waiting"):
        approvals.refuse(None, "ID1", "UOK", T0, "is gone")


# Issue 36 (make mutate): every word a refused step says, and every field of each step's record.
SAID = {
    "unknown": (None, "No change is waiting for approval under the ID ID1; nothing was changed."),
    "approved": (
        waiting(state="approved", decided_by="UX"),
        "Change ID1 was already approved by @UX; it runs once, nothing more was changed.",
    ),
    "approved-by-nobody-known": (
        waiting(state="done"),
        "Change ID1 was already approved by someone; it runs once, nothing more was changed.",
    ),
    "cancelled": (
        waiting(state="cancelled", decided_by="UX"),
        "Change ID1 was cancelled by @UX; nothing was changed.",
    ),
    "expired": (
        waiting(state="expired"),
        "Change ID1 expired at 10:15 UTC (nobody approved it within 15 minutes); nothing was "
        "changed. Run the command again.",
    ),
}


@pytest.mark.parametrize(("record", "said"), list(SAID.values()), ids=list(SAID))
def test_each_step_on_a_request_that_ended_says_so_in_full(
    record: Approval | None, said: str
) -> None:
    for step in (
        lambda: approvals.approve(record, "ID1", "UOK", T0),
        lambda: approvals.cancel(record, "ID1", "UOK", T0),
        lambda: approvals.refuse(record, "ID1", "UOK", T0, "is gone"),
    ):
        with pytest.raises(errors.UserError) as refused:
            step()
        assert str(refused.value) == said


def test_the_requester_approving_their_own_change_is_told_in_full() -> None:
    with pytest.raises(errors.UserError) as refused:
        approvals.check_not_requester(waiting(), "UASK")

    assert str(refused.value) == (
        "You asked for change ID1, so you cannot approve it: another approver must. Nothing "
        "was changed."
    )


def test_cancel_expire_and_finish_keep_every_field_of_the_record() -> None:
    at = T0 + timedelta(minutes=3)

    assert approvals.cancel(waiting(), "ID1", "UOK", at) == waiting(
        state="cancelled", decided_by="UOK", decided_at=at
    )
    assert approvals.expire(waiting(), "ID1", T0 + timedelta(hours=1)) == waiting(
        state="expired", decided_at=T0 + timedelta(minutes=15)
    )
    assert approvals.finish(waiting(state="approved"), "Paused.") == waiting(
        state="done", result="Paused."
    )


def test_a_request_is_a_confirmed_change_of_its_requester_to_make() -> None:
    assert waiting().pending() == AskedChange(
        "pause", PARAMS, "UASK", "C1", T0 + timedelta(minutes=15), "ID1"
    )


def test_a_record_is_stored_as_compact_sorted_json_and_read_back_whole() -> None:
    record = waiting(message_ts="1.2", result="done", lines=("For 2h",))

    stored = approvals.to_json(record)

    assert stored.startswith('{"action":"pause","channel_id":"C1","decided_at":null,')
    assert '"message_ts":"1.2"' in stored and ", " not in stored
    assert approvals.from_json(stored) == record
    older = json.loads(stored)
    del older["what"], older["message_ts"]
    assert approvals.from_json(json.dumps(older)) == replace(record, what="pause", message_ts="")


def test_the_approvers_problem_names_the_list_in_full() -> None:
    problem = approvals.approvers_problem(
        access(("@ops",), ("@leads", "UB")), {"@ops": frozenset({"UA"}), "@leads": frozenset()}
    )
    assert problem == (
        "access.approval.approvers: @leads, UB names nobody who is also in access.operators "
        "(expected at least one approver who is an operator: only operators may approve a "
        "change)"
    )
    # Two groups of approvers: the operator is in the first.
    both = {"@ops": frozenset({"UA"}), "@a": frozenset({"UA"}), "@b": frozenset({"UB"})}
    assert approvals.approvers_problem(access(("@ops",), ("@a", "@b")), both) is None


def test_without_access_approval_nothing_waits_and_ids_are_eight_typeable_characters() -> None:
    settings = config.parse_settings(
        {
            "clusters": [{"name": "prod"}],
            "slack": {"alert_channel": "C0ALERTS"},
            "access": {"operators": ["U0LEAD"]},
        }
    )
    assert approvals.needs_approval(settings, "prod") is False
    made = approvals.new_id()
    assert len(made) == 8 and set(made) <= set("23456789ABCDEFGHJKMNPQRSTUVWXYZ")
    assert approvals.normalise_id(" 7kq2mxd4 ") == "7KQ2MXD4"
