"""A Lease that cannot be used is said in the alert channel: never a silent gap in the checks.

Said once after a few failed renewals (not at the first blip), and its end is said too. A
replica that no longer holds the Lease follows nothing.
"""

from __future__ import annotations

from pathlib import Path

from alert_stack import alert_stack, take_over, two_replicas
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
        stack.sim.clear_requests()
        await deposed.check()

        assert deposed.reads is None

        def watches_ended() -> set[str]:  # the simulator logs a watch when it ends
            return {r.resource for r in stack.sim.requests if r.query.get("watch") == "true"}

        await wait_until(lambda: watches_ended() >= kinds, 10, "the deposed's watches to end")
        await take_over(stack, clock, first)
        await deposed.check()
        assert deposed.reads is not None and len(deposed.reads.followed) == followed
