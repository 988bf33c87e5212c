"""`/kai pending`, `/kai why`, queue starvation and eviction notices on what each KAI release's
scheduler writes (`running_stack(kai_release=...)`, the imitation's `testbed/sim/kai_scheduler.py`):
`QueueDoesNotExist` (v0.13; v0.12 says nothing), `PreemptionDelayNotElapsed` and the eviction
time on the PodGroup (v0.17), scheduling conditions cleared once a group runs (v0.17; older
releases leave them), and the stale-gang evictions of a gang that completed (v0.16.2-v0.17.0,
KAI #1968), told by no notice (issue 35 item 3).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from clocks import Clock
from waiting import wait_until

from bot.alerts import outbox
from testbed.sim import breakage, kai_scheduler, podgroups
from testbed.sim.podgroups import PODGROUP, WORK_NS
from testbed.sim.workload_breakage import schedule_starved
from testbed.stack import VIEWER, Stack, running_stack

RELEASES = ("v0.12", "v0.13", "v0.16", "v0.17")
TEAMS = "C0TEAMS"
WAIT = 15.0


def notices_on(workdir: Path) -> dict[str, Any]:
    return {
        "notices": {"evictions": True, "channels": {"*": TEAMS}},
        "state": {"path": str(workdir / "state.sqlite")},
    }


async def owes_nothing(stack: Stack) -> bool:
    return outbox.owes_nothing((await stack.service.deps.alerts.store.load("sim")).state)


@pytest.mark.parametrize("release", RELEASES)
async def test_a_job_whose_queue_does_not_exist_is_explained_on_every_release(
    tmp_path: Path, release: str
) -> None:
    async with running_stack(tmp_path, kai_release=release) as stack:
        group = kai_scheduler.queue_missing(stack.sim, "orphan-train", "team-z")
        pending = await stack.command(f"pending {WORK_NS}", user_id=VIEWER)
        why = await stack.command(f"why {WORK_NS}/orphan-train-0", user_id=VIEWER)

        listed = f"{WORK_NS}/{group} · queue team-z" in pending.text
        assert listed is (release != "v0.12")  # v0.12 skips such a group and says nothing
        if listed:
            assert "QueueDoesNotExist: Queue 'team-z' does not exist" in pending.text
            assert "→ its queue team-z does not exist, so the scheduler will not place it" in (
                pending.text
            )
        assert "Queue: team-z: this Queue does not exist" in why.text
        assert (
            "What to do: its queue team-z does not exist, so the scheduler will not place it: "
            "create Queue team-z (a leaf queue)"
        ) in why.text


async def test_a_gang_within_its_preemption_delay_is_told_when_it_may_preempt(
    tmp_path: Path,
) -> None:
    async with running_stack(tmp_path, kai_release="v0.17") as stack:
        group = kai_scheduler.within_preemption_delay(stack.sim, "llm-eval")
        created = (stack.sim.get(PODGROUP, "PodGroup", group, WORK_NS) or {})["metadata"]
        ends = datetime.fromisoformat(created["creationTimestamp"]) + timedelta(minutes=15)
        pending = await stack.command(f"pending {WORK_NS}", user_id=VIEWER)
        why = await stack.command(f"why {WORK_NS}/llm-eval-0", user_id=VIEWER)

        assert (
            "PreemptionDelayNotElapsed: Workload is within its preemption delay window (15m0s)"
            in (pending.text)
        )
        said = f"to make room until {ends:%Y-%m-%d %H:%M:%S} UTC: it is tried again every cycle"
        assert said in pending.text
        assert "What to do: there is no room for it in free GPUs, and its preemption delay" in (
            why.text
        )
        assert said in why.text


@pytest.mark.parametrize(("release", "waiting"), [("v0.16", "3h10m"), ("v0.17", "10m")])
async def test_a_gang_reclaimed_back_to_pending_waits_since_its_eviction_where_kai_says_when(
    tmp_path: Path, release: str, waiting: str
) -> None:
    """v0.17 stamps the evicted group with its eviction time; older releases leave the wait
    counted from the condition they never cleared."""
    clock = Clock()
    async with running_stack(tmp_path, kai_release=release, clock=clock, sim_clock=clock) as stack:
        group = kai_scheduler.waiting_gang(stack.sim, "vision-sweep")
        clock.advance(timedelta(minutes=1))
        podgroups.scheduled(stack.sim, group, WORK_NS, {"nvidia.com/gpu": "2"})
        clock.advance(timedelta(hours=3, minutes=-1))
        kai_scheduler.reclaimed(stack.sim, group)
        clock.advance(timedelta(minutes=10))
        pending = await stack.command(f"pending {WORK_NS}", user_id=VIEWER)

        assert f"{WORK_NS}/{group} · queue vision · pool default · waiting {waiting}" in (
            pending.text
        )


@pytest.mark.parametrize("release", RELEASES)
async def test_a_starved_queue_is_no_longer_starved_once_its_gang_runs_on_every_release(
    tmp_path: Path, release: str
) -> None:
    """v0.17 clears the gang's conditions; older releases leave them, and its pods running
    (allocated covers requested) leave it out all the same."""
    starving = {"alerts": {"starved_after": "30m"}}
    async with running_stack(tmp_path, kai_release=release, config_overrides=starving) as stack:
        breakage.ACTIONS["starve"](stack.sim)
        starved = await stack.command("queues", user_id=VIEWER)
        schedule_starved(stack.sim)
        running = await stack.command("queues", user_id=VIEWER)
        pending = await stack.command(f"pending {WORK_NS}", user_id=VIEWER)

        assert "[starved]" in starved.text.split("[starved]:")[0]
        assert "[starved]" not in running.text.split("[starved]:")[0]
        # The scenario holds one running group with a stale condition already; the gang that
        # now runs is one more where KAI leaves its conditions.
        left_out = 1 if release == "v0.17" else 2
        assert f"0 pending · {left_out} left out: their pods all run" in pending.text


@pytest.mark.parametrize("release", RELEASES)
async def test_a_completing_gang_gets_no_eviction_notice_and_a_stale_gang_does(
    tmp_path: Path, release: str
) -> None:
    async with running_stack(
        tmp_path, kai_release=release, config_overrides=notices_on(tmp_path)
    ) as stack:
        evicted = kai_scheduler.gang_completing(stack.sim, "sweep-final", pods=3)
        kai_scheduler.stale_gang(stack.sim, "sweep-broken", pods=3)
        await stack.slack.wait_for_messages(TEAMS, count=2, timeout=WAIT)
        # The stale gang's Events were read after the completing gang's: once their notices
        # are out and the state owes Slack nothing more, whatever was owed for any is posted.
        await wait_until(lambda: owes_nothing(stack), WAIT, "every notice owed posted")
        notices = stack.slack.root_messages(TEAMS)

        assert evicted is (release in ("v0.16", "v0.17"))  # KAI #1968 on those releases
        assert [n.text.splitlines()[0] for n in notices] == [
            f"KAI evicted as a stale gang {WORK_NS}/pg-sweep-broken on sim"
        ] * 2
        assert not any("sweep-final" in m.text for m in stack.slack.messages(TEAMS))
        assert len(notices) == 2
