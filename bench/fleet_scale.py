"""Bench: one service watching a fleet of clusters: threads, memory, start-up, checks, CPU.

The simulator runs in a process of its own and serves every cluster (each a context of one
kubeconfig on the one simulated API server); `kai-chatops serve` runs in another with alerts every
`--interval`. For each cluster count it prints: start-up to ready, the most threads and RSS seen
while it runs, the alert check's p99 (from its /metrics histogram), whether every cluster was
checked within one interval, and `/kai health --cluster X` reply time once the fleet has settled
(its first interval, when every cluster is first checked, listed and swept, behind it); then, at
rest (no command in flight, every cluster current), the service's CPU per interval and the API
requests it made per cluster per interval (the simulator counts them; the hourly lists and watch
requests the window cannot see are added at their rate). Goals (issue 15): with 200 clusters threads
<= 64, RSS <= 150 MB, ready <= 2 s, every cluster checked each interval, health as fast as with 1
cluster; with 1 cluster (the idle footprint) RSS <= 120 MB and ready <= 2 s. Issue 26: at rest
<= 1 API request and <= 2 ms of CPU per cluster per interval; with 1 000 clusters threads <= 64,
RSS <= 250 MB, ready <= 2 s, CPU <= 20 % of one core.

    .venv/bin/python bench/fleet_scale.py [--clusters 1 10 50 200] [--interval 10]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from common import (
    cpu_seconds,
    free_port,
    goal,
    ms,
    percentile,
    record,
    record_text,
    start_process,
)

from testbed.sim import Simulator
from testbed.slackemu import SlackDriver, SlackEmulator
from testbed.stack import OPERATOR, add_demo_people, demo_config

SECRET = "bench-signing-secret"
HERE = str(Path(__file__).resolve())
HEALTH_ASKS = 60
# The window at rest begins once the first timed-pause and -suspend sweeps are done (spread over
# the first 30 s: bot/service/jobs_timed.py FIRST_SWEEPS_WITHIN) and lasts an interval at least.
REST_AFTER_START = 35.0
REST_WINDOW_AT_LEAST = 20.0
# What the window cannot see, counted at its rate (bot/service/jobs_timed.py, bot/kube/copies.py):
# per cluster each hour, the sweeps' lists (ScaledJobs and ScaledObjects in the one KEDA
# namespace, five Flux kinds) and, per followed collection (four: the KAI Config, the shards,
# the Deployments, the APIService), one resync list and two watch requests.
HOURLY_REQUESTS = 2 + 5 + 4 * (1 + 2)
CHECKS = re.compile(r'kai_chatops_alert_checks_total\{cluster="([^"]+)",outcome="ok"\} (\S+)')
BUCKET = re.compile(r'kai_chatops_alert_check_seconds_bucket\{le="([^"]+)"\} (\S+)')


def names(count: int) -> list[str]:
    return [f"gpu-{i:03}" for i in range(count)]


async def serve_simulator(workdir: str, counts: list[int]) -> None:
    """The simulator process: a kubeconfig per cluster count, then serve until stopped; each
    line on stdin is answered with the number of API requests made since the last one (the
    requests are kept in memory until then: bench/startup.py, which does not count, closes its
    stdin at once)."""
    # Bookmarks about once a minute, as kube-apiserver sends them (the simulator's default of a
    # second keeps tests quick, and would make every idle watch cost the service CPU here).
    async with Simulator(scenarios=("default",), bookmark_every=60.0) as sim:
        for count in counts:
            first, *more = names(count)
            sim.write_kubeconfig(f"{workdir}/kubeconfig-{count}", first, more_contexts=more)
        print("ready", flush=True)
        loop = asyncio.get_running_loop()
        while await loop.run_in_executor(None, sys.stdin.readline):
            print(len(sim.requests), flush=True)
            sim.clear_requests()
        await asyncio.Event().wait()  # stdin closed (nobody counting): serve on


class RequestCounter:
    """Asks the simulator process how many API requests it served since the last ask."""

    def __init__(self, sim: asyncio.subprocess.Process) -> None:
        assert sim.stdin is not None and sim.stdout is not None
        self._stdin, self._stdout = sim.stdin, sim.stdout

    async def since_last(self) -> int:
        self._stdin.write(b"count\n")
        await self._stdin.drain()
        return int(await self._stdout.readline())


@dataclass
class Figures:
    clusters: int
    ready: float
    threads: int
    rss_mb: float
    check_p99: str
    all_checked: bool
    cpu_per_cycle: float
    requests_per_cycle: float
    health: list[float]
    interval: float

    @property
    def cpu_ms_per_cluster(self) -> float:
        return self.cpu_per_cycle / self.clusters * 1000

    @property
    def requests_per_cluster(self) -> float:
        """In the window at rest, plus the hourly ones at their rate."""
        return self.requests_per_cycle / self.clusters + HOURLY_REQUESTS * self.interval / 3600


def proc_status(pid: int) -> tuple[int, float]:
    """(threads, RSS in MB) of a process."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0]) / 1024


