"""A second pair of eyes on protected clusters (`access.approval`), end to end: two people in the
Slack emulator, the change on the simulated cluster.

OPERATOR asks (and is an approver too, so approving their own change is refused for that reason
alone); LEAD and DEPUTY are operators and approvers; OPS is an operator but no approver; VIEWER
is neither. Cluster `sim` needs approval, `other` (the same simulated cluster) does not. The
service's clock is the test's, moved by hand: no test waits out the 15 minutes.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from approval_records import approval_config
from clocks import Clock
from stack_steps import audit_lines, patches

from bot.access.approval_store import ApprovalsUnavailable
from bot.keda import usecase
from bot.service import schedule
from testbed.slackemu import PostedMessage
from testbed.stack import ALERT_CHANNEL, DEMO_CHANNEL, OPERATOR, VIEWER, Reply, Stack, running_stack

API = "keda.sh/v1alpha1"
HR_API = "helm.toolkit.fluxcd.io/v2"
PAUSED = "autoscaling.keda.sh/paused"
# No KEDA controller runs here: do not wait long for one to acknowledge a pause.
SHORT_WAIT = usecase.AckWait(timeout=0.3, interval=0.05)
LEAD, DEPUTY, OPS = "U0LEAD", "U0DEPUTY", "U0OPS"


@pytest.fixture
async def stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    overrides = approval_config(str(tmp_path / "kubeconfig"), ["@platform-leads", OPERATOR])
    async with running_stack(
        tmp_path, keda_wait=SHORT_WAIT, clock=clock, config_overrides=overrides
    ) as running:
        for user, name in ((LEAD, "lead"), (DEPUTY, "deputy"), (OPS, "ops")):
            running.slack.add_user(user, name)
        running.slack.add_usergroup("S0ONCALL", "platform-oncall", [OPERATOR, LEAD, DEPUTY, OPS])
        running.slack.add_usergroup("S0LEADS", "platform-leads", [LEAD, DEPUTY, VIEWER])
        yield running


def annotations(stack: Stack, name: str = "annia-worker") -> dict[str, str]:
    obj = stack.sim.get(API, "ScaledJob", name, "annia")
    assert obj is not None
    return dict(obj["metadata"].get("annotations") or {})


def hr_annotations(stack: Stack) -> dict[str, str]:
    obj = stack.sim.get(HR_API, "HelmRelease", "kai-scheduler", "flux-system")
    assert obj is not None
    return dict(obj["metadata"].get("annotations") or {})


def requests_posted(stack: Stack, channel: str = DEMO_CHANNEL) -> list[PostedMessage]:
    return [m for m in stack.slack.messages(channel) if "Approval needed" in json.dumps(m.blocks)]


async def ask(stack: Stack, text: str = "pause annia/annia-worker for 2h node drain") -> str:
    """OPERATOR types the change and confirms it; the CHANGE_ID of the request posted."""
    reply = await stack.command(text)
    assert reply.message is not None
    waiting = await stack.click("Confirm", reply.message)
    assert "waits for a second operator's approval" in waiting.text, waiting.text
    return change_id_of(waiting)


def buttons(message: PostedMessage) -> list[str]:
    """The labels of the message's buttons."""
    return [
        str(element["text"]["text"])
        for block in message.blocks
        for element in block.get("elements", [])
        if element.get("type") == "button"
    ]


def change_id_of(reply: Reply) -> str:
    return reply.text.split()[1]


def request_for(stack: Stack, change_id: str, channel: str = DEMO_CHANNEL) -> PostedMessage:
    (request,) = [m for m in requests_posted(stack, channel) if change_id in m.text]
    return request


async def click(
    stack: Stack, label: str, change_id: str, user: str, channel: str = DEMO_CHANNEL
) -> Reply:
    request = request_for(stack, change_id, channel)
    return await stack.click(
        label, request.as_payload(), user_id=user, channel_id=channel, message_ts=request.ts
    )


