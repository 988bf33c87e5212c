"""A cluster's first check through the watched copies (`bot.kube.informer`): each collection
it reads is listed once, by its copy, and the check reads that list (at a start a fleet's
checks listed every collection twice, once for the copy and once for themselves)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import sim_gateway

from bot.health.usecase import read_snapshot
from bot.kube.informer import CachedKube
from testbed.sim import Simulator

APISERVICE = "v1beta1.external.metrics.k8s.io"


async def test_a_first_check_reads_each_collection_from_its_copys_first_list(
    tmp_path: Path,
) -> None:
    async with Simulator(scenarios=["default"]) as sim:
        gateway = sim_gateway.connect(sim, tmp_path, timeout=5.0, retries=0)
        reads = CachedKube(gateway)
        try:
            snapshot = await read_snapshot(reads, "kai-scheduler", APISERVICE, whole=False)

            assert snapshot.kai_config is not None
            followed = {c.ref.plural for c in reads.followed}
            assert len(followed) == 4  # the Config, the shards, the Deployments, the APIService
            asked = Counter((r.resource, r.verb) for r in sim.requests if r.resource in followed)
            assert {verb for _, verb in asked} <= {"list", "watch"}, asked  # no get
            assert all(asked[(kind, "list")] == 1 for kind in followed), asked
        finally:
            await reads.close()
            await gateway.close_streams()
            gateway.close()
