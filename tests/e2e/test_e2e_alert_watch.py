"""Alerts that follow the cluster by watch (`bot.kube.informer`, `jobs_alerts.WatchedChecks`): a
condition written is paged `hold` after it, not at the next check an hour later; a check with
nothing changed asks the API server nothing; a watch that ends, expires (410) or is forbidden
(403) falls back (watched again, listed again, read at each check) and still pages. The timed
pause sweeps list hourly, and at once where the change journal tells of a change.

The interval is an hour, so only the watches (and the hold running out) can bring a check; the
scheduled check is run once by the test to start following, as the first interval would.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from alert_stack import roots
from clocks import Clock
from waiting import wait_until

from bot.access.audit import Change
from bot.alerts.render import format_time
from bot.rules import keda
from bot.service import jobs_alerts, jobs_timed
from testbed.sim import breakage
from testbed.stack import CLUSTER, Stack, running_stack

HOLD = 2.0
PAGED_WITHIN = 30.0  # a generous deadline for a loaded machine: the interval is an hour
WATCHED_KINDS = {"configs", "schedulingshards", "deployments", "apiservices", "queues", "podgroups"}


def overrides(tmp_path: Path, **alerts: object) -> dict[str, object]:
    return {
        "alerts": {
            "hold": f"{HOLD:.0f}s",
            "interval": "1h",
            "repeat": "4h",
            "starved_after": "30m",
            **alerts,
        },
        "state": {"path": str(tmp_path / "state.sqlite")},
    }


def checks_of(stack: Stack) -> jobs_alerts.WatchedChecks:
    """The running scheduler's alert check of the cluster."""
    (job,) = [j for j in stack.service.schedule.jobs if j.name == f"alerts-{CLUSTER}"]
    assert isinstance(job.run, jobs_alerts.WatchedChecks)
    return job.run


def reads(stack: Stack) -> list[tuple[str, str]]:
    """The gets and lists the simulator answered (the Lease's aside)."""
    return [
        (r.resource, r.verb)
        for r in stack.sim.requests
        if r.verb in ("get", "list") and r.resource != "leases"
    ]


# What the diagnosis under a new page reads from the API on purpose (fresh, not the copy): the
# Config, the shards and the Deployments. A collection listed again for want of its watch is
# any other list of what the checks follow.
DIAGNOSIS_LISTS = {"schedulingshards", "deployments"}


def relists(stack: Stack) -> list[str]:
    """The followed collections listed since the requests were cleared, the diagnosis's aside
    (it runs right after the root is posted, racing the test's look)."""
    return [
        resource
        for resource, verb in reads(stack)
        if verb == "list" and resource in WATCHED_KINDS - DIAGNOSIS_LISTS
    ]


@asynccontextmanager
async def watched(tmp_path: Path, *, gpu_nodes: bool = False) -> AsyncIterator[Stack]:
    """A stack whose alert check has run once (so it follows what it reads), every followed
    collection listed and watched; the Nodes too with `alerts.gpu_nodes`, and only then."""
    config = overrides(tmp_path, gpu_nodes=gpu_nodes)
    async with running_stack(
        tmp_path, config_overrides=config, slack_backoffs=(0.0, 0.0, 0.0)
    ) as stack:
        checks = checks_of(stack)
        await checks.check()
        assert checks.reads is not None
        followed = checks.reads.followed
        assert {c.ref.plural for c in followed} >= WATCHED_KINDS
        assert ("nodes" in {c.ref.plural for c in followed}) is gpu_nodes
        # No alert rests on the CRDs: a fleet's checks follow none (`/kai health` reads them).
        assert "customresourcedefinitions" not in {c.ref.plural for c in followed}
        await wait_until(lambda: all(c.current for c in followed), 10, "every copy current")
        assert roots(stack) == []
        yield stack


async def paged(stack: Stack) -> float:
    """Seconds from now until the root of a new alert is in the channel."""
    start = time.monotonic()
    await wait_until(lambda: roots(stack), PAGED_WITHIN, "the root")
    return time.monotonic() - start


