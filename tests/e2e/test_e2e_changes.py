"""Forgotten pauses and `/kai changes` end to end: the Slack emulator in, the simulator out.

A pause or suspend without an end, through the bot or by hand, older than
`changes.remind_after` gets one reminder root in the alert channel naming who, why and since
when; later reminders are replies in its thread; its end is a last reply and the root edited.
The reminders come from the timed-pause sweeps' own lists (no extra request), once across a
restart. `/kai changes` lists what is in force on every configured cluster. The service's
clock is the test's, moved by hand; the sweeps are the scheduler's jobs, called directly.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from clocks import Clock
from stack_steps import confirm

from bot.keda import usecase
from bot.service import jobs_timed
from testbed.sim import Simulator, breakage
from testbed.slackemu.records import PostedMessage
from testbed.stack import ALERT_CHANNEL, OPERATOR, Stack, running_stack

# No KEDA controller runs here: do not wait long for one to acknowledge a pause.
SHORT_WAIT = usecase.AckWait(timeout=0.2, interval=0.05)
HOUR = timedelta(hours=1)
KEDA = "keda.sh/v1alpha1"
FLUX_HR = "helm.toolkit.fluxcd.io/v2"
PAUSED = "autoscaling.keda.sh/paused"


def overrides(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {
        "changes": {"remind_after": "1h"},
        "alerts": {"interval": "1h", "hold": "60s", "repeat": "4h"},
        "state": {"path": str(tmp_path / "state.sqlite")},
        **extra,
    }


@pytest.fixture
async def stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    async with running_stack(
        tmp_path, keda_wait=SHORT_WAIT, clock=clock, config_overrides=overrides(tmp_path)
    ) as s:
        yield s


def reminder_roots(stack: Stack) -> list[PostedMessage]:
    return [m for m in stack.slack.root_messages(ALERT_CHANNEL) if "paused" in m.text.lower()]


async def sweep(stack: Stack, clock: Clock, after: timedelta = timedelta(0)) -> None:
    clock.now += after
    await jobs_timed.sweep_pauses(stack.service.deps, "sim")


async def test_a_pause_through_the_bot_is_reminded_in_one_thread_until_it_is_resumed(
    stack: Stack, clock: Clock
) -> None:
    await confirm(stack, "pause annia/annia-worker node drain")
    await sweep(stack, clock, HOUR - timedelta(seconds=1))
    assert reminder_roots(stack) == []
    stack.sim.clear_requests()

    await sweep(stack, clock, timedelta(seconds=1))

    (root,) = reminder_roots(stack)
    assert f"paused by <@{OPERATOR}>" in root.text
    shown = str(root.blocks)
    assert "node drain" in shown and "*Since:* 2026-08-24 08:00:00 UTC" in shown
    # From the sweep's own lists: the two kinds in the one configured namespace, nothing more.
    assert sorted((r.method, r.resource) for r in stack.sim.requests) == [
        ("GET", "scaledjobs"),
        ("GET", "scaledobjects"),
    ]

    await sweep(stack, clock, HOUR)
    await stack.restart_service()
    await sweep(stack, clock, HOUR / 2)  # after a restart, not due again yet: nothing said

    (again,) = stack.slack.thread(ALERT_CHANNEL, root.ts)
    assert again.text.startswith(":bell: Still paused: ScaledJob annia/annia-worker on sim")
    assert "since 2026-08-24 08:00:00 UTC (2h)" in again.text

    await confirm(stack, "resume annia/annia-worker")
    await sweep(stack, clock)

    ended = stack.slack.thread(ALERT_CHANNEL, root.ts)[-1]
    assert "is no longer paused as reminded here" in ended.text
    assert "*Ended*" in str(stack.slack.message(ALERT_CHANNEL, root.ts).blocks)
    assert len(reminder_roots(stack)) == 1


async def test_a_pause_by_hand_is_reminded_as_by_hand_with_no_record(
    stack: Stack, clock: Clock
) -> None:
    breakage.pause_by_hand(stack.sim)  # the annotation written directly, as `sim` does
    job = stack.sim.get(KEDA, "ScaledJob", "annia-worker", "annia")
    assert job is not None and job["metadata"]["annotations"] == {PAUSED: "true"}
    await sweep(stack, clock, HOUR * 5)  # first seen now: it counts from here

    await sweep(stack, clock, HOUR)

    (root,) = reminder_roots(stack)
    assert "by hand, no record" in root.text
    assert "*Since:* 2026-08-24 13:00:00 UTC" in str(root.blocks)


async def test_a_flux_suspend_without_an_end_is_reminded_from_the_suspend_sweep(
    stack: Stack, clock: Clock
) -> None:
    await confirm(stack, "suspend hr flux-system/keda chart upgrade on hold")
    clock.now += HOUR

    await jobs_timed.sweep_suspends(stack.service.deps, "sim")

    (root,) = [m for m in stack.slack.root_messages(ALERT_CHANNEL) if "SUSPENDED" in m.text]
    assert f"HelmRelease flux-system/keda suspended by <@{OPERATOR}>" in root.text
    assert "`/kai resume hr flux-system/keda --cluster sim` ends it" in str(root.blocks)


async def test_changes_lists_the_pauses_and_suspends_of_every_cluster(
    tmp_path: Path, clock: Clock
) -> None:
    async with Simulator(scenarios=["default"]) as lab:
        lab_kubeconfig = lab.write_kubeconfig(str(tmp_path / "lab-kubeconfig"))
        two = overrides(
            tmp_path,
            clusters=[
                {"name": "sim", "kubeconfig": str(tmp_path / "kubeconfig"), "context": "sim"},
                {"name": "lab", "kubeconfig": lab_kubeconfig, "context": "sim"},
            ],
        )
        async with running_stack(
            tmp_path, keda_wait=SHORT_WAIT, clock=clock, config_overrides=two
        ) as stack:
            await confirm(stack, "pause annia/annia-worker for 2h node drain")
            suspend = {"spec": {"suspend": True}}
            lab.patch(FLUX_HR, "HelmRelease", "keda", "flux-system", patch=suspend)
            clock.now += HOUR

            every = await stack.command("changes")
            lab_only = await stack.command("changes --cluster lab")

    assert every.text.startswith("Pauses and suspends in force on sim, lab")
    assert (
        f"sim · *ScaledJob annia/annia-worker* paused by <@{OPERATOR}> · since 2026-08-24 "
        "08:00 UTC (1h ago) · until 2026-08-24 10:00 UTC · why: node drain" in every.text
    )
    assert "lab · *HelmRelease flux-system/keda* suspended by hand, no record" in every.text
    assert "no end" in every.text
    assert "annia-worker" not in lab_only.text and "HelmRelease flux-system/keda" in lab_only.text


async def test_a_pause_without_an_end_is_reminded_at_its_time_by_the_running_service(
    tmp_path: Path,
) -> None:
    """The service's own jobs and the wall clock, `changes.remind_after: 5s`: a pause made
    through the bot is reminded of 5 s after it was made, within a tick or two, not at the
    next hourly sweep."""
    config = overrides(tmp_path, changes={"remind_after": "5s"})
    async with running_stack(tmp_path, keda_wait=SHORT_WAIT, config_overrides=config) as stack:
        made = time.time()
        await confirm(stack, "pause annia/annia-worker node drain")

        (root,) = await stack.slack.wait_for(lambda: reminder_roots(stack), timeout=15)

        assert f"paused by <@{OPERATOR}>" in root.text
        assert float(root.ts) - made >= 5  # at its time, not before
