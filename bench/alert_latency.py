"""Bench: alert detection latency, and the Kubernetes API requests one check cycle makes.

Time to page: the whole stack on loopback with `alerts.hold` and `alerts.interval` as given
(default 0 s and 1 s), the real scheduler running the checks; each round flips kai-config's
DependenciesFulfilled to False in the simulator at a random moment within an interval and times
until the root message is at the Slack emulator (goal, issue 26: p99 <= hold + 1 s), then heals
and waits for the resolution. The rounds begin once the cluster's first check has run (the
test bed's service begins its own checks after its first interval). Requests: one check cycle on the
default scenario and on a cluster grown by many shards and Deployments (goal: the same small
constant).

    .venv/bin/python bench/alert_latency.py [--rounds 40] [--hold 0] [--interval 1]
                                            [--shards 50] [--deployments 200]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from common import goal, grow_cluster, ms, percentile, record

from bot.service import jobs_alerts
from testbed.sim import breakage
from testbed.stack import ALERT_CHANNEL, CLUSTER, Stack, running_stack


def overrides(workdir: Path, interval: str, hold: str = "0s") -> dict[str, Any]:
    return {
        "alerts": {"hold": hold, "interval": interval},
        "state": {"path": str(workdir / "state.sqlite")},
    }


def is_resolved(stack: Stack, root_ts: str) -> bool:
    return stack.slack.message(ALERT_CHANNEL, root_ts).text.startswith("[RESOLVED")


async def wait_resolved(stack: Stack, root_ts: str, within: float) -> None:
    await stack.slack.wait_for(lambda: is_resolved(stack, root_ts), timeout=within)


async def detection(workdir: Path, rounds: int, hold: float, interval: float) -> list[float]:
    """Seconds from the flip in the simulator to the root message at the emulator, per round."""
    latencies = []
    settings = overrides(workdir, f"{interval:g}s", f"{hold:g}s")
    timeout = hold + interval + 30
    async with running_stack(workdir, config_overrides=settings) as stack:
        await following(stack)
        for round_number in range(1, rounds + 1):
            # Flip at a random point between two checks, as a real failure would.
            await asyncio.sleep(random.uniform(0.0, interval))
            flipped = time.perf_counter()
            breakage.dependencies_missing(stack.sim)
            posted = await stack.slack.wait_for_messages(
                ALERT_CHANNEL, count=round_number, timeout=timeout
            )
            latencies.append(time.perf_counter() - flipped)
            breakage.heal(stack.sim)
            await wait_resolved(stack, posted[-1].ts, timeout)
    return latencies


async def following(stack: Stack) -> None:
    """The service as it runs after its first check: the cluster's first check done (run
    here: the test bed's service begins its own after its first interval), every collection it
    reads followed. A cause already there when the service starts is seen at that first check."""
    (job,) = [j for j in stack.service.schedule.jobs if j.name == f"alerts-{CLUSTER}"]
    assert isinstance(job.run, jobs_alerts.WatchedChecks)
    await job.run.check()
    deadline = time.monotonic() + 30
    while job.run.reads is None or not job.run.reads.at_rest:
        if time.monotonic() > deadline:
            raise TimeoutError("the cluster's collections never all followed")
        await asyncio.sleep(0.05)


async def requests_per_cycle(stack: Stack) -> int:
    stack.sim.clear_requests()
    await jobs_alerts.check_cluster(stack.service.deps, CLUSTER)
    return len(stack.sim.requests)


async def request_counts(workdir: Path, shards: int, deployments: int) -> tuple[int, int]:
    # An hour between scheduled checks: only the cycles run here are counted.
    async with running_stack(workdir, config_overrides=overrides(workdir, "1h")) as stack:
        small = await requests_per_cycle(stack)
        grow_cluster(stack, shards, deployments)
        large = await requests_per_cycle(stack)
    return small, large


async def main(rounds: int, hold: float, interval: float, shards: int, deployments: int) -> None:
    with tempfile.TemporaryDirectory(prefix="kai-chatops-bench-") as tmp:
        latencies = await detection(Path(tmp) / "latency", rounds, hold, interval)
        small, large = await request_counts(Path(tmp) / "requests", shards, deployments)
    p99 = round(percentile(latencies, 0.99), 3)
    where = f"interval {interval:g}s, hold {hold:g}s"
    print(f"time to page (condition written -> root posted), {where}, {rounds} flips:")
    print(f"  p50 {ms(percentile(latencies, 0.5))}  p99 {ms(p99)}  max {ms(max(latencies))}")
    print(f"  {goal('p99', p99, hold + 1, 's')}")
    record(f"time to page p99, {where}", p99, hold + 1, "s")
    print("Kubernetes API requests per check cycle:")
    print(f"  default scenario: {small}")
    print(f"  +{shards} shards, +{deployments} Deployments: {large}")
    print(f"  constant: {'yes' if small == large else 'NO'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--hold", type=float, default=0.0, help="alerts.hold, seconds")
    parser.add_argument("--interval", type=float, default=1.0, help="alerts.interval, seconds")
    parser.add_argument("--shards", type=int, default=50)
    parser.add_argument("--deployments", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.hold, args.interval, args.shards, args.deployments))
