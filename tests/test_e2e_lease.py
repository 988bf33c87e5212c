"""A Lease that cannot be used is said in the alert channel: never a silent gap in the checks."""

from __future__ import annotations

from pathlib import Path

from bot.service import schedule
from bot.stack import ALERT_CHANNEL, running_stack


async def test_a_forbidden_lease_is_reported_in_the_alert_channel_once(tmp_path: Path) -> None:
    shared_state = {"state": {"backend": "configmap"}}
    async with running_stack(tmp_path, config_overrides=shared_state) as stack:
        stack.sim.faults.add(403, resource="leases", times=None)
        deps = stack.service.deps
        await schedule.keep_lease(deps)
        await schedule.keep_lease(deps)
        [warning] = await stack.slack.wait_for_messages(ALERT_CHANNEL)
        assert deps.lease is not None and not deps.lease.is_leader(deps.clock())
    assert "cannot use its Lease kai-chatops/kai-chatops-alerts" in warning.text
    assert "runs no alert checks" in warning.text
