"""Who may do what: operators and viewers by ID or user group, what a refusal says, silences."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.access import policy
from bot.config.settings import AccessSettings
from bot.core import errors
from bot.slack import blocks

MEMBERS = {"S0ONCALL": frozenset({"U0MEMBER"}), "@leads": frozenset({"U0LEAD"})}


def shown(error: pytest.ExceptionInfo[errors.NotAllowed]) -> str:
    """The refusal as Slack shows it (the bot's own mentions opened)."""
    return str(blocks.error_message(error.value)["text"])


@pytest.mark.parametrize(
    ("entry", "is_group"),
    [("S0ONCALL", True), ("@oncall", True), ("U0ONE", False), ("W0TWO", False)],
)
def test_group_ids_and_handles_are_group_entries_user_ids_are_not(
    entry: str, is_group: bool
) -> None:
    assert policy.is_group_entry(entry) is is_group
    assert policy.group_entries([entry]) == ([entry] if is_group else [])


@pytest.mark.parametrize(
    ("user", "expected"),
    [("U0DIRECT", True), ("U0MEMBER", True), ("U0LEAD", True), ("U0NOBODY", False)],
)
def test_an_operator_is_listed_directly_or_through_a_listed_group(
    user: str, expected: bool
) -> None:
    access = AccessSettings(operators=("U0DIRECT", "S0ONCALL", "@leads"))
    assert policy.is_operator(user, access, MEMBERS) is expected


def test_a_group_not_listed_grants_nothing() -> None:
    access = AccessSettings(operators=("U0DIRECT",))
    assert not policy.is_operator("U0MEMBER", access, MEMBERS)


def test_with_no_viewers_list_everyone_may_look() -> None:
    assert policy.is_viewer("U0ANYONE", AccessSettings(operators=(), viewers=None), {})
    policy.require_viewer("U0ANYONE", "look", AccessSettings(operators=(), viewers=None), {})


def test_with_a_viewers_list_only_viewers_and_operators_may_look() -> None:
    access = AccessSettings(operators=("U0OP",), viewers=("U0VIEW", "S0ONCALL"))
    assert policy.is_viewer("U0OP", access, MEMBERS)
    assert policy.is_viewer("U0VIEW", access, MEMBERS)
    assert policy.is_viewer("U0MEMBER", access, MEMBERS)
    assert not policy.is_viewer("U0LEAD", access, MEMBERS)
    policy.require_viewer("U0VIEW", "list alerts", access, MEMBERS)
    with pytest.raises(errors.NotAllowed) as refused:
        policy.require_viewer("U0LEAD", "list alerts", access, MEMBERS)
    assert str(refused.value) == ("You are not allowed to list alerts: ask an operator to add you.")


def test_a_refusal_names_the_action_and_who_may_instead() -> None:
    access = AccessSettings(operators=("U0OP", "S0ONCALL", "@leads"))
    policy.require_operator("U0OP", "pause annia/x", access, MEMBERS)
    with pytest.raises(errors.NotAllowed) as refused:
        policy.require_operator("U0NOBODY", "pause annia/x", access, MEMBERS)
    assert shown(refused) == (
        "You are not allowed to pause annia/x: only operators may "
        "(<@U0OP>, <!subteam^S0ONCALL>, @leads)."
    )


def test_with_no_operators_the_refusal_says_nobody_may() -> None:
    with pytest.raises(errors.NotAllowed) as refused:
        policy.require_operator("U0ANY", "sync", AccessSettings(operators=()), {})
    assert shown(refused) == (
        "You are not allowed to sync: only operators may (nobody (access.operators is empty))."
    )


def test_a_silence_up_to_the_longest_allowed_is_accepted_a_longer_one_refused() -> None:
    policy.check_silence(timedelta(days=7), timedelta(days=7))
    with pytest.raises(errors.UserError) as refused:
        policy.check_silence(timedelta(days=7, seconds=1), timedelta(days=7))
    assert str(refused.value) == (
        "Silences last at most 7d here (alerts.max_silence); 7d1s is longer. Nothing was changed."
    )
