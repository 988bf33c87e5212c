"""Changes made as the Slack user (`access.impersonate`), end to end: the emulator in, the
simulator out, which records each request's impersonation headers and refuses as a real
kube-apiserver would (its RBAC for the impersonated people: `sim.impersonation.grant`)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from stack_steps import audit_lines, patches

from bot.keda import expiry, usecase
from bot.slack import blocks as render
from testbed.sim.impersonation import Acting
from testbed.stack import DEMO_CHANNEL, OPERATOR, Reply, Stack, running_stack

API = "keda.sh/v1alpha1"
EMAIL = "oncall@example.com"
EMAIL_SCOPE = "users:read.email"
SHORT_WAIT = usecase.AckWait(timeout=0.3, interval=0.05)  # no KEDA controller answers here
REFUSAL = (
    'scaledjobs.keda.sh "annia-worker" is forbidden: User "oncall@example.com" cannot patch '
    'resource "scaledjobs" in API group "keda.sh" in the namespace "annia"'
)


def access(mode: str) -> dict[str, Any]:
    return {"access": {"operators": ["@platform-oncall"], "impersonate": mode}}


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    async with running_stack(
        tmp_path, keda_wait=SHORT_WAIT, config_overrides=access("email")
    ) as running:
        running.slack.add_user(OPERATOR, "oncall-operator", email=EMAIL)
        running.slack.add_usergroup("S0GPU", "gpu-team", [OPERATOR, "U0SOMEONE"])
        running.slack.add_usergroup("S0OTHER", "finance", ["U0SOMEONE"])
        running.slack.workspace.scopes.add(EMAIL_SCOPE)
        yield running


def annotations(stack: Stack) -> dict[str, str]:
    obj = stack.sim.get(API, "ScaledJob", "annia-worker", "annia")
    assert obj is not None
    return dict(obj["metadata"].get("annotations") or {})


async def confirmed(stack: Stack, text: str) -> Mapping[str, Any]:
    """Type the command, click its Confirm; the message that replaces the confirmation."""
    reply: Reply = await stack.command(text)
    assert reply.message is not None
    stack.sim.clear_requests()
    delivery = await stack.driver.click_button(
        render.CONFIRM_ACTION, user_id=OPERATOR, channel_id=DEMO_CHANNEL, message=reply.message
    )
    post = await stack.slack.wait_for_response(delivery.hook_id, timeout=15)
    return post.body


async def test_a_pause_is_sent_as_the_persons_email_and_groups_and_reads_stay_the_bots(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")

    result = await confirmed(stack, "pause annia/annia-worker for 1h drain")

    assert "The pause is written on ScaledJob annia/annia-worker" in result["text"]
    assert annotations(stack)["autoscaling.keda.sh/paused"] == "true"
    (patch,) = patches(stack)
    assert patch.acting == Acting(
        EMAIL,
        ("slack:gpu-team", "slack:platform-oncall"),
        {"kai-chatops/slack-user": (OPERATOR,)},
    )
    reads = [r for r in stack.sim.requests if r.method == "GET"]
    assert reads and all(r.acting is None for r in reads)
    (line,) = audit_lines(caplog)
    assert (line["user"], line["outcome"]) == (OPERATOR, "ok")
    assert line["details"]["kubernetes_user"] == EMAIL
    assert line["details"]["kubernetes_groups"] == "slack:gpu-team,slack:platform-oncall"
    assert line["details"]["impersonated_by"] == "kai-chatops (its own credentials)"


async def test_a_pause_the_persons_rbac_refuses_quotes_kubernetes_names_them_changes_nothing(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    # RBAC lets the group slack:oncall patch ScaledJobs in annia; this person is not in it.
    stack.sim.impersonation.grant("slack:oncall", "patch", "scaledjobs", "keda.sh", "annia")

    result = await confirmed(stack, "pause annia/annia-worker")

    assert REFUSAL in result["text"]
    assert f"Kubernetes refused to let {EMAIL}" in result["text"]
    assert "nothing was changed" in result["text"]
    assert annotations(stack) == {}
    (patch,) = patches(stack)
    assert patch.status == 403
    (line,) = audit_lines(caplog)
    assert (line["user"], line["outcome"]) == (OPERATOR, "failed")
    assert line["details"]["kubernetes_user"] == EMAIL
    assert line["details"]["impersonated_by"] == "kai-chatops (its own credentials)"
    assert REFUSAL in line["note"]


async def test_a_bot_that_may_not_impersonate_says_so_and_never_writes_as_itself(
    stack: Stack,
) -> None:
    stack.sim.impersonation.allowed = False

    result = await confirmed(stack, "pause annia/annia-worker")

    assert f"kai-chatops may not act as {EMAIL}" in result["text"]
    assert "deploy/components/impersonation" in result["text"]
    assert "cannot impersonate-on:user-info:patch" in result["text"]
    assert annotations(stack) == {}
    assert all(p.acting is not None for p in patches(stack))


@pytest.mark.parametrize(
    ("scope", "email", "said"),
    [
        (False, EMAIL, "it lacks the users:read.email scope"),
        (True, "", "Slack has no email for your account"),
    ],
    ids=["scope missing", "no email"],
)
async def test_email_mode_without_an_email_is_refused_at_the_command_and_nothing_is_sent(
    stack: Stack, scope: bool, email: str, said: str
) -> None:
    if not scope:
        stack.slack.workspace.scopes.discard(EMAIL_SCOPE)
    stack.slack.add_user(OPERATOR, "oncall-operator", email=email)
    stack.sim.clear_requests()

    reply = await stack.command("pause annia/annia-worker")

    assert said in reply.text
    assert "nothing was changed" in reply.text
    assert "Confirm" not in json.dumps(reply.message)
    assert stack.sim.requests == []


async def test_a_scope_removed_after_the_confirm_was_shown_is_refused_at_the_click(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = await stack.command("pause annia/annia-worker")
    assert reply.message is not None
    stack.slack.workspace.scopes.discard(EMAIL_SCOPE)
    # Slack is asked again at the click (the gateway's minute of cache has run out).
    monkeypatch.setattr(stack.service.deps.slack, "_users", {})
    stack.sim.clear_requests()

    delivery = await stack.driver.click_button(
        render.CONFIRM_ACTION, user_id=OPERATOR, channel_id=DEMO_CHANNEL, message=reply.message
    )
    result = (await stack.slack.wait_for_response(delivery.hook_id, timeout=15)).body

    assert "it lacks the users:read.email scope" in result["text"]
    assert patches(stack) == []
    assert annotations(stack) == {}


async def test_id_mode_sends_a_flux_reconcile_as_slack_user_id(tmp_path: Path) -> None:
    async with running_stack(
        tmp_path, keda_wait=SHORT_WAIT, config_overrides=access("id")
    ) as stack:
        stack.sim.clear_requests()

        reply = await stack.command("reconcile hr flux-system/kai-scheduler", to_the_end=True)

        assert "Flux reconcile of HelmRelease flux-system/kai-scheduler" in reply.text
        person = Acting(
            f"slack:{OPERATOR}", ("slack:platform-oncall",), {"kai-chatops/slack-user": (OPERATOR,)}
        )
        written = patches(stack)
        assert written
        assert [p.acting for p in written] == [person] * len(written)


async def test_a_timed_pause_ends_as_the_bot_itself(stack: Stack) -> None:
    """The person asked for the end with the pause; the bot's own timer carries it out with
    the bot's own rights (docs/security.md), as it does when nobody is around."""
    await confirmed(stack, "pause annia/annia-worker for 1h drain")
    deps = stack.service.deps
    stack.sim.clear_requests()

    later = deps.clock() + timedelta(hours=2)
    done = await expiry.resume_expired_pauses(
        deps.kube_for(None), deps.slack, deps.settings, later, wait=usecase.AckWait(0.2, 0.05)
    )

    assert [o.plan.target.name for o in done] == ["annia-worker"]
    assert annotations(stack) == {}
    (patch,) = patches(stack)
    assert patch.acting is None


