"""A Lease that cannot be used is said in the alert channel: never a silent gap in the checks.

Said once after a few failed renewals (not at the first blip), and its end is said too. A
replica that no longer holds the Lease follows nothing.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from alert_stack import alert_stack, renew, take_over, two_replicas
from clocks import Clock
from waiting import wait_until

from bot.service import jobs_alerts
from bot.service.server import Service
from testbed.stack import ALERT_CHANNEL, CLUSTER, running_stack


async def test_a_forbidden_lease_is_reported_in_the_alert_channel_once(tmp_path: Path) -> None:
    # hold 0s: the all-clear follows the first renewal that works (no cool-down to wait out)
    shared_state = {"state": {"backend": "configmap"}, "alerts": {"hold": "0s"}}
    async with running_stack(tmp_path, config_overrides=shared_state) as stack:
        stack.sim.faults.add(403, resource="leases", times=None)
        deps = stack.service.deps
        for _ in range(5):
            await jobs_alerts.keep_lease(deps)
        [warning] = await stack.slack.wait_for_messages(ALERT_CHANNEL)
        assert deps.lease is not None and not deps.lease.is_leader()

        stack.sim.faults.clear()
        await jobs_alerts.keep_lease(deps)
        [_, recovered] = await stack.slack.wait_for_messages(ALERT_CHANNEL, count=2)
    assert "cannot use its Lease kai-chatops/kai-chatops-alerts" in warning.text
    assert "no replica may be running the alert checks" in warning.text
    assert recovered.text.startswith(":white_check_mark: kai-chatops can use its Lease")


def checks_on(service: Service) -> jobs_alerts.WatchedChecks:
    """A replica's scheduled alert check of the stack's cluster."""
    (job,) = [j for j in service.schedule.jobs if j.name == f"alerts-{CLUSTER}"]
    assert isinstance(job.run, jobs_alerts.WatchedChecks)
    return job.run


async def test_a_replica_that_lost_the_lease_lets_go_of_what_it_followed(tmp_path: Path) -> None:
    """A deposed holder kept every copy it had followed, and so a fleet's watches on every
    cluster, for checks it no longer made: two replicas' worth of watches and relists on one
    fleet. At its next interval it now lets them go, and follows again once it holds."""
    clock = Clock()
    shared = {"state": {"backend": "configmap"}, "lease": {"enabled": True, "duration": "15s"}}
    async with (
        alert_stack(tmp_path, clock, **shared) as (stack, _),
        two_replicas(stack) as (first, second),
    ):
        deposed = checks_on(first)
        await deposed.check()
        assert deposed.reads is not None
        followed = len(deposed.reads.followed)
        assert followed >= 4  # the Config, the shards, the Deployments, the APIService
        kinds = {c.ref.plural for c in deposed.reads.followed}
        copies = deposed.reads.followed
        await wait_until(
            lambda: all(c.current for c in copies) and stack.sim.open_watches >= followed,
            10,
            "every copy listed and watched",
        )
        await take_over(stack, clock, second)
        await renew(first)  # its Lease job finds another holder
        stack.sim.clear_requests()
        await deposed.check()

        assert deposed.reads is None

        def watches_ended() -> set[str]:  # the simulator logs a watch when it ends
            return {r.resource for r in stack.sim.requests if r.query.get("watch") == "true"}

        await wait_until(lambda: watches_ended() >= kinds, 10, "the deposed's watches to end")
        await take_over(stack, clock, first)
        await deposed.check()
        assert deposed.reads is not None and len(deposed.reads.followed) == followed


async def test_a_holder_whose_renewal_came_late_keeps_its_copies_and_checks_again_what_it_missed(
    tmp_path: Path,
) -> None:
    """Under a fleet-wide failure a busy holder's renewal came after its time to act ran out
    (two thirds of the Lease), though no one else took the Lease: it let go of every copy, so
    the whole fleet was listed again, and once it acted again every cluster was checked at
    once; both made it busier still (bench/fleet_ha.py). It keeps what it follows, and checks
    again only what came while it could not act."""
    clock = Clock()
    shared = {"state": {"backend": "configmap"}, "lease": {"enabled": True, "duration": "15s"}}
    async with (
        alert_stack(tmp_path, clock, **shared) as (stack, _),
        two_replicas(stack) as (holder, _),
    ):
        deps = holder.deps
        assert deps.lease is not None
        missed, quiet = (
            jobs_alerts.WatchedChecks(deps, CLUSTER),
            jobs_alerts.WatchedChecks(deps, CLUSTER),
        )
        try:
            for checks in (missed, quiet):
                await checks.check()
            assert missed.reads is not None
            copies = missed.reads.followed
            await wait_until(lambda: all(c.current for c in copies), 10, "every copy listed")
            clock.advance(11)  # its renewal is late: it may not act, and still holds the Lease
            assert not deps.lease.is_leader()
            stack.sim.clear_requests()
            await missed.check()  # its interval's check comes meanwhile

            assert missed.reads is not None and missed.reads.followed == copies
            assert missed.missed and not quiet.missed
            runs = (missed.runs, quiet.runs)
            await jobs_alerts.LeaseJob([(missed, timedelta(0)), (quiet, timedelta(0))])(deps)
            await wait_until(
                lambda: missed.runs > runs[0] and not missed.missed, 10, "the missed one run again"
            )
            assert quiet.runs == runs[1] and quiet._task is None  # never woken
            listed = {r.resource for r in stack.sim.requests if r.verb == "list"}
            assert not listed & {c.ref.plural for c in copies}, listed
        finally:
            for checks in (missed, quiet):
                await checks.close()
