"""Paging and escalation end to end: the root of a critical alert mentions `alerts.mention`
(handles resolved through Slack's usergroups.list), a warning mentions nobody, and an alert
still firing and unanswered `alerts.escalate_after` after it fired gets one reply mentioning
`alerts.escalate_to`, across restarts, and none when it was acknowledged in time.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from alert_stack import (
    HOLD,
    alert_stack,
    assert_one_clean_incident,
    check,
    fire,
    resolve,
    roots,
    thread,
)
from clocks import Clock

from testbed.sim import breakage
from testbed.slackemu import PostedMessage
from testbed.stack import ALERT_CHANNEL, Stack

ONCALL_GROUP = "<!subteam^S0ONCALL>"
LEADS_GROUP = "<!subteam^S0LEADS>"
ESCALATE_AFTER = 15 * 60


@asynccontextmanager
async def paging_stack(tmp_path: Path, clock: Clock, **alerts: Any) -> AsyncIterator[Stack]:
    timers = {"hold": f"{HOLD}s", "interval": "1h", "repeat": "4h"}
    async with alert_stack(tmp_path, clock, alerts={**timers, **alerts}) as (stack, _):
        yield stack  # its Slack knows @platform-oncall (S0ONCALL) and @platform-leads (S0LEADS)


def everything(message: PostedMessage) -> str:
    """The fallback text and every text of the blocks, as Slack would read them for mentions."""
    return f"{message.text}\n{message.blocks}"


def escalations(stack: Stack, root: PostedMessage) -> list[str]:
    return [m.text for m in thread(stack, root) if m.text.startswith(":sos: Escalating")]


async def test_a_critical_root_mentions_the_configured_group_and_user_and_nothing_else_does(
    tmp_path: Path,
) -> None:
    clock = Clock()
    mention = ["@platform-oncall", "U0LEAD"]
    async with paging_stack(tmp_path, clock, mention=mention) as stack:
        await fire(stack, clock)
        [root] = roots(stack)

        assert root.text.endswith(f"· {ONCALL_GROUP} <@U0LEAD>")  # the notification's words
        first_section = root.blocks[0]["text"]["text"]
        assert f"*Paging:* {ONCALL_GROUP} <@U0LEAD>" in first_section
        assert stack.slack.calls_to("usergroups.list")  # the handle, resolved through Slack
        for evidence in thread(stack, root):  # the diagnosis, what changed before: no mention
            assert "<!" not in everything(evidence) and "<@" not in everything(evidence)

        await resolve(stack, clock)
        resolved = stack.slack.message(ALERT_CHANNEL, root.ts)
        assert "<!subteam" not in everything(resolved)  # the edit to resolved pages nobody
        for reply in thread(stack, root):
            assert "<!subteam" not in everything(reply) and "<@U0LEAD>" not in everything(reply)
        assert len(stack.slack.calls_to("usergroups.list")) == 1  # the handle's ID is cached
        assert_one_clean_incident(stack)


async def test_a_warning_mentions_nobody(tmp_path: Path) -> None:
    clock = Clock()
    async with paging_stack(tmp_path, clock, mention=["@platform-oncall"]) as stack:
        breakage.operator_down(stack.sim)
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)

        [root] = roots(stack)
        assert root.text.startswith("[WARNING] sim: Deployment kai-scheduler/kai-operator")
        assert "<!subteam" not in everything(root) and "Paging" not in everything(root)


async def test_a_handle_slack_does_not_know_is_shown_as_text_and_logged_and_the_page_goes_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    mention = ["@nobody-here", "@platform-oncall"]
    async with paging_stack(tmp_path, clock, mention=mention) as stack:
        with caplog.at_level(logging.WARNING, logger="bot.slack.gateway"):
            await fire(stack, clock)

        [root] = roots(stack)
        assert f"*Paging:* @nobody-here {ONCALL_GROUP}" in root.blocks[0]["text"]["text"]
        assert "no user group with the handle @nobody-here" in caplog.text


async def test_an_unanswered_alert_escalates_once_after_escalate_after_saying_how_long(
    tmp_path: Path,
) -> None:
    clock = Clock()
    escalation = {"escalate_after": "15m", "escalate_to": ["@platform-leads"]}
    async with paging_stack(tmp_path, clock, **escalation) as stack:
        await fire(stack, clock)
        [root] = roots(stack)
        clock.advance(ESCALATE_AFTER - 1)
        await check(stack.service)
        assert escalations(stack, root) == []

        clock.advance(1)
        await check(stack.service)
        [said] = escalations(stack, root)
        assert said.startswith(f":sos: Escalating to {LEADS_GROUP}: ")
        assert "has been firing for 15m" in said
        assert "neither acknowledged nor silenced" in said

        for _ in range(3):
            clock.advance(ESCALATE_AFTER)
            await check(stack.service)
        assert len(escalations(stack, root)) == 1
        await resolve(stack, clock)
        assert_one_clean_incident(stack)


async def test_an_alert_acknowledged_in_time_never_escalates(tmp_path: Path) -> None:
    clock = Clock()
    escalation = {"escalate_after": "15m", "escalate_to": ["@platform-leads"]}
    async with paging_stack(tmp_path, clock, **escalation) as stack:
        await fire(stack, clock)
        [root] = roots(stack)
        clock.advance(ESCALATE_AFTER - 60)
        alert_id = root.blocks[-1]["elements"][0]["value"].split(":")[1]
        await stack.command(f"ack {alert_id}")
        for _ in range(4):
            clock.advance(ESCALATE_AFTER)
            await check(stack.service)

        assert escalations(stack, root) == []
        assert LEADS_GROUP not in str([everything(m) for m in stack.slack.messages(ALERT_CHANNEL)])


async def test_escalation_is_decided_by_the_stored_state_across_restarts(tmp_path: Path) -> None:
    clock = Clock()
    escalation = {"escalate_after": "15m", "escalate_to": ["@platform-leads"]}
    async with paging_stack(tmp_path, clock, **escalation) as stack:
        await fire(stack, clock)
        [root] = roots(stack)
        clock.advance(10 * 60)
        await check(stack.service)
        await stack.restart_service()  # fresh memory: only the stored state knows the timing
        clock.advance(5 * 60)
        await check(stack.service)
        assert len(escalations(stack, root)) == 1

        await stack.restart_service()
        clock.advance(ESCALATE_AFTER)
        await check(stack.service)
        assert len(escalations(stack, root)) == 1
        await resolve(stack, clock)
        assert_one_clean_incident(stack)