@pytest.mark.parametrize(
    ("command", "confirm"),
    [
        ("suspend hr flux-system/kai-scheduler", True),
        ("reconcile hr flux-system/kai-scheduler", False),
    ],
    ids=["flux suspend (confirmed)", "flux reconcile"],
)
async def test_a_refused_flux_change_is_one_failed_line_naming_both_identities(
    stack: Stack, caplog: pytest.LogCaptureFixture, command: str, confirm: bool
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    stack.sim.impersonation.grant("slack:oncall", "patch", "scaledjobs", "keda.sh", "annia")

    if confirm:
        said = str((await confirmed(stack, command))["text"])
    else:
        stack.sim.clear_requests()
        said = (await stack.command(command, to_the_end=True)).text

    refusal = f'User "{EMAIL}" cannot patch resource "helmreleases"'
    assert refusal in said
    assert [p.status for p in patches(stack)] == [403]
    (line,) = audit_lines(caplog)
    assert (line["user"].removeprefix("slack:"), line["outcome"]) == (OPERATOR, "failed")
    assert refusal in line["note"]
    assert line["details"]["kubernetes_user"] == EMAIL
    assert line["details"]["impersonated_by"] == "kai-chatops (its own credentials)"


UNSENDABLE_GROUPS = {
    "not Latin-1": ("チーム", "your Slack user group 'チーム'"),
    "Latin-1 beyond ASCII": ("équipe", "your Slack user group 'équipe'"),
    "CR LF": ("on\r\nImpersonate-Group: system:masters", "your Slack user group 'on\\r\\n"),
    "a control character": ("on\x00call", "your Slack user group 'on\\x00call'"),
    "a space at its end": ("oncall ", "your Slack user group 'oncall '"),
}


@pytest.mark.parametrize(
    ("handle", "named"), list(UNSENDABLE_GROUPS.values()), ids=list(UNSENDABLE_GROUPS)
)
async def test_a_group_handle_no_header_can_carry_refuses_that_change_names_it_and_sends_nothing(
    stack: Stack, caplog: pytest.LogCaptureFixture, handle: str, named: str
) -> None:
    # Issue 36, finding 3: http.client's UnicodeEncodeError was "Something went wrong", and
    # anyone who may edit user groups could stop every change of their members.
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    stack.slack.add_usergroup("S0ODD", handle, [OPERATOR])
    stack.sim.clear_requests()

    reply = await stack.command("pause annia/annia-worker")

    assert named in reply.text, reply.text
    assert "cannot be sent as a Kubernetes group" in reply.text
    assert "nothing was changed" in reply.text and "Something went wrong" not in reply.text
    assert patches(stack) == [] and annotations(stack) == {}
    (line,) = audit_lines(caplog)
    assert (line["user"], line["outcome"], line["action"]) == (OPERATOR, "failed", "pause")
    assert named in line["note"]
    stack.slack.add_usergroup("S0ODD", "oncall-odd", [OPERATOR])  # renamed by an admin
    await stack.restart_service()  # the gateway's minute of cache, gone
    assert "Confirm" in json.dumps((await stack.command("pause annia/annia-worker")).message)


@pytest.mark.parametrize(
    ("email", "named"),
    [
        ("jörg@example.com", "'jörg@example.com'"),
        ("oncall@example.com\r\nImpersonate-User: admin", "'oncall@example.com\\r\\n"),
    ],
    ids=["beyond ASCII", "CR LF"],
)
async def test_an_email_no_header_can_carry_is_refused_named_and_nothing_is_sent(
    stack: Stack, caplog: pytest.LogCaptureFixture, email: str, named: str
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    stack.slack.add_user(OPERATOR, "oncall-operator", email=email)
    stack.sim.clear_requests()

    reply = await stack.command("pause annia/annia-worker")

    assert f"your Kubernetes user {named}" in reply.text, reply.text
    assert "nothing was changed" in reply.text
    assert patches(stack) == [] and annotations(stack) == {}
    (line,) = audit_lines(caplog)
    assert (line["outcome"], named in line["note"]) == ("failed", True)
