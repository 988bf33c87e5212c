"""What the benchmarks share: percentiles, starting processes, waiting for readiness, ports."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time

import aiohttp

from testbed.stack import Stack


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def goal(label: str, value: float, limit: float, unit: str = "ms") -> str:
    """`label: VALUE UNIT (goal <= LIMIT UNIT: met)`, or MISSED; lower is better."""
    verdict = "met" if value <= limit else "MISSED"
    unit = f" {unit}" if unit else ""
    return f"{label}: {value:g}{unit} (goal <= {limit:g}{unit}: {verdict})"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def start_process(
    *args: str, env: dict[str, str] | None = None, stdin: bool = False
) -> asyncio.subprocess.Process:
    """`python ARGS` with our environment plus `env`; stdout piped, stderr discarded."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        env={**os.environ, **(env or {})},
        stdin=asyncio.subprocess.PIPE if stdin else None,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def wait_ready(url: str, deadline: float) -> None:
    """Poll `url` until it answers 200 (a process is starting: there is no event to wait on)."""
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            try:
                async with session.get(url) as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise TimeoutError(f"{url} not ready")


def grow_cluster(stack: Stack, shards: int, deployments: int) -> None:
    """More SchedulingShards and operand Deployments, to show a check's cost stays constant."""
    for i in range(shards):
        stack.sim.apply(
            {
                "apiVersion": "kai.scheduler/v1",
                "kind": "SchedulingShard",
                "metadata": {"name": f"shard-{i}"},
                "spec": {"partitionLabelValue": f"p{i}"},
            }
        )
    for i in range(deployments):
        stack.sim.apply(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": f"operand-{i}",
                    "namespace": "kai-scheduler",
                    "labels": {"app.kubernetes.io/managed-by": "kai-operator"},
                },
                "spec": {"replicas": 1},
            }
        )
