"""Availability of a DaemonSet the KAI operator owns (KAI v0.16's NUMA placement exporter).

KAI's own test (KAI-Scheduler pkg/operator/operands/common/common.go `isControllerAvailable`,
v0.16.0 and later): a DaemonSet counts as available when `status.desiredNumberScheduled` equals
`status.numberAvailable`, so one with no node to run on (0 of 0) is available too. The
operator's `Available` message then names it `DaemonSet [<name>] is not available`. Pure: no I/O.
"""

from __future__ import annotations

from bot.core import conditions
from bot.core.models import Health, RawObject


def assess_daemonset(daemonset: RawObject) -> conditions.Assessment:
    """Healthy when every node it should run on has an available pod, as KAI counts it (KAI's
    rule alone, as for its operand Deployments); else Degraded."""
    status = conditions.status(daemonset)
    desired = conditions.as_int(status.get("desiredNumberScheduled")) or 0
    available = conditions.as_int(status.get("numberAvailable")) or 0
    counts = f"{available} of {desired} nodes' pods available"
    if desired != available:
        return conditions.Assessment(
            Health.DEGRADED,
            f"not available ({counts}): KAI counts a DaemonSet available only when every node "
            "it should run on has an available pod",
        )
    if desired == 0:
        return conditions.Assessment(Health.HEALTHY, "available (no node to run on)")
    return conditions.Assessment(Health.HEALTHY, f"available ({counts})")
