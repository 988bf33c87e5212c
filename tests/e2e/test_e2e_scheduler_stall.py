"""The scheduler stall alert end to end (docs/design.md §2 "Scheduler stall"): a shard scheduler
that is Running and Ready but has stopped (KAI #1536) pages once, naming its Lease holder and
how long ago it renewed, its diagnosis led by the same lines; it resolves when the scheduler
renews again. With one replica (no Lease) the pending PodGroups it stopped touching say it. The
Leases and Events it reads wake no check; the check looks again when a Lease would be too old.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta
from pathlib import Path

from alert_stack import HOLD, alert_stack, assert_one_clean_incident, check, roots, thread, words
from clocks import Clock
from waiting import wait_until

from bot.kube.copies import Copy
from bot.service import jobs_alerts
from testbed.sim import breakage, evictions, kai_scheduler
from testbed.sim.kai_stall import HOLDER, STALLED_FOR, scheduler_lease
from testbed.sim.objects import timestamp
from testbed.sim.scheduling_writes import group_event
from testbed.stack import CLUSTER, Stack, running_stack

STALLING = {"hold": f"{HOLD}s", "interval": "1h", "repeat": "4h", "stall_after": "5m"}
LEADER = HOLDER.rpartition("_")[0]
SUBJECT = "Deployment kai-scheduler/kai-scheduler-default"


def at_sim_now(stack: Stack, clock: Clock) -> datetime:
    """The service's clock moved to the simulator's now (the times it stamps)."""
    clock.advance((stack.sim.store.clock() - clock.now).total_seconds())
    return clock.now


async def test_a_lease_left_to_age_pages_once_naming_its_holder_and_resolves_when_renewed(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock, alerts=STALLING) as (stack, _):
        breakage.ACTIONS["scheduler_stall"](stack.sim)  # last renewed 10 minutes ago
        now = at_sim_now(stack, clock)
        await check(stack.service)  # no `hold`: the 5 minutes waited were the hold

        [root] = roots(stack)
        assert root.text.startswith(
            f"[CRITICAL] sim: {SUBJECT} Stalled: KAI scheduler kai-scheduler-default "
            f"stalled: {LEADER} has not renewed its Lease for 10m"
        ), root.text
        renewed = (now - STALLED_FOR).strftime("%Y-%m-%d %H:%M:%S UTC")
        lease_line = f"Lease kai-scheduler/kai-scheduler held by {HOLDER}, last renewed {renewed}"
        assert lease_line in words(root)
        assert "2 of 2 pod(s) of Deployment kai-scheduler/kai-scheduler-default report Ready" in (
            words(root)
        )
        [diagnosis, changes] = thread(stack, root)
        assert changes.text.startswith(f"What changed on {CLUSTER} in the hour before")
        shown = words(diagnosis)
        assert diagnosis.text.startswith(
            f"Diagnosis of kai-scheduler/kai-scheduler-default on {CLUSTER}"
        )
        assert f"{SUBJECT} has stopped scheduling (LeaseNotRenewed)" in shown, shown
        assert lease_line in shown  # the diagnosis names the holder and its last renewal

        stack.sim.apply(scheduler_lease(HOLDER, clock.now))  # the scheduler renews again
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)

        assert thread(stack, root)[-1].text.startswith(":white_check_mark: Resolved at")
        assert_one_clean_incident(stack)


async def test_with_one_replica_the_pending_groups_it_stopped_touching_say_it(
    tmp_path: Path,
) -> None:
    """No leader election, no Lease: new jobs wait, and the scheduler writes neither a
    condition nor an Event about any of them for 6 minutes (client-go may hold a repeated
    Event back 5)."""
    clock = Clock()
    async with alert_stack(tmp_path, clock, alerts=STALLING) as (stack, _):
        breakage.ACTIONS["gpu_quota_exhausted"](stack.sim)  # two groups, written at the sim's now
        at_sim_now(stack, clock)
        await check(stack.service)
        clock.advance(timedelta(minutes=5, seconds=59).total_seconds())
        await check(stack.service)
        assert roots(stack) == []  # an Event may be 5 minutes late: not silent yet

        clock.advance(1)
        await check(stack.service)

        [root] = roots(stack)
        assert "stalled: 2 pending PodGroups untouched for 6m" in root.text, root.text
        assert "No Lease to read: with 1 replica the scheduler runs no leader election" in (
            words(root)
        )
        group = stack.sim.get("scheduling.run.ai/v2alpha2", "PodGroup", GROUP, "annia")
        assert group is not None
        stack.sim.apply(group_event(group, clock.now))  # counted up: it looks again
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)
        assert thread(stack, root)[-1].text.startswith(":white_check_mark: Resolved at")


GROUP = "pg-annia-worker-9k4mz-5c2e8a41-6f1d-4a9b-8e27-0c3b5d7a9e11"


async def test_a_scheduler_with_no_ready_pod_gets_its_deployments_alert_not_a_stall(
    tmp_path: Path,
) -> None:
    """Untouched groups under a scheduler that is down: the Deployment's own alert says it,
    once; the stall is for a scheduler whose pods report Ready."""
    clock = Clock()
    async with alert_stack(tmp_path, clock, alerts=STALLING) as (stack, _):
        breakage.ACTIONS["gpu_quota_exhausted"](stack.sim)
        breakage.ACTIONS["scheduler_down"](stack.sim)
        at_sim_now(stack, clock)
        await check(stack.service)
        clock.advance(timedelta(minutes=7).total_seconds())
        await check(stack.service)

        [root] = roots(stack)
        assert root.text.startswith(f"[CRITICAL] sim: {SUBJECT} Available: "), root.text


# Each renewal is stamped this long before now, so the Lease is `stall_after` (15 s) old 5 s
# after the last one: the test waits 5 s of wall clock, not 15.
STAMPED_EARLY = timedelta(seconds=10)


async def renewed(stack: Stack, followed: Copy) -> None:
    """The scheduler renews its Lease; returns once the check's copy holds the renewal."""
    lease = scheduler_lease(HOLDER, stack.sim.store.clock() - STAMPED_EARLY)
    stack.sim.apply(lease)

    def seen() -> bool:
        kept = followed.get(("kai-scheduler", "kai-scheduler")) or {}
        return bool((kept.get("spec") or {}).get("renewTime") == lease["spec"]["renewTime"])

    await wait_until(seen, 5, "the renewal followed")


