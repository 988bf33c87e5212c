"""The timed-suspend sweep against a hand change made while it runs: the sweep lists the Flux
objects, finds a suspend past its `suspend-until`, and reads the object again before it resumes
it. A record changed by hand in between (a later end, or another reason) is the object as it now
stands: the sweep leaves it suspended and says nothing in the channel.

The simulated API server holds the sweep's read of the object (a gated fault) while the test
makes the change, so the change lands exactly between the list and the read.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from alert_stack import Gate
from clocks import Clock

from bot.gitops import suspend_expiry, usecase
from testbed.stack import ALERT_CHANNEL, Stack, running_stack

API = "helm.toolkit.fluxcd.io/v2"


@pytest.fixture
async def stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    async with running_stack(tmp_path, clock=clock) as running:
        yield running


@pytest.mark.parametrize(
    "by_hand",
    [
        pytest.param({"kai-chatops/suspend-until": "2026-08-24T18:00:00Z"}, id="a-later-end"),
        pytest.param({"kai-chatops/suspend-reason": "keep it: GPU driver rollout"}, id="a-reason"),
    ],
)
async def test_a_record_changed_by_hand_between_the_sweeps_list_and_read_is_left_alone(
    stack: Stack, clock: Clock, by_hand: dict[str, str]
) -> None:
    ask = await stack.command("suspend hr flux-system/keda for 1h")
    assert ask.message is not None, ask.text
    await stack.click("Confirm", ask.message)
    clock.now += timedelta(hours=2)
    deps = stack.service.deps
    read = Gate()
    stack.sim.clear_requests()
    stack.sim.faults.add(None, verb="get", resource="helmreleases", gate=read)

    sweeping = asyncio.create_task(
        suspend_expiry.sweep(
            deps.kube_for(None), deps.slack, deps.settings, clock.now, polling=usecase.Polling(5)
        )
    )
    await asyncio.wait_for(read.arrived.wait(), timeout=10)  # listed, found expired, reading
    stack.sim.patch(
        API, "HelmRelease", "keda", "flux-system", patch={"metadata": {"annotations": by_hand}}
    )
    read.set()
    swept = await asyncio.wait_for(sweeping, timeout=10)

    assert swept.outcomes == []
    after = stack.sim.get(API, "HelmRelease", "keda", "flux-system")
    assert after is not None and after["spec"]["suspend"] is True
    notes = after["metadata"]["annotations"]
    assert {k: notes[k] for k in by_hand} == by_hand
    assert [r.verb for r in stack.sim.requests if r.name == "keda"] == ["get"]  # no write
    assert stack.slack.messages(ALERT_CHANNEL) == []
