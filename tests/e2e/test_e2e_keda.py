"""KEDA pause and resume end to end: Slack emulator in, simulated cluster out, the record kept.

The simulated cluster runs no KEDA controller, so KEDA never acknowledges unless a test plays
KEDA itself (`fake_keda`). The service's clock is the test's `Clock`, moved by hand.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from collections.abc import AsyncIterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from clocks import START, Clock
from stack_steps import channel_texts, patches
from waiting import wait_until

from bot.keda import expiry, usecase
from bot.service import jobs_timed, schedule
from bot.slack import blocks as render
from testbed.stack import ALERT_CHANNEL, DEMO_CHANNEL, OPERATOR, VIEWER, Reply, Stack, running_stack

API = "keda.sh/v1alpha1"
PAUSED = "autoscaling.keda.sh/paused"
REPLICAS = "autoscaling.keda.sh/paused-replicas"
SHORT_WAIT = usecase.AckWait(timeout=0.3, interval=0.05)  # no KEDA controller answers here
LONG_WAIT = usecase.AckWait(timeout=10, interval=0.05)  # for the tests that play KEDA


@pytest.fixture
async def stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    async with running_stack(tmp_path, keda_wait=SHORT_WAIT, clock=clock) as running:
        yield running


def annotations(
    stack: Stack, name: str = "annia-worker", kind: str = "ScaledJob"
) -> dict[str, str]:
    obj = stack.sim.get(API, kind, name, "annia")
    assert obj is not None
    return dict(obj["metadata"].get("annotations") or {})


async def click(
    stack: Stack, reply: Reply, *, user: str = OPERATOR, action: str = render.CONFIRM_ACTION
) -> Mapping[str, Any]:
    """Click a button of the reply's confirmation; the message that replaces it."""
    assert reply.message is not None
    delivery = await stack.driver.click_button(
        action, user_id=user, channel_id=DEMO_CHANNEL, message=reply.message
    )
    post = await stack.slack.wait_for_response(delivery.hook_id, timeout=15)
    return post.body


async def pause_confirmed(
    stack: Stack, text: str = "pause annia/annia-worker"
) -> Mapping[str, Any]:
    reply = await stack.command(text)
    return await click(stack, reply)


