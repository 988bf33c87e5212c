"""The gateway's watch of one object, and `watch_until` over it (issue 15)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from waiting import wait_until

from bot.config.settings import ClusterSettings, KubernetesSettings
from bot.core import errors
from bot.kube import follow, kinds
from bot.kube import gateway as kube
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator

SJ = ("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia")


pytestmark = pytest.mark.sim(scenarios=["default"], bookmark_every=0.1)


@pytest.fixture
async def gateway(sim: Simulator, tmp_path: Path) -> AsyncIterator[KubeGateway]:
    kubeconfig = sim.write_kubeconfig(str(tmp_path / "kubeconfig"))
    settings = KubernetesSettings(timedelta(seconds=5), retries=0, threads=4)
    connected = kube.connect(ClusterSettings("sim", kubeconfig, "sim"), settings)
    yield connected
    await connected.close_streams()
    connected.close()


def is_paused(obj: object) -> bool:
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []  # type: ignore[attr-defined]
    return any(c["type"] == "Paused" and c["status"] == "True" for c in conditions)


async def paused_while_watched(
    sim: Simulator, gateway: KubeGateway, since: Any, *, open_before: int, idle: float = 0.0
) -> follow.Watched:
    """`watch_until` the ScaledJob is paused, KEDA pausing it `idle` seconds after the watch
    is open (one more than the `open_before` open already)."""

    async def keda_later() -> None:
        await wait_until(lambda: sim.open_watches == open_before + 1, 5, "the watch is open")
        await asyncio.sleep(idle)
        sim.set_condition(*SJ, "Paused", "True", "ScaledJobPaused", "paused")

    keda = asyncio.create_task(keda_later())
    watched = await follow.watch_until(
        gateway, kinds.SCALED_JOB, "annia-worker", "annia", is_paused,
        since=since, deadline=asyncio.get_running_loop().time() + 5,
    )  # fmt: skip
    await keda
    return watched


async def test_a_change_after_idle_bookmarks_still_ends_the_wait(
    sim: Simulator, gateway: KubeGateway
) -> None:
    since = await gateway.get_object(kinds.SCALED_JOB, "annia-worker", "annia")
    assert since is not None
    # KEDA takes its time: a few idle bookmark intervals pass.
    watched = await paused_while_watched(sim, gateway, since, open_before=0, idle=0.35)
    assert watched.done and watched.over and is_paused(watched.obj)


async def test_a_watch_from_a_compacted_version_is_expired(
    sim: Simulator, gateway: KubeGateway
) -> None:
    since = await gateway.get_object(kinds.SCALED_JOB, "annia-worker", "annia")
    assert since is not None
    for step in range(1001):  # more writes than the simulator keeps: `since` is compacted away
        sim.patch(*SJ, patch={"metadata": {"labels": {"step": str(step)}}})
    changes = gateway.watch_object(
        kinds.SCALED_JOB, "annia-worker", "annia",
        resource_version=since["metadata"]["resourceVersion"], seconds=2,
    )  # fmt: skip
    with pytest.raises(errors.KubeExpired):
        async for _ in changes:
            pass


async def test_open_watches_hold_no_client_thread_so_reads_and_another_watch_still_go_through(
    sim: Simulator, gateway: KubeGateway
) -> None:
    """Watches are read on the event loop (`bot.kube.watches`): with more of them open than the
    client has threads, a read still answers and one more watch still ends its wait."""
    since = await gateway.get_object(kinds.SCALED_JOB, "annia-worker", "annia")
    assert since is not None
    version = since["metadata"]["resourceVersion"]
    holding = [
        gateway.watch_object(
            kinds.SCALED_JOB, "annia-worker", "annia", resource_version=version, seconds=5
        )
        for _ in range(6)  # the gateway has 4 client threads
    ]
    held = [asyncio.create_task(anext(watch)) for watch in holding]
    try:
        await wait_until(lambda: sim.open_watches == 6, 5, "every watch open")
        read = await asyncio.wait_for(gateway.get_object(kinds.KAI_CONFIG, "kai-config"), 2)
        watched = await paused_while_watched(sim, gateway, since, open_before=6)
    finally:
        await asyncio.gather(*held, return_exceptions=True)
        for watch in holding:
            await watch.aclose()
    assert read is not None
    assert watched.done and watched.over