async def test_lease_renewals_wake_no_check_and_a_lease_left_to_age_is_paged_at_its_time(
    tmp_path: Path,
) -> None:
    """The service's own check, following the cluster by watch, the wall clock: renewals
    (every few seconds for KAI) run no check; once they stop, the check comes by itself when
    the Lease is `stall_after` old (15 s), not at the next interval (an hour)."""
    config = {
        "alerts": {"hold": "1s", "interval": "1h", "repeat": "4h", "stall_after": "15s"},
        "state": {"path": str(tmp_path / "state.sqlite")},
    }
    async with running_stack(tmp_path, config_overrides=config) as stack:
        breakage.ACTIONS["scheduler_stall"](stack.sim)
        renewing = stack.sim.store.clock() - STAMPED_EARLY
        stack.sim.apply(scheduler_lease(HOLDER, renewing))  # renewing, for now
        (job,) = [j for j in stack.service.schedule.jobs if j.name == f"alerts-{CLUSTER}"]
        checks = job.run
        assert isinstance(checks, jobs_alerts.WatchedChecks)
        await checks.check()
        assert checks.reads is not None
        await wait_until(lambda: all(c.current for c in checks.reads.followed), 10, "followed")
        [copy] = [c for c in checks.reads.followed if c.ref.plural == "leases"]
        runs = checks.runs
        for _ in range(3):
            await renewed(stack, copy)
        assert checks.runs == runs and roots(stack) == []

        stopped = time.monotonic()
        [root] = await wait_until(lambda: roots(stack), 20, "the stall paged")
        assert time.monotonic() - stopped >= 4.5  # at the Lease's age (5 s on), not before
        assert "has not renewed its Lease for" in root.text