async def test_an_operator_pause_is_confirmed_then_written_exactly_and_announced(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    reply = await stack.command("pause annia/annia-worker for 2h node drain")

    assert reply.message is not None and reply.message["response_type"] == "ephemeral"
    assert "Pause ScaledJob annia/annia-worker on sim?" in str(reply.message["blocks"])
    assert f'{PAUSED}: \\"true\\"' in json.dumps(reply.message["blocks"])
    assert annotations(stack) == {}

    stack.sim.clear_requests()
    result = await click(stack, reply)

    assert annotations(stack) == {
        PAUSED: "true",
        "kai-chatops/paused-by": OPERATOR,
        "kai-chatops/paused-at": "2026-08-24T08:00:00Z",
        "kai-chatops/pause-reason": "node drain",
        "kai-chatops/pause-until": "2026-08-24T10:00:00Z",
    }
    (patch,) = patches(stack)
    assert patch.content_type.startswith("application/merge-patch+json")
    assert patch.body["metadata"]["resourceVersion"]
    assert result["replace_original"] is True
    assert "The pause is written on ScaledJob annia/annia-worker on sim" in result["text"]
    assert "until 2026-08-24 10:00 UTC" in result["text"]
    assert "KEDA has not acknowledged it yet" in result["text"]
    (announcement,) = channel_texts(stack)
    assert (
        f"<@{OPERATOR}> paused ScaledJob annia/annia-worker on sim until 2026-08-24 10:00 UTC"
        in announcement
    )
    assert "Reason: node drain" in announcement
    records = [json.loads(r.getMessage()) for r in caplog.records if r.name == "kai_chatops.audit"]
    assert [(r["action"], r["user"], r["reason"]) for r in records] == [
        ("pause", OPERATOR, "node drain")
    ]
    assert stack.slack.violations == []


async def test_resume_deletes_the_pause_and_the_record_and_never_writes_false(
    stack: Stack,
) -> None:
    await pause_confirmed(stack, "pause annia/annia-worker for 1h reindex")
    stack.sim.clear_requests()

    reply = await stack.command("resume annia/annia-worker")
    assert "Resume ScaledJob annia/annia-worker on sim?" in str(reply.message)
    result = await click(stack, reply)

    assert annotations(stack) == {}
    assert result["text"] == (
        "ScaledJob annia/annia-worker on sim is resumed: its pause annotations are removed. "
        "KEDA's Paused condition is False, as it already was before this change."
    )
    (patch,) = patches(stack)
    assert set(patch.body["metadata"]["annotations"].values()) == {None}
    assert '"false"' not in json.dumps(patch.body)
    assert f"<@{OPERATOR}> resumed ScaledJob annia/annia-worker" in channel_texts(stack)[-1]


async def test_resuming_a_scaledobject_deletes_paused_replicas_too(stack: Stack) -> None:
    stack.sim.patch(
        API,
        "ScaledObject",
        "annia-api",
        "annia",
        patch={"metadata": {"annotations": {REPLICAS: "0"}}},
    )

    reply = await stack.command("resume scaledobject annia/annia-api")
    assert REPLICAS in str(reply.message)
    await click(stack, reply)

    assert annotations(stack, "annia-api", "ScaledObject") == {}


async def test_the_short_kind_words_of_list_pause_and_resume_too(stack: Stack) -> None:
    await pause_confirmed(stack, "pause so annia/annia-api for 1h canary")
    assert annotations(stack, "annia-api", "ScaledObject")[PAUSED] == "true"
    await pause_confirmed(stack, "pause sj annia/annia-worker")
    assert annotations(stack)[PAUSED] == "true"

    await click(stack, await stack.command("resume so annia/annia-api"))
    await click(stack, await stack.command("resume SJ annia/annia-worker"))

    assert annotations(stack, "annia-api", "ScaledObject") == {}
    assert annotations(stack) == {}


async def test_a_viewer_is_refused_privately_before_any_cluster_request(stack: Stack) -> None:
    stack.sim.clear_requests()

    reply = await stack.command("pause annia/annia-worker", user_id=VIEWER)

    assert reply.message is not None and reply.message["response_type"] == "ephemeral"
    assert "You are not allowed to pause ScaledJob annia/annia-worker" in reply.text
    assert stack.sim.requests == []


async def test_a_viewer_may_list(stack: Stack) -> None:
    reply = await stack.command("scaledjobs", user_id=VIEWER)

    assert "annia/annia-worker (ScaledJob): Healthy" in reply.text
    assert "annia/annia-api (ScaledObject): Healthy" in reply.text


async def test_a_non_operator_clicking_an_operators_confirm_changes_nothing(stack: Stack) -> None:
    reply = await stack.command("pause annia/annia-worker")
    stack.sim.clear_requests()

    result = await click(stack, reply, user=VIEWER)

    assert "You are not allowed to pause" in result["text"]
    assert stack.sim.requests == []
    assert annotations(stack) == {}


async def test_an_expired_confirmation_changes_nothing(stack: Stack, clock: Clock) -> None:
    reply = await stack.command("pause annia/annia-worker")
    clock.advance(timedelta(minutes=6))

    result = await click(stack, reply)

    assert "expired" in result["text"]
    assert annotations(stack) == {}


async def test_a_confirmation_works_once(stack: Stack) -> None:
    reply = await stack.command("pause annia/annia-worker")
    await click(stack, reply)
    # Undo by hand, so a second pause would show.
    stack.sim.patch(
        API, "ScaledJob", "annia-worker", "annia", patch={"metadata": {"annotations": None}}
    )

    again = await click(stack, reply)

    assert "already used" in again["text"]
    assert annotations(stack) == {}


async def test_cancel_changes_nothing(stack: Stack) -> None:
    reply = await stack.command("pause annia/annia-worker")
    stack.sim.clear_requests()

    result = await click(stack, reply, action=render.CANCEL_ACTION)

    assert "Cancelled" in result["text"]
    assert patches(stack) == []
    assert annotations(stack) == {}
    assert channel_texts(stack) == []


async def test_a_timed_pause_resumes_on_schedule_even_after_a_restart(
    stack: Stack, clock: Clock
) -> None:
    await pause_confirmed(stack, "pause annia/annia-worker for 2h node drain")
    await stack.restart_service()
    deps = stack.service.deps

    clock.advance(timedelta(hours=1))
    early = await expiry.resume_expired_pauses(
        deps.kube_for(None), deps.slack, deps.settings, deps.clock(), wait=SHORT_WAIT
    )
    assert early == []
    assert annotations(stack)[PAUSED] == "true"

    clock.advance(timedelta(hours=1, minutes=1))
    done = await expiry.resume_expired_pauses(
        deps.kube_for(None), deps.slack, deps.settings, deps.clock(), wait=SHORT_WAIT
    )

    assert [o.plan.target.name for o in done] == ["annia-worker"]
    assert annotations(stack) == {}
    (post,) = channel_texts(stack, ALERT_CHANNEL)
    assert "ScaledJob annia/annia-worker on sim resumed automatically after 2h" in post
    assert f"paused by <@{OPERATOR}> at 2026-08-24 08:00 UTC: node drain" in post


@pytest.mark.parametrize(
    "by_hand",
    [
        pytest.param({PAUSED: None}, id="resumed-by-hand"),
        pytest.param({"kai-chatops/pause-until": "2026-08-24T18:00:00Z"}, id="extended-by-hand"),
        pytest.param({"kai-chatops/pause-until": None}, id="made-indefinite-by-hand"),
    ],
)
async def test_the_timed_pause_job_leaves_a_pause_changed_by_hand_alone(
    stack: Stack, clock: Clock, by_hand: dict[str, str | None]
) -> None:
    await pause_confirmed(stack, "pause annia/annia-worker for 2h")
    patch = {"metadata": {"annotations": by_hand}}
    stack.sim.patch(API, "ScaledJob", "annia-worker", "annia", patch=patch)
    before = annotations(stack)
    clock.advance(timedelta(hours=3))
    deps = stack.service.deps
    stack.sim.clear_requests()

    done = await expiry.resume_expired_pauses(
        deps.kube_for(None), deps.slack, deps.settings, deps.clock(), wait=SHORT_WAIT
    )

    assert done == []
    assert patches(stack) == []
    assert annotations(stack) == before
    assert channel_texts(stack, ALERT_CHANNEL) == []


async def test_a_pause_by_hand_is_listed_with_the_annotation_and_keda_lagging(stack: Stack) -> None:
    annotation = {"metadata": {"annotations": {PAUSED: "yes"}}}
    stack.sim.patch(API, "ScaledJob", "annia-trainer", "annia", patch=annotation)

    reply = await stack.command("scaledjobs annia")

    line = next(x for x in reply.text.splitlines() if "annia-trainer" in x)
    assert line.startswith("annia/annia-trainer (ScaledJob): Suspended — paused by hand")
    assert f'[{PAUSED}: "yes"]' in line
    assert "not a Go boolean: KEDA counts it as paused" in line
    assert "Paused condition is still False" in line


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
async def test_a_pause_with_kubectl_annotate_is_shown_by_scaledjobs(
    stack: Stack, tmp_path: Path
) -> None:
    process = await asyncio.create_subprocess_exec(
        *("kubectl", "--kubeconfig", stack.kubeconfig, "--cache-dir", str(tmp_path / "cache")),
        *("annotate", "scaledjob", "annia-trainer", "-n", "annia", f"{PAUSED}=true"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), timeout=20)
    assert process.returncode == 0, err.decode()

    reply = await stack.command("scaledjobs")

    line = next(x for x in reply.text.splitlines() if "annia-trainer" in x)
    assert line.startswith("annia/annia-trainer (ScaledJob): Suspended — paused by hand")
    assert "Paused condition is still False" in line
    assert "annia/annia-worker (ScaledJob): Healthy" in reply.text


async def test_pausing_an_already_paused_object_says_so_and_writes_nothing(stack: Stack) -> None:
    await pause_confirmed(stack, "pause annia/annia-worker for 30m flaky queue")
    stack.sim.clear_requests()

    reply = await stack.command("pause annia/annia-worker")

    assert "is already paused; nothing was changed" in reply.text
    assert f"paused by {OPERATOR}" in reply.text and "flaky queue" in reply.text
    assert patches(stack) == []


async def test_resuming_an_object_that_is_not_paused_says_so(stack: Stack) -> None:
    reply = await stack.command("resume annia/annia-worker")

    assert "it is not paused; nothing was changed" in reply.text
    assert patches(stack) == []


async def test_a_namespace_outside_keda_namespaces_is_refused_without_a_request(
    stack: Stack,
) -> None:
    stack.sim.clear_requests()

    reply = await stack.command("pause kube-system/coredns")

    assert "not allowed in namespace 'kube-system'" in reply.text
    assert "keda.namespaces" in reply.text
    assert stack.sim.requests == []


async def test_a_missing_object_gets_its_own_message_and_a_hint_for_the_other_kind(
    stack: Stack,
) -> None:
    missing = await stack.command("pause annia/nope")
    other_kind = await stack.command("pause annia/annia-api")

    assert "ScaledJob annia/nope does not exist on cluster sim" in missing.text
    assert "There is a ScaledObject of that name" in other_kind.text
    assert patches(stack) == []


async def test_a_403_from_the_cluster_gets_its_own_message_and_changes_nothing(
    stack: Stack,
) -> None:
    stack.sim.faults.add(403, resource="scaledjobs", verb="patch", times=None)
    reply = await stack.command("pause annia/annia-worker")

    result = await click(stack, reply)

    assert "the cluster refused it (403 Forbidden), so nothing was changed" in result["text"]
    assert "grant verb 'patch' on resource 'scaledjobs'" in result["text"]
    assert annotations(stack) == {}
    assert channel_texts(stack) == []


async def test_a_conflicting_write_is_read_again_and_retried(stack: Stack) -> None:
    stack.sim.faults.add(409, resource="scaledjobs", verb="patch", times=1)
    stack.sim.clear_requests()

    await pause_confirmed(stack)

    assert len(patches(stack)) == 2
    assert annotations(stack)[PAUSED] == "true"


async def fake_keda(stack: Stack, name: str, paused: str) -> None:
    """Play KEDA for one object: once the annotation says `paused`, set its Paused condition."""
    await wait_until(
        lambda: annotations(stack, name).get(PAUSED) == paused, 10, f"{name} annotated {paused}"
    )
    reason = "ScaledJobPaused" if paused == "true" else "ScaledJobUnpaused"
    stack.sim.set_condition(
        API, "ScaledJob", name, "annia", "Paused", "True", reason, "ScaledJob is paused"
    )


async def test_keda_acknowledging_the_pause_is_reported(tmp_path: Path, clock: Clock) -> None:
    async with running_stack(tmp_path, clock=clock, keda_wait=LONG_WAIT) as stack:
        reply = await stack.command("pause annia/annia-worker")

        keda = asyncio.create_task(fake_keda(stack, "annia-worker", "true"))
        result = await click(stack, reply)
        await keda

        assert result["text"].startswith("ScaledJob annia/annia-worker on sim is paused: it now")
        assert "KEDA acknowledged it (its Paused condition is True)" in result["text"]
        assert "KEDA acknowledged it." in channel_texts(stack)[-1]


async def test_keda_not_acknowledging_is_said_instead_of_success(stack: Stack) -> None:
    result = await pause_confirmed(stack)

    assert (
        "KEDA has not acknowledged it yet: after 0.3s its Paused condition is False"
        in (result["text"])
    )
    assert "check that the KEDA operator is running" in result["text"]


async def test_all_namespaces_lists_each_kind_once_cluster_wide(tmp_path: Path) -> None:
    async with running_stack(
        tmp_path, keda_wait=SHORT_WAIT, config_overrides=two_namespaces()
    ) as stack:
        stack.sim.apply(scaled_job("billing", "invoice-renderer"))
        stack.sim.clear_requests()

        reply = await stack.command("scaledjobs --all-namespaces")

        lists = [(r.resource, r.namespace) for r in stack.sim.requests]
        assert sorted(lists) == [("scaledjobs", None), ("scaledobjects", None)]
        assert "billing/invoice-renderer (ScaledJob): Healthy" in reply.text
        assert "4 objects in 2 namespaces: 4 Healthy" in reply.text


async def test_the_configured_namespaces_are_listed_by_default(tmp_path: Path) -> None:
    async with running_stack(
        tmp_path, keda_wait=SHORT_WAIT, config_overrides=two_namespaces()
    ) as stack:
        stack.sim.apply(scaled_job("billing", "invoice-renderer"))

        reply = await stack.command("scaledjobs")

        assert reply.text.startswith(
            "KEDA ScaledJobs and ScaledObjects on sim: namespaces annia, billing"
        )
        assert "billing/invoice-renderer (ScaledJob): Healthy" in reply.text


def two_namespaces() -> dict[str, Any]:
    return {"keda": {"namespaces": ["annia", "billing"]}}


def scaled_job(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ScaledJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"jobTargetRef": {"template": {"spec": {"containers": []}}}},
        "status": {
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "ScaledJobReady", "message": "ok"},
                {"type": "Paused", "status": "False", "reason": "ScaledJobUnpaused"},
            ]
        },
    }


