"""Bench: the CPU one alert check of a cluster at rest costs, in process, without the service.

A simulator serves N clusters (each a context of one kubeconfig), in a process of its own beside
the Slack emulator, so their CPU is not counted; one `AlertDesk` over a SQLite store checks each
through a `CachedKube` (`bot.kube.informer`) until every collection it reads is followed and
current and the state holds still; then every cluster is checked `--rounds` times and the
process's CPU time is divided by the checks made. At rest a check reads only the local copies and
asks the API server nothing, so this is the check's own cost: the state store, the decision,
rendering, metrics. Issue 26: <= 2 ms of CPU per cluster per interval at rest.
`--group-clusters N` groups alerts across clusters (every check reads the fleet's states);
`--standing` gives every cluster a busy state to read back at each check; `--profile FILE`
writes a cProfile of the timed rounds (`python -m pstats FILE`).

    .venv/bin/python bench/check_cpu.py [--clusters 200] [--rounds 5] [--group-clusters N]
                                        [--standing] [--profile FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from common import goal, record, start_process

from bot.alerts.model import (
    AlertKey,
    AlertState,
    ClusterAlerts,
    Observation,
    Severity,
)
from bot.alerts.notice_thread import NoticeThread
from bot.alerts.store import SqliteStore
from bot.alerts.usecase import AlertDesk
from bot.config.settings import parse_settings
from bot.core.metrics import Metrics
from bot.kube import gateway
from bot.kube.informer import CachedKube
from bot.slack.client import build_client
from bot.slack.gateway import SlackGateway
from testbed.sim import Simulator
from testbed.slackemu import SlackEmulator
from testbed.stack import demo_config

WARM_ROUNDS_AT_MOST = 20
RECENT_KEPT = 10  # closed incidents a state remembers (bot.alerts.outbox.RECENT_KEPT)
THREADS = 30  # eviction notices told, per cluster, with --standing
GOAL_MS = 2.0
HERE = str(Path(__file__).resolve())


def names(count: int) -> list[str]:
    return [f"gpu-{i:03}" for i in range(count)]


class Fleet:
    """Every cluster's gateway and local copy, and the desk that checks them."""

    def __init__(
        self, kubeconfig: str, slack: tuple[str, str], workdir: str, count: int, group: int
    ) -> None:
        self.clusters = names(count)
        raw = demo_config(kubeconfig)
        raw["clusters"] = [
            {"name": n, "kubeconfig": kubeconfig, "context": n} for n in self.clusters
        ]
        raw["state"] = {"path": f"{workdir}/state.sqlite"}
        raw["alerts"] = {"group_clusters": group}
        settings = parse_settings(raw)
        metrics = Metrics()
        self.kube = gateway.connect_all(settings.clusters, settings.kubernetes, metrics)
        self.store = SqliteStore(settings.state.path)
        token, api_url = slack
        sender = SlackGateway(build_client(token, api_url, metrics), monotonic=time.monotonic)
        self.desk = AlertDesk(settings, self.store, sender, metrics)
        self.reads = {c: CachedKube(self.kube[c]) for c in self.clusters}

    async def check_all(self) -> None:
        now = datetime.now(UTC)
        for cluster in self.clusters:
            await self.desk.run_check(self.kube[cluster], now, reads=self.reads[cluster])

    async def close(self) -> None:
        for reads in self.reads.values():
            await reads.close()
        for kube in self.kube.values():
            await kube.close_streams()
            kube.close()
        self.store.close()


def standing_state(cluster: str, now: datetime) -> ClusterAlerts:
    """A busy cluster's state at rest: the incidents it remembers as recently closed, and the
    eviction notices it told (each a thread with replies), none owing anything. None of them
    is converged when the drain takes over (no root, threads older than an hour): the bench
    counts the checks at rest, not a new holder's look at Slack."""
    recent = tuple(
        AlertState(
            Observation(
                AlertKey(cluster, "Deployment", f"kai-scheduler/operand-{i}", "Available"),
                Severity.CRITICAL,
                f"Deployment kai-scheduler/operand-{i} has no available replica",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
            ),
            first_seen=now - timedelta(hours=2, minutes=i),
            firing_since=now - timedelta(hours=2),
            resolved_at=now - timedelta(hours=1),
            root_channel="C0ALERTS",
            delivered={f"{cluster}/x{i}:{n}": f"1700000001.{n:06d}" for n in range(1, 4)},
        )
        for i in range(RECENT_KEPT)
    )
    threads = tuple(
        NoticeThread(
            f"{cluster}/evict/{i:08x}",
            "C0TEAM",
            count=3,
            last=now - timedelta(hours=2, minutes=i),
            root_ts=f"1700000002.{i:06d}",
            delivered={f"{cluster}/evict/{i:08x}:{n}": f"1700000003.{n:06d}" for n in (1, 2)},
        )
        for i in range(THREADS)
    )
    return ClusterAlerts(cluster, recent=recent, threads=threads)


