"""What the benchmarks share: percentiles, goals, starting processes, waiting for readiness, ports.

`record` hands a figure with its goal to `bench/run_all.py`, which prints one table of them all
at the end of `make bench`; a bench run on its own prints its figures and records nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

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


FIGURES = "KAI_BENCH_FIGURES"  # the file run_all.py collects figures in, one JSON line each


def record(figure: str, value: float, limit: float | None, unit: str = "") -> None:
    """Note `figure` against its goal `value <= limit` (None: no goal of its own) for the table
    run_all.py prints."""
    unit = f" {unit}" if unit else ""
    goal_text = "" if limit is None else f"<= {limit:g}{unit}"
    record_text(figure, goal_text, f"{value:g}{unit}", None if limit is None else value <= limit)


def record_text(figure: str, goal: str, measured: str, met: bool | None) -> None:
    """Note a figure for run_all.py's table, when run_all.py runs this bench (else nothing)."""
    path = os.environ.get(FIGURES)
    if path:
        row = {"figure": figure, "goal": goal, "measured": measured, "met": met}
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")


def compile_product() -> None:
    """Compile bot/ and handlers/ to bytecode, as installing the wheel does (pip compiles at
    install, so the image starts from .pyc). An editable install run with
    PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module from source at every start,
    which is not what users run (about 0.4 s more for `serve`)."""
    root = Path(__file__).resolve().parent.parent
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(root / "bot"), str(root / "handlers")],
        check=True,
    )


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds a process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime, stime in clock ticks (USER_HZ)


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
