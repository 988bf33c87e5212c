"""A Lease that cannot be used is said in the alert channel: never a silent gap in the checks.

Said once after a few failed renewals (not at the first blip), and its end is said too.
"""

from __future__ import annotations

from pathlib import Path

from bot.service import jobs_alerts
from testbed.stack import ALERT_CHANNEL, running_stack


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