async def test_a_reclaim_done_hours_ago_is_no_stall(tmp_path: Path) -> None:
    """A reclaim leaves both its groups running on what they asked for: nothing waits for a
    scheduler that says nothing more, so no stall is paged however long after (the simulator
    once left them waiting, and the soak paged a healthy scheduler at its end)."""
    clock = Clock()
    async with alert_stack(tmp_path, clock, alerts=STALLING) as (stack, _):
        evictions.reclaim(stack.sim)
        at_sim_now(stack, clock)
        await check(stack.service)
        clock.advance(timedelta(hours=1).total_seconds())
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)

        assert roots(stack) == []


async def test_a_live_scheduler_touches_what_waits_so_no_stall_is_paged(tmp_path: Path) -> None:
    """The demo's simulated scheduler is live (`kai_scheduler.cycle`): a group that waits
    gets its Unschedulable Event counted up every 5 minutes, as client-go lets it through, so
    a healthy scheduler is never paged as stalled however long the groups wait."""
    clock = Clock()
    async with alert_stack(tmp_path, clock, alerts=STALLING) as (stack, _):
        stack.sim.store.clock = clock  # its writes stamped with the test's time
        breakage.ACTIONS["gpu_quota_exhausted"](stack.sim)
        for _ in range(4):  # 20 minutes, a cycle every 5
            clock.advance(timedelta(minutes=5).total_seconds())
            assert len(kai_scheduler.cycle(stack.sim)) == 2
            await check(stack.service)
            assert kai_scheduler.cycle(stack.sim) == []  # touched: nothing more for 5 minutes
        clock.advance(HOLD)
        await check(stack.service)

        assert [m.text for m in roots(stack) if "Stalled" in m.text] == []


async def test_a_stalled_scheduler_touches_nothing_and_is_paged(tmp_path: Path) -> None:
    """KAI #1536's scheduler, Running and Ready, writes nothing: the live cycle neither."""
    clock = Clock()
    async with alert_stack(tmp_path, clock, alerts=STALLING) as (stack, _):
        breakage.ACTIONS["scheduler_stall"](stack.sim)
        at_sim_now(stack, clock)
        clock.advance(timedelta(minutes=7).total_seconds())
        stack.sim.store.clock = clock

        assert kai_scheduler.cycle(stack.sim) == []
        await check(stack.service)
        [root] = roots(stack)
        assert "stalled" in root.text, root.text


async def test_the_demos_scheduler_cycles_on_its_own(tmp_path: Path) -> None:
    """`run_live`, as the demo's stack runs it: the cycle comes round by itself."""
    clock = Clock()
    async with alert_stack(tmp_path, clock, alerts=STALLING) as (stack, _):
        stack.sim.store.clock = clock
        breakage.ACTIONS["gpu_quota_exhausted"](stack.sim)
        clock.advance(timedelta(minutes=6).total_seconds())
        live = asyncio.get_running_loop().create_task(kai_scheduler.run_live(stack.sim, 0.05))
        try:
            await wait_until(lambda: _counted_up(stack) == 2, 5, "both groups touched")
        finally:
            live.cancel()


def _counted_up(stack: Stack) -> int:
    events = stack.sim.store.list_objects(stack.sim.store.resolve("v1", "Event"), None)["items"]
    return sum(
        1
        for e in events
        if e["involvedObject"]["kind"] == "PodGroup"
        and e["reason"] == "Unschedulable"
        and e["lastTimestamp"] == timestamp(stack.sim.store.clock())
    )