async def test_a_change_waits_for_an_approver_then_runs_as_the_requester_and_names_both(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    change_id = await ask(stack)

    request = request_for(stack, change_id)
    assert annotations(stack) == {}
    assert f"<@{OPERATOR}> asked to *pause ScaledJob annia/annia-worker on sim*" in str(
        request.blocks
    )
    assert "Reason: node drain" in str(request.blocks) and "by 08:15 UTC" in str(request.blocks)
    assert buttons(request) == ["Approve", "Cancel"]

    result = await click(stack, "Approve", change_id, LEAD)

    assert "Paused" in result.text or "paused" in result.text, result.text
    found = annotations(stack)
    assert found[PAUSED] == "true"
    assert found["kai-chatops/paused-by"] == OPERATOR  # the change ran as the requester
    assert found["kai-chatops/approved-by"] == LEAD
    assert found["kai-chatops/approved-at"] == "2026-08-24T08:00:00Z"
    assert found["kai-chatops/approval"] == change_id
    ended = request_for(stack, change_id)
    shown = str(ended.blocks)
    assert f"<@{OPERATOR}> asked to" in shown and f"Approved by <@{LEAD}> at 08:00 UTC" in shown
    assert "Result:" in shown and buttons(ended) == []
    (line,) = [json.loads(r.getMessage()) for r in caplog.records if '"pause"' in r.getMessage()]
    assert line["user"] == OPERATOR and line["details"]["approved_by"] == LEAD
    assert line["details"]["approval"] == change_id and line["outcome"] == "ok"


async def test_the_timeline_names_who_asked_why_and_who_approved(stack: Stack) -> None:
    change_id = await ask(stack)
    await click(stack, "Approve", change_id, LEAD)

    reply = await stack.command("timeline")
    assert reply.message is not None, reply.text
    shown = str(reply.message["blocks"])
    assert "*ScaledJob annia/annia-worker* pause (ok)" in shown
    assert f"by <@{OPERATOR}>, approved by <@{LEAD}>, why: node drain _(kai-chatops)_" in shown


async def test_a_reconcile_force_is_approved_by_command_and_requested_once(stack: Stack) -> None:
    reply = await stack.command("reconcile hr flux-system/kai-scheduler --force")
    assert "waits for a second operator's approval" in reply.text, reply.text
    change_id = change_id_of(reply)
    assert "reconcile.fluxcd.io/forceAt" not in hr_annotations(stack)

    done = await stack.command(f"approve {change_id.lower()}", user_id=LEAD)

    assert "reconcile" in done.text.lower() and "approval" not in done.text.lower(), done.text
    kept = hr_annotations(stack)
    assert kept["reconcile.fluxcd.io/forceAt"] == kept["reconcile.fluxcd.io/requestedAt"]
    assert kept["kai-chatops/requested-by"] == f"slack:{OPERATOR}"
    assert kept["kai-chatops/approved-by"] == LEAD
    again = await stack.command(f"approve {change_id}", user_id=DEPUTY)
    assert f"already approved by <@{LEAD}>" in str(again.message), again.text


@pytest.mark.parametrize(
    ("user", "refusal"),
    [
        (OPERATOR, "You asked for change {id}, so you cannot approve it"),
        (OPS, "You are not allowed to approve change {id}: only approvers may"),
        (VIEWER, "You are not allowed to approve change {id}: only operators may"),
    ],
    ids=["the-requester", "an-operator-who-is-no-approver", "an-approver-who-is-no-operator"],
)
async def test_a_refused_approver_is_told_why_and_nothing_changes(
    stack: Stack, user: str, refusal: str
) -> None:
    change_id = await ask(stack)
    stack.sim.clear_requests()

    refused = await click(stack, "Approve", change_id, user)
    by_command = await stack.command(f"approve {change_id}", user_id=user)

    for reply in (refused, by_command):
        assert refusal.format(id=change_id) in reply.text, reply.text
    assert annotations(stack) == {}
    assert [r for r in stack.sim.requests if r.method == "PATCH"] == []
    assert buttons(request_for(stack, change_id)) == ["Approve", "Cancel"]  # still waiting


async def test_a_request_expires_after_15_minutes_and_says_so(stack: Stack, clock: Clock) -> None:
    change_id = await ask(stack)
    clock.now += timedelta(minutes=14, seconds=59)
    await schedule.expire_approvals(stack.service.deps)
    assert buttons(request_for(stack, change_id)) == ["Approve", "Cancel"]
    clock.now += timedelta(seconds=1)

    await schedule.expire_approvals(stack.service.deps)  # the scheduler's job, run by hand
    shown = request_for(stack, change_id)
    late = await stack.command(f"approve {change_id}", user_id=LEAD)

    assert "Expired at 08:15 UTC" in str(shown.blocks) and buttons(shown) == []
    assert "nothing was changed" in str(shown.blocks)
    assert f"Change {change_id} expired at 08:15 UTC" in late.text, late.text
    assert annotations(stack) == {}


async def test_cancel_by_the_requester_ends_the_request_and_nothing_changes(stack: Stack) -> None:
    change_id = await ask(stack)

    cancelled = await click(stack, "Cancel", change_id, OPERATOR)
    late = await stack.command(f"approve {change_id}", user_id=LEAD)

    assert f"Change {change_id} is cancelled; nothing was changed." in cancelled.text
    assert f"Cancelled by <@{OPERATOR}>" in str(request_for(stack, change_id).blocks)
    assert f"was cancelled by <@{OPERATOR}>" in str(late.message), late.text
    assert annotations(stack) == {}


async def test_cancel_by_someone_neither_requester_nor_approver_is_refused(stack: Stack) -> None:
    change_id = await ask(stack)

    refused = await click(stack, "Cancel", change_id, OPS)

    assert "only approvers may" in refused.text, refused.text
    assert buttons(request_for(stack, change_id)) == ["Approve", "Cancel"]


async def test_a_request_survives_a_restart_and_is_approved_after_it(stack: Stack) -> None:
    change_id = await ask(stack)

    await stack.restart_service()
    done = await stack.command(f"approve {change_id}", user_id=LEAD)

    assert annotations(stack)[PAUSED] == "true", done.text
    assert annotations(stack)["kai-chatops/approved-by"] == LEAD


async def test_two_approvers_at_once_run_the_change_once(stack: Stack) -> None:
    change_id = await ask(stack)
    stack.sim.clear_requests()

    both = await asyncio.gather(
        click(stack, "Approve", change_id, LEAD), click(stack, "Approve", change_id, DEPUTY)
    )

    pauses = [
        r
        for r in stack.sim.requests
        if r.method == "PATCH" and "scaledjobs" in r.path and PAUSED in str(r.body)
    ]
    assert len(pauses) == 1
    said = [reply.text for reply in both]
    assert sum("already approved by" in text for text in said) == 1, said


async def test_a_cluster_without_approval_runs_on_confirm_as_before(stack: Stack) -> None:
    reply = await stack.command("pause annia/annia-worker --cluster other")
    assert reply.message is not None

    result = await stack.click("Confirm", reply.message)

    assert annotations(stack)[PAUSED] == "true", result.text
    assert "kai-chatops/approved-by" not in annotations(stack)
    assert requests_posted(stack) == []


class Unreachable:
    """An approvals memory that cannot be reached (a ConfigMap's API server gone, say)."""

    async def get(self, change_id: str) -> None:
        raise ApprovalsUnavailable("approvals ConfigMap: the API server answered 503")

    async def records(self) -> list[Any]:
        return []

    async def change(self, *_: object) -> None:
        raise ApprovalsUnavailable("approvals ConfigMap: the API server answered 503")

    def close(self) -> None:
        """Nothing to release."""


async def test_when_the_approvals_memory_is_unreachable_nothing_can_run_and_it_is_said(
    stack: Stack,
) -> None:
    object.__setattr__(stack.service.deps, "approvals", Unreachable())
    reply = await stack.command("pause annia/annia-worker")
    assert reply.message is not None

    refused = await stack.click("Confirm", reply.message)
    approving = await stack.command("approve 7KQ2MXD4", user_id=LEAD)

    assert "Cannot reach the memory of approvals just now" in refused.text, refused.text
    assert "Cannot reach the memory of approvals just now" in approving.text, approving.text
    (posted,) = requests_posted(stack)
    assert "could not be kept" in str(posted.blocks) and buttons(posted) == []
    assert annotations(stack) == {}


async def test_a_change_asked_in_a_direct_message_is_put_to_approvers_in_the_alert_channel(
    stack: Stack,
) -> None:
    reply = await stack.command("suspend hr flux-system/keda maintenance", channel_id="D0OPERATOR")
    assert reply.message is not None
    waiting = await stack.click("Confirm", reply.message, channel_id="D0OPERATOR")
    assert "asked in the alert channel" in waiting.text, waiting.text
    change_id = change_id_of(waiting)
    assert requests_posted(stack, "D0OPERATOR") == []

    await click(stack, "Approve", change_id, LEAD, channel=ALERT_CHANNEL)

    hr = stack.sim.get(HR_API, "HelmRelease", "keda", "flux-system")
    assert hr is not None and hr["spec"]["suspend"] is True
    kept = hr["metadata"]["annotations"]
    assert kept["kai-chatops/suspended-by"] == OPERATOR and kept["kai-chatops/approved-by"] == LEAD
    assert f"Approved by <@{LEAD}>" in str(request_for(stack, change_id, ALERT_CHANNEL).blocks)


async def test_a_request_the_bot_cannot_post_where_asked_goes_to_the_alert_channel(
    stack: Stack,
) -> None:
    reply = await stack.command("pause annia/annia-worker")
    assert reply.message is not None
    stack.slack.fail_next("chat.postMessage", status=200, error="not_in_channel")

    waiting = await stack.click("Confirm", reply.message)

    assert "asked in the alert channel" in waiting.text, waiting.text
    assert [m.ts for m in requests_posted(stack)] == []
    assert request_for(stack, change_id_of(waiting), ALERT_CHANNEL) is not None


async def test_the_home_tab_lists_what_waits_for_approval_until_it_is_approved(
    stack: Stack,
) -> None:
    change_id = await ask(stack)

    await stack.driver.open_home(user_id=LEAD)
    waiting = json.dumps(await stack.slack.wait_for_home(LEAD))
    await stack.command(f"approve {change_id}", user_id=LEAD)
    await stack.driver.open_home(user_id=LEAD)
    after = json.dumps(await stack.slack.wait_for_home(LEAD, count=2))

    assert "Waiting for approval (1)" in waiting
    assert f"`{change_id}` \\u00b7 <@{OPERATOR}> asked to pause ScaledJob annia/annia-worker" in (
        waiting
    )
    assert f"/kai approve {change_id}` by 2026-08-24 08:15 UTC" in waiting
    assert "Waiting for approval" not in after and change_id not in after


def removed_from_the_operators(stack: Stack) -> None:
    stack.slack.add_usergroup("S0ONCALL", "platform-oncall", [LEAD, DEPUTY, OPS])


def deactivated(stack: Stack) -> None:
    stack.slack.add_user(OPERATOR, "oncall-operator", deleted=True)


def made_a_guest(stack: Stack) -> None:
    stack.slack.add_user(OPERATOR, "oncall-operator", is_restricted=True)


@pytest.mark.parametrize(
    ("lose", "said"),
    [
        (removed_from_the_operators, "is no longer an operator"),
        (deactivated, "is now a guest or a deactivated account"),
        (made_a_guest, "is now a guest or a deactivated account"),
    ],
    ids=["removed-from-the-operators", "deactivated", "made-a-guest"],
)
async def test_a_requester_who_lost_the_right_to_change_ends_the_request_when_it_is_approved(
    stack: Stack, clock: Clock, caplog: pytest.LogCaptureFixture, lose: Any, said: str
) -> None:
    # Issue 36, finding 2: the PATCH went out as the requester, removed and deactivated since.
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    change_id = await ask(stack)
    lose(stack)
    clock.now += timedelta(minutes=10)
    stack.sim.clear_requests()

    refused = await click(stack, "Approve", change_id, LEAD)
    again = await stack.command(f"approve {change_id}", user_id=DEPUTY)

    assert f"Change {change_id} ended: <@{OPERATOR}> {said}" in str(refused.message), refused.text
    assert "nothing was changed" in refused.text
    assert f"ended at 08:10 UTC: <@{OPERATOR}> {said}" in str(again.message), again.text
    assert annotations(stack) == {} and patches(stack) == []
    shown = request_for(stack, change_id)
    assert f"Ended at 08:10 UTC, when <@{LEAD}> approved it: <@{OPERATOR}> {said}" in str(
        shown.blocks
    )
    assert buttons(shown) == []
    (line,) = [line for line in audit_lines(caplog) if line["action"] == "pause"]
    assert (line["user"], line["outcome"]) == (OPERATOR, "failed")
    assert said in line["note"] and line["details"]["approval"] == change_id
    assert line["details"]["checked_by"] == LEAD


async def test_a_requester_who_cannot_be_checked_at_approval_leaves_the_request_waiting(
    stack: Stack,
) -> None:
    first = await ask(stack)
    await click(stack, "Approve", first, LEAD)  # the approver's own checks, cached from here
    change_id = await ask(stack, "resume annia/annia-worker")
    stack.slack.fail_next("usergroups.users.list", status=200, error="fatal_error")

    refused = await click(stack, "Approve", change_id, LEAD)

    assert f"Cannot tell now whether <@{OPERATOR}> may still make changes" in str(
        refused.message
    ), refused.text
    assert f"change {change_id} still waits" in refused.text
    assert annotations(stack)[PAUSED] == "true"
    assert buttons(request_for(stack, change_id)) == ["Approve", "Cancel"]  # still waiting
    done = await click(stack, "Approve", change_id, LEAD)
    assert PAUSED not in annotations(stack), done.text