async def test_a_condition_written_is_paged_a_hold_later_without_waiting_for_the_interval(
    tmp_path: Path,
) -> None:
    async with watched(tmp_path) as stack:
        breakage.dependencies_missing(stack.sim)
        waited = await paged(stack)

        (root,) = roots(stack)
        assert "DependenciesFulfilled" in root.text
        assert waited >= HOLD  # the hold is kept: never paged before it ran out


async def test_checks_with_nothing_changed_ask_the_api_server_nothing(tmp_path: Path) -> None:
    async with watched(tmp_path) as stack:
        checks = checks_of(stack)
        stack.sim.clear_requests()
        for _ in range(3):  # three intervals' checks
            await checks.check()

        assert reads(stack) == []
        assert roots(stack) == []
        # Nor does it keep the connections its first reads opened idle (the Lease's one aside):
        # a fleet's idle sockets cost tens of megabytes.
        assert idle_connections(stack) <= 1


async def test_with_gpu_nodes_a_lost_gpu_is_paged_a_hold_later_and_checks_at_rest_ask_nothing(
    tmp_path: Path,
) -> None:
    async with watched(tmp_path, gpu_nodes=True) as stack:
        checks = checks_of(stack)
        stack.sim.clear_requests()
        for _ in range(3):
            await checks.check()
        assert reads(stack) == []

        breakage.ACTIONS["gpu_lost"](stack.sim, "gpu-node-2")
        waited = await paged(stack)

        (root,) = roots(stack)
        assert "GPU node gpu-node-2: 1 of 8 GPUs lost" in root.text
        assert waited >= HOLD
        # Seen by its watch, not listed again (the evidence under the page gets the node).
        assert ("nodes", "list") not in reads(stack)


def idle_connections(stack: Stack) -> int:
    """The keep-alive connections the cluster's gateway holds idle (urllib3's pool queue holds
    None for a connection not made)."""
    pools = stack.service.deps.kube[CLUSTER]._api.rest_client.pool_manager.pools  # type: ignore[attr-defined]
    keys = pools.keys()  # urllib3 RecentlyUsedContainer: no iteration, keys() only
    return sum(1 for key in keys for c in pools[key].pool.queue if c is not None)


async def test_watches_ended_by_the_server_are_watched_again_and_still_page(
    tmp_path: Path,
) -> None:
    async with watched(tmp_path) as stack:
        stack.sim.clear_requests()
        stack.sim.end_watches()
        breakage.operator_down(stack.sim)
        await paged(stack)

        assert relists(stack) == []  # watched again from where each stream ended: nothing listed


async def test_a_watch_expired_with_410_lists_again_and_still_pages(tmp_path: Path) -> None:
    async with watched(tmp_path) as stack:
        checks = checks_of(stack)
        assert checks.reads is not None
        stack.sim.clear_requests()
        stack.sim.faults.add(410, verb="watch", resource="configs", times=1)
        stack.sim.end_watches()
        await wait_until(lambda: ("configs", "list") in reads(stack), 10, "the Configs listed")
        breakage.dependencies_missing(stack.sim)
        await paged(stack)


async def test_where_watch_is_forbidden_each_check_reads_the_api_and_still_pages(
    tmp_path: Path,
) -> None:
    async with running_stack(
        tmp_path, config_overrides=overrides(tmp_path), slack_backoffs=(0.0, 0.0, 0.0)
    ) as stack:
        stack.sim.faults.add(403, verb="watch", times=None)
        checks = checks_of(stack)
        await checks.check()
        assert checks.reads is not None
        followed = checks.reads.followed
        await wait_until(lambda: stack.sim.faults.active[0].hits >= len(followed), 10, "403s")
        assert not any(c.current for c in followed)
        stack.sim.clear_requests()
        await checks.check()  # nothing is wrong: nothing posted (read from the API)
        assert ("configs", "get") in reads(stack)
        assert roots(stack) == []

        breakage.dependencies_missing(stack.sim)
        await checks.check()  # the interval's check: the hold running out brings the next
        await paged(stack)


