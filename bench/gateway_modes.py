"""Bench: the sync client on a thread pool (as in bot/kube/gateway.py) vs kubernetes.aio.

Both read `kai-config` from the simulator (in its own process) N times with C at once, and the
bench prints wall time, requests per second and the CPU the client process spent.

    .venv/bin/python bench/gateway_modes.py [--requests 1000] [--concurrency 50]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from kubernetes.aio import client as aio_client

from bot.config.settings import ClusterSettings, KubernetesSettings
from bot.kube import gateway as kube
from bot.kube import kinds


async def start_simulator(kubeconfig: str) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "testbed.sim",
        "--kubeconfig",
        kubeconfig,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdout is not None
    first = (await process.stdout.readline()).decode()
    return process, first.rsplit(" ", 1)[-1].strip()


async def measure(name: str, total: int, concurrency: int, fetch: object) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            await fetch()  # type: ignore[operator]

    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(total)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"  {name:<34} {wall:6.2f} s wall  {total / wall:7.0f} req/s  {cpu:6.2f} s CPU")


async def main(total: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        kubeconfig = str(Path(workdir) / "kubeconfig")
        sim, url = await start_simulator(kubeconfig)
        try:
            cluster = ClusterSettings(name="sim", kubeconfig=kubeconfig, context="sim")
            settings = KubernetesSettings(request_timeout=timedelta(seconds=10), retries=0)
            gateway = kube.connect(cluster, settings)
            aio_api = aio_client.ApiClient(aio_client.Configuration(host=url))
            custom = aio_client.CustomObjectsApi(aio_api)
            print(f"{total} GETs of kai-config, {concurrency} at a time, simulator {url}")
            await measure(
                "sync client on a thread pool",
                total,
                concurrency,
                lambda: gateway.get_object(kinds.KAI_CONFIG, "kai-config"),
            )
            await measure(
                "kubernetes.aio (asyncio, aiohttp)",
                total,
                concurrency,
                lambda: custom.get_cluster_custom_object(
                    "kai.scheduler", "v1", "configs", "kai-config"
                ),
            )
            gateway.close()
            await aio_api.close()
        finally:
            sim.terminate()
            await sim.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=50)
    args = parser.parse_args()
    asyncio.run(main(args.requests, args.concurrency))
