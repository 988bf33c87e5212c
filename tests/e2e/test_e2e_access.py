"""Who may do what, end to end: operators by user group, guests, viewer lists; and the record.

Authorisation reads Slack (usergroups.list, usergroups.users.list, users.info) through the
emulator, as it would read the real workspace.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from testbed.stack import ALERT_CHANNEL, OPERATOR, VIEWER, running_stack

GROUPIE = "U0GROUPIE"
GUEST = "U0GUEST"
STRANGER = "U0STRANGER"
SCALED_JOB = ("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia")


def is_paused(obj: dict[str, object] | None) -> bool:
    annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}  # type: ignore[union-attr]
    return annotations.get("autoscaling.keda.sh/paused") == "true"  # type: ignore[no-any-return,union-attr]


async def test_a_member_of_an_operator_user_group_may_pause(tmp_path: Path) -> None:
    async with running_stack(tmp_path, keda_controller=True) as stack:
        stack.slack.add_user(GROUPIE, "group-member")
        stack.slack.add_usergroup("S0ONCALL", "platform-oncall", [OPERATOR, GROUPIE])
        ask = await stack.command("pause annia/annia-worker drain", user_id=GROUPIE)
        assert ask.message is not None and "Confirm" in str(ask.message["blocks"])
        await stack.click("Confirm", ask.message, user_id=GROUPIE)
        assert is_paused(stack.sim.get(*SCALED_JOB))


async def test_a_guest_listed_as_operator_still_changes_nothing(tmp_path: Path) -> None:
    access = {"access": {"operators": [OPERATOR, GUEST], "viewers": "everyone"}}
    async with running_stack(tmp_path, config_overrides=access) as stack:
        stack.slack.add_user(GUEST, "contractor", is_restricted=True)
        stack.sim.clear_requests()
        reply = await stack.command("pause annia/annia-worker drain", user_id=GUEST)
        assert "guest" in reply.text
        assert stack.sim.requests == []
        assert not is_paused(stack.sim.get(*SCALED_JOB))


async def test_with_a_viewers_list_only_viewers_and_operators_may_look(tmp_path: Path) -> None:
    access = {"access": {"operators": [OPERATOR], "viewers": [VIEWER]}}
    async with running_stack(tmp_path, config_overrides=access) as stack:
        stack.slack.add_user(STRANGER, "someone-else")
        refused = await stack.command("health", user_id=STRANGER)
        allowed = await stack.command("health", user_id=VIEWER)
        operator = await stack.command("health", user_id=OPERATOR)
    assert "not allowed" in refused.text
    assert allowed.text.startswith("KAI health on sim")
    assert operator.text.startswith("KAI health on sim")


async def test_every_command_and_change_leaves_a_log_line_with_its_context(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with running_stack(tmp_path, keda_controller=True) as stack:
        await stack.command("health")
        ask = await stack.command("pause annia/annia-worker for 1h drain")
        assert ask.message is not None
        await stack.click("Confirm", ask.message)
    commands = [r for r in caplog.records if getattr(r, "command", None) == "health"]
    assert commands and commands[0].__dict__["outcome"] == "ok"
    assert commands[0].__dict__["user"] == OPERATOR
    [change] = [r for r in caplog.records if r.name == "kai_chatops.audit"]
    assert change.__dict__["command"] == "pause"
    assert "annia/annia-worker" in change.__dict__["object"]
    assert OPERATOR in change.__dict__["user"]


async def test_a_change_is_announced_in_the_alert_channel_when_the_bot_is_not_in_the_users(
    tmp_path: Path,
) -> None:
    async with running_stack(tmp_path, keda_controller=True) as stack:
        ask = await stack.command("pause annia/annia-worker drain")
        assert ask.message is not None
        stack.slack.fail_next("chat.postMessage", status=200, error="not_in_channel")
        await stack.click("Confirm", ask.message)
        [announced] = await stack.slack.wait_for_messages(ALERT_CHANNEL)
    assert "annia/annia-worker" in announced.text
    assert is_paused(stack.sim.get(*SCALED_JOB))
