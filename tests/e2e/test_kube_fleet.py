"""A fleet of clusters in one service: one bounded set of threads, in two lanes (issue 15)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.config.settings import ClusterSettings, KubernetesSettings
from bot.core import errors
from bot.kube import gateway as kube
from bot.kube import kinds, lanes
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with Simulator(scenarios=["default"]) as running:
        yield running


def fleet(sim: Simulator, tmp_path: Path, size: int, threads: int) -> dict[str, KubeGateway]:
    """`size` clusters, each a context of one kubeconfig on the simulator."""
    names = [f"gpu-{i:03}" for i in range(size)]
    kubeconfig = sim.write_kubeconfig(
        str(tmp_path / "kubeconfig"), names[0], more_contexts=names[1:]
    )
    clusters = [ClusterSettings(n, kubeconfig, n) for n in names]
    settings = KubernetesSettings(timedelta(seconds=5), retries=0, threads=threads)
    return kube.connect_all(clusters, settings)


def client_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("kube")]


async def wait_until(check: object, what: str, deadline: float = 5.0) -> None:
    end = time.monotonic() + deadline
    while not check():  # type: ignore[operator]
        if time.monotonic() > end:
            raise TimeoutError(what)
        await asyncio.sleep(0.01)


async def test_forty_clusters_read_at_once_use_no_more_threads_than_configured(
    sim: Simulator, tmp_path: Path
) -> None:
    gateways = fleet(sim, tmp_path, size=40, threads=6)
    before = set(client_threads())
    try:
        answers = await asyncio.gather(
            *(g.get_object(kinds.KAI_CONFIG, "kai-config") for g in gateways.values())
        )
        grown = set(client_threads()) - before
    finally:
        next(iter(gateways.values())).close()
    assert [a["metadata"]["name"] for a in answers if a] == ["kai-config"] * 40
    assert 0 < len(grown) <= 6


async def test_a_command_does_not_wait_for_threads_held_by_scheduled_checks(
    sim: Simulator, tmp_path: Path
) -> None:
    gateways = fleet(sim, tmp_path, size=3, threads=4)  # two command threads, one scheduled
    hung = sim.faults.add(None, resource="configs", delay=0.5, times=2)
    slow, other, asked = gateways.values()
    try:
        with lanes.scheduled():
            checks = [
                asyncio.create_task(g.get_object(kinds.KAI_CONFIG, "kai-config"))
                for g in (slow, other)
            ]
        await wait_until(lambda: hung.hits >= 1, "a scheduled check holds its thread")
        answer = await asyncio.wait_for(asyncio.shield(asked.server_version()), timeout=0.4)
        checks_pending = not all(c.done() for c in checks)
        await asyncio.gather(*checks)
    finally:
        slow.close()
    assert answer
    assert checks_pending


async def test_a_missing_context_in_a_shared_kubeconfig_names_its_cluster(
    sim: Simulator, tmp_path: Path
) -> None:
    kubeconfig = sim.write_kubeconfig(str(tmp_path / "kubeconfig"), "a", more_contexts=["b"])
    clusters = [ClusterSettings(n, kubeconfig, n) for n in ("a", "b", "c")]
    with pytest.raises(errors.ConfigError) as raised:
        kube.connect_all(clusters, KubernetesSettings())
    assert raised.value.problems[0].startswith(f"clusters[c]: cannot load kubeconfig {kubeconfig}")
