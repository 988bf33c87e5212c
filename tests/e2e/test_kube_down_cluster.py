"""A cluster that is down, read through the watched copies (`bot.kube.informer`): it costs one
probe at a time, its checks fail at once without asking it again, and it is followed again as
soon as it answers."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import sim_gateway
from waiting import wait_until

from bot.core import errors
from bot.health.usecase import read_snapshot
from bot.kube.informer import CachedKube
from testbed.sim import Simulator

APISERVICE = "v1beta1.external.metrics.k8s.io"
BACKOFF = 0.2  # seconds between two probes of a cluster that is down (a minute in service)


async def test_a_cluster_that_is_down_is_probed_one_list_at_a_time_and_read_never(
    tmp_path: Path,
) -> None:
    async with Simulator(scenarios=["default"]) as sim:
        gateway = sim_gateway.connect(sim, tmp_path, timeout=2.0, retries=0)
        reads = CachedKube(gateway, retry_first=BACKOFF, retry_longest=BACKOFF)
        checked = lambda: read_snapshot(reads, "kai-scheduler", APISERVICE, whole=False)  # noqa: E731
        try:
            await checked()  # from the API, and each collection read is followed from now on
            await wait_until(lambda: reads.at_rest, 10, "every collection listed")
            assert len(reads.followed) == 4
            await wait_until(lambda: sim.open_watches == 4, 10, "every collection watched")

            await sim.stop()
            await wait_until(lambda: reads.reach.down, 10, "the cluster found down")
            before, started = gateway.request_count, time.monotonic()
            for _ in range(20):  # a check every interval: each fails at once, asking nothing
                with pytest.raises(errors.KubeUnavailable, match="cannot reach the API server"):
                    await checked()
            assert gateway.request_count == before

            # Four collections, probing one at a time: five probes take four backoffs at least
            # (each probing alone would make five in the first backoff).
            await wait_until(lambda: gateway.request_count >= before + 5, 10, "five probes")
            assert time.monotonic() - started >= 4 * BACKOFF

            await sim.start()
            await wait_until(lambda: reads.at_rest and not reads.reach.down, 10, "followed again")
            snapshot = await checked()
            assert snapshot.kai_config is not None
        finally:
            await reads.close()
            await gateway.close_streams()
            gateway.close()