async def test_all_namespaces_without_cluster_wide_rights_says_what_to_do(stack: Stack) -> None:
    stack.sim.faults.add(403, resource="scaledjobs", verb="list", times=None)

    reply = await stack.command("scaledjobs --all-namespaces")

    assert reply.message is not None and reply.message["response_type"] == "ephemeral"
    assert "Listing across all namespaces needs cluster-wide list rights" in reply.text
    assert "`/kai scaledjobs annia`" in reply.text


SCALE_IN = "autoscaling.keda.sh/paused-scale-in"


async def test_e2e_keda_one_direction_pause_stays_and_is_named_after_resume(
    tmp_path: Path, clock: Clock
) -> None:
    """KEDA keeps Paused True for a scale-in pause: the resume is acknowledged, not timed out."""
    async with running_stack(
        tmp_path, clock=clock, keda_wait=LONG_WAIT, keda_controller=True
    ) as stack:
        by_hand = {"metadata": {"annotations": {SCALE_IN: "true"}}}
        stack.sim.patch(API, "ScaledObject", "annia-api", "annia", patch=by_hand)
        await click(stack, await stack.command("pause scaledobject annia/annia-api"))
        stack.sim.clear_requests()

        reply = await stack.command("resume scaledobject annia/annia-api")
        assert SCALE_IN in json.dumps(reply.message)
        result = await click(stack, reply)

        assert result["text"].startswith("ScaledObject annia/annia-api on sim is resumed")
        assert f"Still paused for scale-in by {SCALE_IN}" in result["text"]
        assert "has not acknowledged" not in result["text"]
        assert annotations(stack, "annia-api", "ScaledObject") == {SCALE_IN: "true"}
        (patch,) = patches(stack)
        assert SCALE_IN not in patch.body["metadata"]["annotations"]
        assert f"Its scale-in pause ({SCALE_IN}) stays." in channel_texts(stack)[-1]