async def warm(fleet: Fleet) -> None:
    """Check until every copy is current and a round changes no stored version."""
    versions: dict[str, str] = {}
    for _ in range(WARM_ROUNDS_AT_MOST):
        await fleet.check_all()
        now = {c: (await fleet.store.load(c)).version for c in fleet.clusters}
        if all(r.at_rest for r in fleet.reads.values()) and now == versions:
            return
        versions = now
        await asyncio.sleep(0.5)
    raise TimeoutError("the fleet never came to rest")


async def serve(workdir: str, count: int) -> None:
    """The other process: the simulator (its kubeconfig in `workdir`) and the Slack emulator,
    whose token and URL it prints, serving until its stdin closes."""
    # Bookmarks about once a minute, as kube-apiserver sends them (bench/fleet_scale.py).
    async with (
        Simulator(scenarios=("default",), bookmark_every=60.0) as sim,
        SlackEmulator() as slack,
    ):
        first, *more = names(count)
        kubeconfig = sim.write_kubeconfig(f"{workdir}/kubeconfig", first, more_contexts=more)
        print(json.dumps([kubeconfig, slack.bot_token, slack.api_url]), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


async def measure(fleet: Fleet, rounds: int, profile: str | None) -> float:
    """CPU seconds of `rounds` checks of every cluster (profiled into `profile` when given)."""
    profiler = cProfile.Profile() if profile else None
    started = time.process_time()
    if profiler:
        profiler.enable()
    for _ in range(rounds):
        await fleet.check_all()
    if profiler:
        profiler.disable()
        profiler.dump_stats(profile)
    return time.process_time() - started


async def seed(fleet: Fleet) -> None:
    """Every cluster's state as a busy cluster's at rest (`standing_state`)."""
    now = datetime.now(UTC)
    for cluster in fleet.clusters:
        stored = await fleet.store.load(cluster)
        await fleet.store.save(standing_state(cluster, now), stored.version)


def describe(count: int, group: int, standing: bool) -> str:
    grouped = f", alerts.group_clusters {group}" if group else ""
    busy = ", each state a busy cluster's" if standing else ""
    return f"{count} clusters at rest{grouped}{busy}"


async def main(count: int, rounds: int, profile: str | None, group: int, standing: bool) -> int:
    with tempfile.TemporaryDirectory() as workdir:
        server = await start_process(HERE, "--serve", workdir, "--clusters", str(count), stdin=True)
        assert server.stdout is not None and server.stdin is not None
        kubeconfig, token, api_url = json.loads(await server.stdout.readline())
        fleet = Fleet(kubeconfig, (token, api_url), workdir, count, group)
        try:
            if standing:
                await seed(fleet)
            await warm(fleet)
            cpu = await measure(fleet, rounds, profile)
        finally:
            await fleet.close()
            server.stdin.close()
            await server.wait()
    per_check = cpu / (rounds * count) * 1000
    case = describe(count, group, standing)
    print(f"{case}, {rounds} rounds: {per_check:.3f} ms of CPU per check")
    print(f"  {goal('CPU per check at rest', round(per_check, 3), GOAL_MS, 'ms')}")
    record(f"{case}: CPU of one alert check", round(per_check, 3), GOAL_MS, "ms")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", metavar="FILE", help="write a cProfile of the timed rounds")
    parser.add_argument("--group-clusters", type=int, default=0, help="alerts.group_clusters")
    parser.add_argument(
        "--standing",
        action="store_true",
        help=f"each state holds {RECENT_KEPT} closed incidents and {THREADS} eviction threads",
    )
    parser.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve, args.clusters))
        sys.exit(0)
    sys.exit(
        asyncio.run(
            main(args.clusters, args.rounds, args.profile, args.group_clusters, args.standing)
        )
    )
