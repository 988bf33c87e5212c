"""Bench: one service watching a fleet of clusters: threads, memory, start-up, checks, CPU.

The simulator runs in a process of its own and serves every cluster (each a context of one
kubeconfig on the one simulated API server); `kai-chatops serve` runs in another with alerts every
`--interval`. For each cluster count it prints: start-up to ready, the most threads and RSS seen
while it runs, the alert check's p99 (from its /metrics histogram), whether every cluster was
checked within one interval, the service's CPU per check cycle, and `/kai health --cluster X`
reply time. Goals (issue 15): with 200 clusters threads <= 64, RSS <= 150 MB, ready <= 2 s,
every cluster checked each interval, health as fast as with 1 cluster; with 1 cluster (the idle
footprint) RSS <= 120 MB and ready <= 2 s.

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
from common import free_port, goal, ms, percentile, start_process

from testbed.sim import Simulator
from testbed.slackemu import SlackDriver, SlackEmulator
from testbed.stack import OPERATOR, add_demo_people, demo_config

SECRET = "bench-signing-secret"
HERE = str(Path(__file__).resolve())
HEALTH_ASKS = 30
CHECKS = re.compile(r'kai_chatops_alert_checks_total\{cluster="([^"]+)",outcome="ok"\} (\S+)')
REQUESTS = re.compile(r'kai_chatops_kube_requests_total\{cluster="[^"]+",[^}]*\} (\S+)')
BUCKET = re.compile(r'kai_chatops_alert_check_seconds_bucket\{le="([^"]+)"\} (\S+)')


def names(count: int) -> list[str]:
    return [f"gpu-{i:03}" for i in range(count)]


async def serve_simulator(workdir: str, counts: list[int]) -> None:
    """The simulator process: a kubeconfig per cluster count, then serve until stopped."""
    # Bookmarks about once a minute, as kube-apiserver sends them (the simulator's default of a
    # second keeps tests quick, and would make every idle watch cost the service CPU here).
    async with Simulator(scenarios=("default",), bookmark_every=60.0) as sim:
        for count in counts:
            first, *more = names(count)
            sim.write_kubeconfig(f"{workdir}/kubeconfig-{count}", first, more_contexts=more)
        print("ready", flush=True)
        await asyncio.Event().wait()


@dataclass
class Figures:
    clusters: int
    ready: float
    threads: int
    rss_mb: float
    check_p99: str
    all_checked: bool
    cpu_per_cycle: float
    requests_per_interval: float  # Kubernetes API requests per cluster per interval
    health: list[float]


def proc_status(pid: int) -> tuple[int, float]:
    """(threads, RSS in MB) of a process."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0]) / 1024


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds a process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime, stime in clock ticks (USER_HZ)


async def scrape(session: aiohttp.ClientSession, port: int) -> str:
    async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
        return await response.text()


def check_counts(metrics: str) -> dict[str, float]:
    return {cluster: float(count) for cluster, count in CHECKS.findall(metrics)}


def request_total(metrics: str) -> float:
    return sum(float(n) for n in REQUESTS.findall(metrics))


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


async def measure(workdir: Path, count: int, interval: float, slack: SlackEmulator) -> Figures:
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
            # At rest: past the first pause and suspend sweeps too (start-up's own lists).
            await asyncio.sleep(max(interval, 35.0))
            quiet = await scrape(session, port)
            before, cpu_before = check_counts(quiet), cpu_seconds(service.pid)
            requests_before = request_total(quiet)
            window_start = time.monotonic()
            url = f"http://127.0.0.1:{port}/slack/events"

            async def window_over() -> bool:
                return time.monotonic() - window_start >= 3 * interval

            await sampled_wait(watcher, window_over, window_start + 4 * interval, "window")
            cycles = (time.monotonic() - window_start) / interval
            cpu = (cpu_seconds(service.pid) - cpu_before) / cycles
            metrics = await scrape(session, port)
            after = check_counts(metrics)
            requests = (request_total(metrics) - requests_before) / cycles / count
            async with SlackDriver(slack, bot_url=url, signing_secret=SECRET) as driver:
                health = await ask_health(driver, slack, clusters)
    finally:
        service.terminate()
        await service.wait()
    checked = all(after.get(c, 0) > before.get(c, 0) for c in clusters)
    return Figures(count, ready, watcher.threads, watcher.rss_mb, check_p99(metrics), checked,
                   cpu, requests, health)  # fmt: skip


def report(rows: list[Figures], interval: float) -> None:
    print(f"one service, alerts.interval {interval:g}s, every cluster a context on one simulator")
    print(f"  {'clusters':>8} {'ready':>7} {'threads':>7} {'RSS MB':>7} {'check p99':>11} "
          f"{'checked':>7} {'CPU/cycle':>9} {'req/cl/int':>10}   "
          "/kai health --cluster X: p50, max")  # fmt: skip
    for r in rows:
        health = f"{ms(percentile(r.health, 0.5))}, {ms(max(r.health))}"
        print(f"  {r.clusters:>8} {r.ready:>6.2f}s {r.threads:>7} {r.rss_mb:>7.1f} "
              f"{r.check_p99:>11} {'all' if r.all_checked else 'NOT ALL':>7} "
              f"{r.cpu_per_cycle:>8.3f}s {r.requests_per_interval:>10.2f}   {health}")  # fmt: skip
    by_count = {r.clusters: r for r in rows}
    if 1 in by_count:
        one = by_count[1]
        print("  idle footprint, 1 cluster:")
        print(f"    {goal('RSS', round(one.rss_mb, 1), 120, 'MB')}")
        print(f"    {goal('start-up to ready', round(one.ready, 2), 2, 's')}")
    largest = max(rows, key=lambda r: r.clusters)
    print(f"  at {largest.clusters} clusters:")
    print(f"    {goal('threads', largest.threads, 64, '')}")
    print(f"    {goal('RSS', round(largest.rss_mb, 1), 150, 'MB')}")
    per_cluster = round(largest.requests_per_interval, 2)
    print(f"    {goal('API requests per cluster per interval, at rest', per_cluster, 1, '')}")
    cpu_ms = round(largest.cpu_per_cycle / largest.clusters * 1000, 2)
    print(f"    {goal('CPU per cluster per interval, at rest', cpu_ms, 2, 'ms')}")
    print(f"    {goal('start-up to ready', round(largest.ready, 2), 2, 's')}")
    checked = "met" if largest.all_checked else "MISSED"
    print(f"    every cluster checked within its interval: {checked}")
    if 1 in by_count and largest.clusters != 1:
        base, big = percentile(by_count[1].health, 0.5), percentile(largest.health, 0.5)
        print(f"    {goal('/kai health p50 vs 1 cluster', round(big / base, 2), 1.5, 'x')}")


async def main(counts: list[int], interval: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        sim = await start_process(HERE, "--serve-simulator", tmp, "--clusters",
                                  *map(str, counts))  # fmt: skip
        assert sim.stdout is not None
        await sim.stdout.readline()
        try:
            async with SlackEmulator() as slack:
                add_demo_people(slack)
                rows = [await measure(workdir, count, interval, slack) for count in counts]
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