async def scrape(session: aiohttp.ClientSession, port: int) -> str:
    async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
        return await response.text()


def check_counts(metrics: str) -> dict[str, float]:
    return {cluster: float(count) for cluster, count in CHECKS.findall(metrics)}


def check_p99(metrics: str) -> str:
    """The histogram bucket the 99th percentile of alert checks falls in ("n/a" without one)."""
    buckets = [(float(le), float(n)) for le, n in BUCKET.findall(metrics)]
    if not buckets or buckets[-1][1] == 0:
        return "n/a"
    total = buckets[-1][1]
    bound = next(le for le, n in buckets if n >= 0.99 * total)
    return f"<= {bound * 1000:g} ms"


class Watcher:
    """The service process's peak threads and RSS, sampled while the bench runs."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.threads, self.rss_mb = proc_status(pid)

    def sample(self) -> None:
        threads, rss = proc_status(self.pid)
        self.threads, self.rss_mb = max(self.threads, threads), max(self.rss_mb, rss)


async def wait_ready(session: aiohttp.ClientSession, port: int, watcher: Watcher) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        watcher.sample()
        try:
            async with session.get(f"http://127.0.0.1:{port}/readyz") as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.02)
    raise TimeoutError("service not ready")


async def sampled_wait(
    watcher: Watcher, until: Any, deadline: float, what: str, every: float = 0.25
) -> None:
    """Sample the process until `await until()` is true (or `deadline`, monotonic)."""
    while not await until():
        watcher.sample()
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(every)


async def ask_health(driver: SlackDriver, slack: SlackEmulator, clusters: list[str]) -> list[float]:
    """`/kai health --cluster X` for random clusters, one after the other: reply seconds."""
    times = []
    for cluster in random.sample(clusters * HEALTH_ASKS, HEALTH_ASKS):
        started = time.perf_counter()
        delivery = await driver.send_command(f"health --cluster {cluster}", user_id=OPERATOR)
        await slack.wait_for_response(delivery.hook_id, timeout=30)
        times.append(time.perf_counter() - started)
    return times


async def measure(
    workdir: Path, count: int, interval: float, slack: SlackEmulator, requests: RequestCounter
) -> Figures:
    clusters = names(count)
    kubeconfig = str(workdir / f"kubeconfig-{count}")
    raw = demo_config(kubeconfig)
    raw["clusters"] = [{"name": n, "kubeconfig": kubeconfig, "context": n} for n in clusters]
    raw["alerts"] = {"interval": f"{interval:g}s"}
    raw["state"] = {"path": str(workdir / f"state-{count}.sqlite")}
    config_path = workdir / f"config-{count}.yaml"
    config_path.write_text(yaml.safe_dump(raw))
    port = free_port()
    env = {"SLACK_BOT_TOKEN": slack.bot_token, "SLACK_SIGNING_SECRET": SECRET}
    env["SLACK_API_URL"] = slack.api_url
    started = time.monotonic()
    service = await start_process("-m", "bot", "serve", "--config", str(config_path),
                                  "--port", str(port), "--host", "127.0.0.1", env=env)  # fmt: skip
    try:
        async with aiohttp.ClientSession() as session:
            watcher = Watcher(service.pid)
            await wait_ready(session, port, watcher)
            ready = time.monotonic() - started

            async def all_checked_once() -> bool:
                return len(check_counts(await scrape(session, port))) == count

            first_deadline = time.monotonic() + 2 * interval + 30
            await sampled_wait(watcher, all_checked_once, first_deadline, "first checks", 1.0)
            # Settled: every cluster's first check, first lists and first sweeps are done (a
            # fleet's start-up is busy for its first interval; a command then waits its turn).
            await asyncio.sleep(max(0.0, started + REST_AFTER_START - time.monotonic()))
            url = f"http://127.0.0.1:{port}/slack/events"
            async with SlackDriver(slack, bot_url=url, signing_secret=SECRET) as driver:
                health = await ask_health(driver, slack, clusters)
            # At rest: no command in flight, so the CPU and requests are the checks' alone.
            before, cpu_before = check_counts(await scrape(session, port)), cpu_seconds(service.pid)
            await requests.since_last()
            window_start = time.monotonic()

            window = max(1.1 * interval, REST_WINDOW_AT_LEAST)

            async def window_over() -> bool:
                return time.monotonic() - window_start >= window

            await sampled_wait(watcher, window_over, window_start + 2 * window, "window")
            cycles = (time.monotonic() - window_start) / interval
            cpu = (cpu_seconds(service.pid) - cpu_before) / cycles
            made = await requests.since_last() / cycles
            metrics = await scrape(session, port)
            after = check_counts(metrics)
    finally:
        service.terminate()
        await service.wait()
    checked = all(after.get(c, 0) > before.get(c, 0) for c in clusters)
    return Figures(count, ready, watcher.threads, watcher.rss_mb, check_p99(metrics), checked,
                   cpu, made, health, interval)  # fmt: skip


def report(rows: list[Figures], interval: float) -> None:
    print(f"one service, alerts.interval {interval:g}s, every cluster a context on one simulator")
    print(f"  {'clusters':>8} {'ready':>7} {'threads':>7} {'RSS MB':>7} {'check p99':>11} "
          f"{'checked':>7} {'CPU/cycle':>9} {'CPU/cluster':>11} {'req/cluster':>11}"
          "   /kai health --cluster X: p50, max")  # fmt: skip
    for r in rows:
        health = f"{ms(percentile(r.health, 0.5))}, {ms(max(r.health))}"
        print(f"  {r.clusters:>8} {r.ready:>6.2f}s {r.threads:>7} {r.rss_mb:>7.1f} "
              f"{r.check_p99:>11} {'all' if r.all_checked else 'NOT ALL':>7} "
              f"{r.cpu_per_cycle:>8.3f}s {r.cpu_ms_per_cluster:>8.2f} ms "
              f"{r.requests_per_cluster:>11.2f}   {health}")  # fmt: skip
    by_count = {r.clusters: r for r in rows}
    if 1 in by_count:
        one = by_count[1]
        print("  idle footprint, 1 cluster:")
        print(f"    {goal('RSS', round(one.rss_mb, 1), 120, 'MB')}")
        print(f"    {goal('start-up to ready', round(one.ready, 2), 2, 's')}")
    largest = max(rows, key=lambda r: r.clusters)
    print(f"  at {largest.clusters} clusters:")
    print(f"    {goal('threads', largest.threads, 64, '')}")
    rss_goal = 250 if largest.clusters >= 1000 else 150
    print(f"    {goal('RSS', round(largest.rss_mb, 1), rss_goal, 'MB')}")
    core = round(largest.cpu_per_cycle / interval * 100, 1)
    print(f"    {goal('CPU at rest, % of one core', core, 20, '%')}")
    print(f"    {goal('start-up to ready', round(largest.ready, 2), 2, 's')}")
    checked = "met" if largest.all_checked else "MISSED"
    print(f"    every cluster checked within its interval: {checked}")
    if 1 in by_count and largest.clusters != 1:
        base, big = percentile(by_count[1].health, 0.5), percentile(largest.health, 0.5)
        print(f"    {goal('/kai health p50 vs 1 cluster', round(big / base, 2), 1.5, 'x')}")
    per_cluster = [
        (f"{largest.clusters} clusters at rest: API requests per cluster per interval",
         round(largest.requests_per_cluster, 2), 1.0, ""),
        (f"{largest.clusters} clusters at rest: CPU per cluster per interval",
         round(largest.cpu_ms_per_cluster, 2), 2.0, "ms"),
    ]  # fmt: skip
    for label, value, limit, unit in per_cluster:
        print(f"    {goal(label.split(': ', 1)[1], value, limit, unit)}")
    record_figures(by_count, interval)


def record_figures(by_count: dict[int, Figures], interval: float) -> None:
    """The figures issue 26 names, for run_all.py's table: 1, 200 and 1 000 clusters."""
    if 1 in by_count:
        record("idle RSS, 1 cluster", round(by_count[1].rss_mb, 1), 120, "MB")
    for count, rss_goal in ((200, 150), (1000, 250)):
        r = by_count.get(count)
        if r is None:
            continue
        at = f"{count} clusters"
        record(f"{at}: API requests per cluster per interval, at rest",
               round(r.requests_per_cluster, 2), 1)  # fmt: skip
        record(f"{at}: CPU per cluster per interval, at rest", round(r.cpu_ms_per_cluster, 2),
               2, "ms")  # fmt: skip
        record(f"{at}: threads", r.threads, 64)
        record(f"{at}: RSS", round(r.rss_mb, 1), rss_goal, "MB")
        checked = "all" if r.all_checked else "not all"
        record_text(f"{at}: every cluster checked within its interval", "all", checked,
                    r.all_checked)  # fmt: skip
        if 1 in by_count:
            base, here = percentile(by_count[1].health, 0.5), percentile(r.health, 0.5)
            record(f"{at}: /kai health --cluster X p50 vs 1 cluster", round(here / base, 2), 1.5,
                   "x")  # fmt: skip
        if count == 1000:
            record(f"{at}: ready", round(r.ready, 2), 2, "s")
            core = round(r.cpu_per_cycle / interval * 100, 1)
            record(f"{at}: CPU at rest, % of one core", core, 20, "%")


async def main(counts: list[int], interval: float) -> None:
    """Each cluster count against a simulator of its own (one that served a fleet before
    answers the next one's start-up more slowly), one Slack emulator for them all."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        async with SlackEmulator() as slack:
            add_demo_people(slack)
            for count in counts:
                sim = await start_process(HERE, "--serve-simulator", tmp, "--clusters",
                                          str(count), stdin=True)  # fmt: skip
                assert sim.stdout is not None
                await sim.stdout.readline()
                try:
                    rows.append(
                        await measure(Path(tmp), count, interval, slack, RequestCounter(sim))
                    )
                finally:
                    sim.terminate()
                    await sim.wait()
    report(rows, interval)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, nargs="+", default=[1, 10, 50, 200])
    parser.add_argument("--interval", type=float, default=10.0)
    parser.add_argument("--serve-simulator", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_simulator:
        asyncio.run(serve_simulator(args.serve_simulator, args.clusters))
    else:
        sys.exit(asyncio.run(main(args.clusters, args.interval)))
