"""A KAI scheduler that stalls while Running and Ready (KAI #1536), as the cluster shows it.

kai-config deleted and recreated garbage-collects the operands' ServiceAccounts; the shard's
scheduler Deployment (owned by the shard) is not restarted and keeps a token of the deleted
account, so every call it makes gets 401 Unauthorized, its leader election's included, for
about 48 minutes; KAI before v0.17 keeps running and Ready all the while (v0.17 exits, #1817).
Nothing is scheduled, and nothing is written: the leader Lease is not renewed, the pending
groups get no scheduling condition and no Event.

`scheduler_lease` writes the Lease as the scheduler's leader election does (client-go
tools/leaderelection/resourcelock/leaselock.go `LeaderElectionRecordToLeaseSpec`, with KAI's
cmd/scheduler/app/server.go: named `--scheduler-name` (or `<name>-<partition>`) in
`--namespace`, holder `<hostname>_<uuid>`, 15 s); the cluster tier creates it the same way.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from testbed.sim.scheduling_writes import PODGROUP, WORK_NS, pending_group
from testbed.sim.simulator import Simulator

KAI_NS = "kai-scheduler"
LEASE_API = "coordination.k8s.io/v1"
SCHEDULER = "kai-scheduler"  # kai-config's global.schedulerName: the default shard's Lease
DEPLOYMENT = "kai-scheduler-default"
# On the scheduler's Deployment while it is stalled: the live scheduler (`testbed.sim.
# kai_scheduler.cycle`) writes nothing then, as the stalled one does not.
STALLED = "sim.kai-chatops/stalled"
# The leader's hostname is its pod's name (the scenario's scheduler pod), then a UUID.
HOLDER = "kai-scheduler-default-5b4c7d8f6-w4n6b_7c9e6679-7425-40de-944b-e07fc1f90ae7"
STALLED_FOR = timedelta(minutes=10)  # past the default alerts.stall_after (5m), as `starve` does
STALLED_GROUP = "pg-bert-pretrain-h5n2c-4d1a7b9e-2c3f-4e5a-8b6c-9d0e1f2a3b4c"


def scheduler_lease(
    holder: str, renewed: datetime, acquired: datetime | None = None
) -> dict[str, Any]:
    """The default shard's leader Lease, last renewed at `renewed`."""
    return {
        "apiVersion": LEASE_API,
        "kind": "Lease",
        "metadata": {"name": SCHEDULER, "namespace": KAI_NS},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 15,
            "acquireTime": _micro(acquired or renewed),
            "renewTime": _micro(renewed),
            "leaseTransitions": 0,
        },
    }


def scheduler_stall(sim: Simulator) -> None:
    """KAI #1536: the default shard's scheduler stalls, Running and Ready (Lease left 10m)."""
    now = sim.store.clock()
    last = now - STALLED_FOR
    two = {"replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2}
    # More than one replica: the operator turns leader election on (resources_for_shard.go).
    stalled = {"metadata": {"annotations": {STALLED: "true"}}, "spec": {"replicas": 2}}
    stored = sim.patch("apps/v1", "Deployment", DEPLOYMENT, KAI_NS, patch=stalled)
    two["observedGeneration"] = stored["metadata"].get("generation", 1)
    sim.patch_status("apps/v1", "Deployment", DEPLOYMENT, KAI_NS, two)
    sim.apply(scheduler_lease(HOLDER, last, acquired=last - timedelta(hours=3)))
    # A gang submitted since, which the scheduler never looks at: no condition, no Event.
    waiting = pending_group(STALLED_GROUP, "annia", 4, 4, "", "", {}, now)
    del waiting["status"]["schedulingConditions"]
    sim.apply(waiting)


def heal_stall(sim: Simulator) -> None:
    """The Lease and the untouched gang gone (the Deployment is healed with KAI's objects)."""
    sim.delete(LEASE_API, "Lease", SCHEDULER, KAI_NS)
    sim.delete(PODGROUP, "PodGroup", STALLED_GROUP, WORK_NS)


def _micro(moment: datetime) -> str:
    """A MicroTime, as a Lease's times are written (RFC 3339, microseconds)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