async def test_timed_pause_resumes_within_seconds_of_its_due_time(
    stack: Stack, clock: Clock
) -> None:
    """The running scheduler resumes a `for 1m` pause at its time, long before the next sweep."""
    await pause_confirmed(stack, "pause annia/annia-worker for 1m short test")
    job = jobs_timed.PauseExpiry(
        "sim", sweep_every=timedelta(hours=1), first_sweep_after=timedelta(0)
    )
    ticking = schedule.Schedule(
        stack.service.deps, [schedule.Job("pause-expiry", job, timedelta(seconds=0.05))]
    )
    ticking.start()
    try:
        await wait_until(lambda: job.next_due is not None, 5, "the pause's end known")
        assert job.next_due == START + timedelta(minutes=1)
        clock.advance(timedelta(seconds=59))
        assert annotations(stack)[PAUSED] == "true"

        clock.advance(timedelta(seconds=2))
        # The next sweep is an hour away: only the known due time can resume it now. The
        # deadline is generous for a loaded machine; it says nothing about speed.
        await wait_until(lambda: PAUSED not in annotations(stack), 15, "the pause lifted")
        # The announcement follows the write: wait for it, not for a moment to pass.
        await wait_until(lambda: channel_texts(stack, ALERT_CHANNEL), 15, "the resume announced")
    finally:
        await ticking.stop()

    (post,) = channel_texts(stack, ALERT_CHANNEL)
    assert "resumed automatically after 1m" in post
