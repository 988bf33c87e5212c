"""One audit line per action, with the outcome it really had (docs/design.md §2 "Safety"), end to
end.

Signed Slack requests in, the simulated cluster out, with faults injected around our writes: a
write the cluster refuses is `failed`; a write that got no answer is `unknown` and said in the
channel once; a write that was answered but whose result could not be read back afterwards is
`unknown`, and the reply says the change was made. Never two lines for one action.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from clocks import Clock
from stack_steps import audit_lines, channel_texts

from bot.gitops import suspend_expiry
from bot.gitops import usecase as gitops_usecase
from bot.keda import expiry
from bot.keda import usecase as keda_usecase
from testbed.stack import ALERT_CHANNEL, OPERATOR, Stack, running_stack

HR_API = "helm.toolkit.fluxcd.io/v2"
SHORT_WAIT = keda_usecase.AckWait(timeout=0.3, interval=0.05)
NO_ANSWER = "may or may not have been done. Check the object."


@pytest.fixture
async def stack(
    tmp_path: Path, clock: Clock, caplog: pytest.LogCaptureFixture
) -> AsyncIterator[Stack]:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    async with running_stack(tmp_path, keda_wait=SHORT_WAIT, clock=clock) as running:
        yield running


def outcomes(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(line["action"], line["outcome"]) for line in audit_lines(caplog)]


def unreadable_after_the_next_read(stack: Stack, resource: str) -> None:
    """The next `get` of `resource` is answered; every later get and every watch is forbidden,
    so whatever is written after that read cannot be read back."""
    stack.sim.faults.add(None, verb="get", resource=resource, times=1)  # passes: no status
    stack.sim.faults.add(403, verb="get", resource=resource, times=None)
    stack.sim.faults.add(403, verb="watch", resource=resource, times=None)


def no_answer_after_the_next_patch(stack: Stack, resource: str) -> None:
    """The next patch of `resource` is applied; the one after it gets a 503 (a write whose
    answer never came, as far as the bot can tell)."""
    stack.sim.faults.add(None, verb="patch", resource=resource, times=1)
    stack.sim.faults.add(503, verb="patch", resource=resource, times=1)


async def asked(stack: Stack, text: str) -> Mapping[str, Any]:
    """Type a command that asks Confirm; the confirmation message."""
    ask = await stack.command(text)
    assert ask.message is not None, ask.text
    return ask.message


async def click_confirm(stack: Stack, confirmation: Mapping[str, Any]) -> str:
    """Click Confirm; the text of the message that replaces the confirmation."""
    done = await stack.click("Confirm", confirmation)
    return done.text


async def made_due(stack: Stack, clock: Clock, command: str) -> None:
    """Confirm a change `for 1h`, then move the clock past its end."""
    await click_confirm(stack, await asked(stack, command))
    clock.now += timedelta(hours=2)


def is_suspended(stack: Stack, name: str = "keda") -> bool:
    obj = stack.sim.get(HR_API, "HelmRelease", name, "flux-system")
    assert obj is not None
    return bool(obj["spec"].get("suspend"))


# --- Flux suspend and resume ------------------------------------------------------------------


async def test_a_suspend_the_cluster_refuses_is_one_failed_line_and_nothing_is_announced(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    confirmation = await asked(stack, "suspend hr flux-system/keda chart hotfix")
    stack.sim.faults.add(403, verb="patch", resource="helmreleases", times=None)

    reply = await click_confirm(stack, confirmation)

    assert "forbidden" in reply
    assert not is_suspended(stack)
    [line] = audit_lines(caplog)
    assert (line["action"], line["outcome"], line["reason"]) == (
        "suspend",
        "failed",
        "chart hotfix",
    )
    assert line["target"] == "HelmRelease flux-system/keda on sim"
    assert channel_texts(stack) == []


async def test_a_suspend_whose_write_got_no_answer_is_one_unknown_line_announced_once(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    confirmation = await asked(stack, "suspend hr flux-system/keda")
    stack.sim.faults.add(503, verb="patch", resource="helmreleases", times=1)

    reply = await click_confirm(stack, confirmation)

    assert "may or may not have been applied" in reply
    assert outcomes(caplog) == [("suspend", "unknown")]
    [announced] = channel_texts(stack)
    assert announced == (
        f"<@{OPERATOR}> asked to suspend HelmRelease flux-system/keda on sim; the cluster did "
        f"not answer in time, so it {NO_ANSWER}"
    )


async def test_a_resume_whose_write_got_no_answer_is_recorded_as_a_resume_once(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    await click_confirm(stack, await asked(stack, "suspend hr flux-system/keda"))
    confirmation = await asked(stack, "resume hr flux-system/keda")
    stack.sim.faults.add(503, verb="patch", resource="helmreleases", times=1)

    await click_confirm(stack, confirmation)

    assert outcomes(caplog) == [("suspend", "ok"), ("resume", "unknown")]
    assert channel_texts(stack)[-1].startswith(f"<@{OPERATOR}> asked to resume HelmRelease")


async def test_a_resume_whose_reconcile_cannot_be_read_back_is_resumed_and_unknown(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    await click_confirm(stack, await asked(stack, "suspend hr flux-system/keda"))
    confirmation = await asked(stack, "resume hr flux-system/keda")
    unreadable_after_the_next_read(stack, "helmreleases")

    reply = await click_confirm(stack, confirmation)

    assert not is_suspended(stack)
    assert "Resumed HelmRelease flux-system/keda on sim (spec.suspend: false)." in reply
    assert "its result could not be read back" in reply
    assert "requested, but the object could not be read since" in reply
    assert outcomes(caplog) == [("suspend", "ok"), ("resume", "unknown")]
    assert "its result could not be read back" in channel_texts(stack)[-1]


async def test_a_resume_whose_reconcile_request_got_no_answer_is_resumed_and_unknown(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    await click_confirm(stack, await asked(stack, "suspend hr flux-system/keda"))
    confirmation = await asked(stack, "resume hr flux-system/keda")
    no_answer_after_the_next_patch(stack, "helmreleases")  # spec.suspend, then requestedAt

    reply = await click_confirm(stack, confirmation)

    assert not is_suspended(stack)
    assert "Resumed HelmRelease flux-system/keda on sim" in reply
    assert "the reconcile request got no answer" in reply
    assert outcomes(caplog) == [("suspend", "ok"), ("resume", "unknown")]


async def test_a_timed_resume_whose_write_got_no_answer_is_said_then_done_on_the_next_pass(
    stack: Stack, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    await made_due(stack, clock, "suspend hr flux-system/keda for 1h")
    deps = stack.service.deps
    polling = gitops_usecase.Polling(timeout=10)
    stack.sim.faults.add(503, verb="patch", resource="helmreleases", times=1)

    first = await suspend_expiry.sweep(
        deps.kube_for(None), deps.slack, deps.settings, clock.now, polling=polling
    )
    second = await suspend_expiry.sweep(
        deps.kube_for(None), deps.slack, deps.settings, clock.now, polling=polling
    )

    assert first.outcomes == [] and len(second.outcomes) == 1
    assert not is_suspended(stack)
    assert outcomes(caplog) == [("suspend", "ok"), ("resume", "unknown"), ("resume", "ok")]
    said, resumed = channel_texts(stack, ALERT_CHANNEL)
    assert said == (
        "kai-chatops asked to resume HelmRelease flux-system/keda on sim (its timed suspend was "
        f"over); the cluster did not answer in time, so it {NO_ANSWER}"
    )
    assert "HelmRelease flux-system/keda on sim resumed automatically after 1h" in resumed


async def test_a_timed_resume_the_cluster_refuses_is_one_failed_line_each_pass(
    stack: Stack, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    await made_due(stack, clock, "suspend hr flux-system/keda for 1h")
    deps = stack.service.deps
    stack.sim.faults.add(403, verb="patch", resource="helmreleases", times=None)

    await suspend_expiry.sweep(deps.kube_for(None), deps.slack, deps.settings, clock.now)

    assert is_suspended(stack)
    assert outcomes(caplog) == [("suspend", "ok"), ("resume", "failed")]
    assert audit_lines(caplog)[-1]["reason"] == "timed suspend expired"
    assert channel_texts(stack, ALERT_CHANNEL) == []  # the next pass tries again


# --- Flux reconcile, Argo CD refresh and sync -------------------------------------------------


async def test_a_reconcile_whose_object_cannot_be_read_back_says_it_was_requested(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    unreadable_after_the_next_read(stack, "helmreleases")

    reply = await stack.command("reconcile hr flux-system/keda", to_the_end=True)

    assert reply.text.splitlines()[0] == (
        "Flux reconcile of HelmRelease flux-system/keda on sim: its result could not be read back"
    )
    assert "requested, but the object could not be read since" in reply.text
    [line] = audit_lines(caplog)
    assert (line["action"], line["outcome"], line["note"]) == (
        "reconcile",
        "unknown",
        "not read back",
    )
    assert line["details"]["requestedAt"]


@pytest.mark.parametrize(
    ("command", "action", "done"),
    [
        pytest.param("reconcile app argocd/kai-scheduler", "refresh", "requested", id="refresh"),
        pytest.param(
            "reconcile app argocd/kai-scheduler --hard", "hard refresh", "requested", id="hard"
        ),
    ],
)
async def test_a_refresh_whose_application_cannot_be_read_back_says_it_was_requested(
    stack: Stack, caplog: pytest.LogCaptureFixture, command: str, action: str, done: str
) -> None:
    unreadable_after_the_next_read(stack, "applications")

    reply = await stack.command(command, to_the_end=True)

    assert reply.text.startswith(
        f"Argo CD {action} of Application argocd/kai-scheduler on sim: {done}, but its result "
        "could not be read"
    )
    [line] = audit_lines(caplog)
    assert (line["action"], line["outcome"]) == (action, "unknown")
    assert "forbidden" in line["details"]["error"]


async def test_a_sync_whose_wait_fails_was_started_and_is_one_unknown_line(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    confirmation = await asked(stack, "sync argocd/kai-scheduler")
    unreadable_after_the_next_read(stack, "applications")

    reply = await click_confirm(stack, confirmation)

    assert reply.startswith(
        "Argo CD sync of Application argocd/kai-scheduler on sim: started, but its result "
        "could not be read"
    )
    app = stack.sim.get("argoproj.io/v1alpha1", "Application", "kai-scheduler", "argocd")
    assert app is not None and app["status"]["operationState"]["operation"]["initiatedBy"] == {
        "username": f"slack:{OPERATOR}"
    }
    assert outcomes(caplog) == [("sync", "unknown")]
    started, record = channel_texts(stack)
    assert started.startswith(f"<@{OPERATOR}> started an Argo CD sync")
    assert "started, but its result could not be read" in record


# --- KEDA pause and resume --------------------------------------------------------------------


async def test_a_pause_that_cannot_be_read_back_is_written_and_unknown(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    confirmation = await asked(stack, "pause annia/annia-worker node drain")
    unreadable_after_the_next_read(stack, "scaledjobs")

    reply = await click_confirm(stack, confirmation)

    obj = stack.sim.get("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia")
    assert obj is not None and obj["metadata"]["annotations"]["autoscaling.keda.sh/paused"] == (
        "true"
    )
    assert reply.startswith(
        "The pause is written on ScaledJob annia/annia-worker on sim (the API server accepted "
        "the patch), but it could not be read back afterwards"
    )
    [line] = audit_lines(caplog)
    assert (line["action"], line["outcome"]) == ("pause", "unknown")
    assert line["note"].startswith("written, but not read back:")
    [announced] = channel_texts(stack)
    assert "could not be read back after the change, so KEDA's answer is not known" in announced


async def test_a_timed_pause_resume_whose_write_got_no_answer_is_said_in_the_channel(
    stack: Stack, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    await made_due(stack, clock, "pause annia/annia-worker for 1h")
    deps = stack.service.deps
    stack.sim.faults.add(503, verb="patch", resource="scaledjobs", times=1)

    resumed = await expiry.resume_expired_pauses(
        deps.kube_for(None), deps.slack, deps.settings, clock.now, wait=SHORT_WAIT
    )

    assert resumed == []
    assert outcomes(caplog) == [("pause", "ok"), ("resume", "unknown")]
    [said] = channel_texts(stack, ALERT_CHANNEL)
    assert said.startswith(
        "kai-chatops asked to resume ScaledJob annia/annia-worker on sim (its timed pause was "
        "over); the cluster did not answer in time"
    )