async def test_timed_change_ticks_ask_nothing_and_a_pause_another_replica_made_is_swept_at_once(
    tmp_path: Path,
) -> None:
    """Between the hourly sweeps the fleet's timed-change tick asks the API server nothing;
    a pause with an end made through another replica (its annotations on the object, its entry
    in the shared change journal) has its cluster swept at the next look at the journal, which
    then knows when to resume it."""
    async with running_stack(tmp_path, config_overrides=overrides(tmp_path)) as stack:
        deps = stack.service.deps
        expiries = [
            jobs_timed.PauseExpiry(CLUSTER, first_sweep_after=timedelta(0)),
            jobs_timed.PauseExpiry(
                CLUSTER, first_sweep_after=timedelta(0), sweep=jobs_timed.sweep_suspends
            ),
        ]
        ticking = jobs_timed.TimedChanges(expiries, look_every=timedelta(0))
        try:
            await ticking(deps)  # the first sweeps (from the start, then hourly)
            await wait_until(lambda: not ticking.sweeping, 10, "the first sweeps done")
            stack.sim.clear_requests()
            for _ in range(5):
                await ticking(deps)
            assert reads(stack) == []

            until = (deps.clock() + timedelta(hours=1)).replace(microsecond=0)
            worker = stack.sim.get("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia")
            assert worker is not None
            worker["metadata"].setdefault("annotations", {}).update(
                {
                    keda.PAUSED: "true",
                    keda.PAUSED_BY: "U0SOMEONE",
                    keda.PAUSE_UNTIL: until.strftime("%Y-%m-%dT%H:%M:%SZ"),
                }
            )
            stack.sim.apply(worker)
            await ticking(deps)
            assert not ticking.sweeping  # written by hand, untold: the hourly sweep finds it

            target = f"ScaledJob annia/annia-worker on {CLUSTER}"
            await deps.journal.add(Change("U0SOMEONE", "pause", target, "ok", deps.clock()))
            await ticking(deps)
            await wait_until(lambda: expiries[0].next_due == until, 10, "the pause's end known")
        finally:
            await ticking.close()


async def test_an_object_of_megabytes_is_followed_like_any_other(tmp_path: Path) -> None:
    """One watch event carries a whole object; a big one (a CRD's schema, a long annotation)
    is read whole, and the changes after it still page."""
    async with watched(tmp_path) as stack:
        config = stack.sim.get("kai.scheduler/v1", "Config", "kai-config")
        assert config is not None
        config["metadata"].setdefault("annotations", {})["example.com/notes"] = "x" * 2_000_000
        stack.sim.clear_requests()
        stack.sim.apply(config)
        breakage.dependencies_missing(stack.sim)
        await paged(stack)

        assert relists(stack) == []  # by the watch alone: never a list again for want of it


@pytest.mark.clock_from_now
async def test_a_cause_there_at_the_start_is_paged_a_hold_after_it_not_an_interval_later(
    tmp_path: Path, clock: Clock
) -> None:
    """The service starts with kai-config's dependencies already unfulfilled. Its clock stands
    still but where the test moves it, and the interval is an hour: the first check comes at
    once (a fleet's first checks are spread over a few seconds, not over the interval), sees
    the cause at the start, and the page follows when the hold has run out on the service's
    clock."""
    async with running_stack(
        tmp_path,
        clock=clock,
        monotonic=clock.monotonic,
        config_overrides=overrides(tmp_path),
        slack_backoffs=(0.0, 0.0, 0.0),
        first_checks_after=timedelta(0),  # the service's own start, not the test bed's
    ) as stack:
        breakage.dependencies_missing(stack.sim)
        await stack.restart_service()
        started = clock()
        pending = f"pending: fires at {format_time(started + timedelta(seconds=HOLD))}"

        async def listed_pending() -> bool:  # a check counts as run when it starts, not saves
            return pending in (await stack.command("alerts")).text

        await wait_until(listed_pending, PAGED_WITHIN, "the first check's alert", every=0.2)
        assert roots(stack) == []  # the hold is kept

        clock.advance(HOLD)
        await paged(stack)  # the hold running out wakes the check: no interval waited for
        (root,) = roots(stack)
        assert f"firing since {format_time(started + timedelta(seconds=HOLD))}" in str(root.blocks)
