"""Bench: production shape. Two replicas on the ConfigMap backend, a fleet, Slack's tiers on.

Every replica is `kai-chatops serve` in a process of its own, sharing the state ConfigMaps and
the Lease in the first cluster; the clusters are simulated by `bench/ha_worlds.py` in another
process (a fleet on one simulator, and probe clusters that break alone); Slack is the emulator,
in this process, enforcing Slack's tiers (Tier 3 50 a minute, `chat.postMessage` 60 a minute
per channel, 429 + Retry-After above them). Each scenario prints its figures with the goals of
issue 34 (docs/testing.md, *Benchmarks*):

  grouped        N clusters at rest (RSS, CPU, API requests per cluster per interval), then all
                 failing at once with `group_clusters: 3`: one fleet root, state stored
  ungrouped      the same with grouping off: every root posted at Slack's pace, none twice
  evictions      50 clusters with 300 eviction threads each, then a new critical page
  takeover       50 incidents open, 4 000 messages in the channel, the holder restarted: a new
                 page and its diagnosis, checks skipped, Slack calls per open incident; then
                 with `conversations.history` failing, another takeover and a new page
  first-interval a cause at a random moment of the first interval after a start

    .venv/bin/python bench/fleet_ha.py [--clusters 1000] [--ungrouped-clusters 1000]
        [--only grouped ungrouped evictions takeover first-interval] [--hold 5] [--rounds 5]
        [--verbose] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from common import cpu_seconds, free_port, goal, record, record_text
from fleet_scale import HOURLY_REQUESTS, REST_AFTER_START, proc_status

from testbed.slackemu import ApiCall, SlackEmulator
from testbed.slackemu.records import Fault
from testbed.stack import ALERT_CHANNEL, add_demo_people, demo_config

HERE = Path(__file__).resolve().parent
SECRET = "bench-signing-secret"
INTERVAL = 30.0  # alerts.interval, as DESIGN's default
LEASE_SECONDS = 15
CHECKS = re.compile(r'kai_chatops_alert_checks_total\{cluster="([^"]+)",outcome="ok"\} (\S+)')
LARGEST = re.compile(r"kai_chatops_state_largest_document_bytes (\S+)")
SKIPPED = "skipped: maximum number of running instances reached"
BUDGET = 800_000  # bot/alerts/budget.py BUDGET: bytes of JSON per state document
READS = ("conversations.history", "conversations.replies")
CHANNEL_CALLS = (*READS, "chat.postMessage", "chat.update", "chat.delete")


@dataclass
class Replica:
    process: asyncio.subprocess.Process
    port: int
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def skipped(self) -> int:
        """Scheduled checks APScheduler skipped because the last one still ran."""
        return self.log.read_text(errors="replace").count(SKIPPED) if self.log.exists() else 0


@dataclass
class Bed:
    """One scenario's world: the clusters' process, Slack, the replicas and their config."""

    workdir: Path
    slack: SlackEmulator
    worlds: asyncio.subprocess.Process
    config: Path
    fleet: list[str]
    replicas: list[Replica] = field(default_factory=list)
    session: aiohttp.ClientSession = field(default_factory=aiohttp.ClientSession)
    started: int = 0

    async def ask(self, op: str, **args: Any) -> Any:
        assert self.worlds.stdin is not None and self.worlds.stdout is not None
        self.worlds.stdin.write((json.dumps({"op": op, **args}) + "\n").encode())
        await self.worlds.stdin.drain()
        answer = json.loads(await self.worlds.stdout.readline())
        if isinstance(answer, dict) and "error" in answer:
            raise RuntimeError(f"{op}: {answer['error']}")
        return answer

    async def start_replica(self) -> Replica:
        self.started += 1
        port, log = free_port(), self.workdir / f"replica-{self.started}.log"
        env = {
            **os.environ,
            "SLACK_BOT_TOKEN": self.slack.bot_token,
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": self.slack.api_url,
        }
        with log.open("wb") as stderr:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bot",
                "serve",
                "--config",
                str(self.config),
                "--port",
                str(port),
                "--host",
                "127.0.0.1",
                env=env,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=stderr,
            )
        replica = Replica(process, port, log)
        self.replicas.append(replica)
        await until(lambda: self.ready(replica), 120, "a replica to be ready")
        return replica

    async def ready(self, replica: Replica) -> bool:
        try:
            async with self.session.get(f"http://127.0.0.1:{replica.port}/readyz") as response:
                return response.status == 200
        except aiohttp.ClientError:
            return False

    async def stop_replica(self, replica: Replica) -> None:
        """SIGTERM, as a rolling restart sends it: the replica gives its Lease up and exits."""
        replica.process.send_signal(signal.SIGTERM)
        await replica.process.wait()
        self.replicas.remove(replica)

    async def holder(self) -> Replica | None:
        identity = str(await self.ask("lease"))
        pid = identity.rsplit("-", 2)[1] if identity.count("-") >= 2 else ""
        return next((r for r in self.replicas if str(r.pid) == pid), None)

    async def metrics(self, replica: Replica) -> str:
        async with self.session.get(f"http://127.0.0.1:{replica.port}/metrics") as response:
            return await response.text()

    async def checked(self) -> set[str]:
        """The clusters some replica has checked at least once."""
        done: set[str] = set()
        for replica in self.replicas:
            done |= {c for c, n in CHECKS.findall(await self.metrics(replica)) if float(n) > 0}
        return done

    async def close(self) -> None:
        for replica in list(self.replicas):
            replica.process.kill()
            await replica.process.wait()
        self.worlds.terminate()
        await self.worlds.wait()
        await self.session.close()


async def until(
    check: Callable[[], Awaitable[bool]], seconds: float, what: str, every: float = 0.05
) -> float:
    """Poll `check` until true; the monotonic time it first was. Raises TimeoutError."""
    deadline = time.monotonic() + seconds
    while not await check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {seconds:g} s for {what}")
        await asyncio.sleep(every)
    return time.monotonic()


def write_config(
    path: Path, kubeconfig: str, clusters: list[str], alerts: dict[str, Any], notices: bool
) -> None:
    raw = demo_config(kubeconfig)
    raw["clusters"] = [{"name": n, "kubeconfig": kubeconfig, "context": n} for n in clusters]
    raw["alerts"] = {"interval": f"{INTERVAL:g}s", **alerts}
    if BACKEND == "sqlite":  # for comparison: one replica as the SQLite figures are taken
        raw["state"] = {"path": str(path.parent / "state.sqlite")}
    else:
        raw["state"] = {"backend": "configmap"}
        raw["lease"] = {"enabled": BACKEND != "nolease", "duration": f"{LEASE_SECONDS}s"}
    raw["notices"] = {"evictions": notices}
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")


async def open_bed(
    workdir: Path,
    slack: SlackEmulator,
    fleet: int,
    probes: int,
    alerts: dict[str, Any],
    notices: bool = False,
) -> Bed:
    kubeconfig = str(workdir / "kubeconfig")
    worlds = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HERE / "ha_worlds.py"),
        kubeconfig,
        str(fleet),
        str(probes),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=1 << 26,  # a fleet's states come back as one line
    )
    assert worlds.stdout is not None
    await worlds.stdout.readline()
    names = [f"gpu-{i:04}" for i in range(fleet)]
    clusters = names + [f"probe-{i}" for i in range(probes)]
    config = workdir / "config.yaml"
    write_config(config, kubeconfig, clusters, alerts, notices)
    return Bed(workdir, slack, worlds, config, names)


async def start_pair(bed: Bed, clusters: int) -> float:
    """Two replicas, the first the holder; the monotonic time every cluster was first checked."""
    started = time.monotonic()
    await bed.start_replica()
    if BACKEND == "configmap":
        await bed.start_replica()

    async def all_checked() -> bool:
        return len(await bed.checked()) >= clusters

    checked = await until(all_checked, 2 * INTERVAL + 120, "every cluster's first check")
    if VERBOSE:
        print(f"    every cluster first checked {checked - started:.1f} s after the start")
    return checked


# --- what the channel shows ------------------------------------------------------------------


def posts(slack: SlackEmulator, since: float = 0.0) -> list[ApiCall]:
    return [c for c in slack.calls if c.method == "chat.postMessage" and c.ok and c.at >= since]


def roots_of(slack: SlackEmulator, prefix: str, since: float = 0.0) -> list[ApiCall]:
    return [
        c
        for c in posts(slack, since)
        if not c.params.get("thread_ts") and str(c.params.get("text", "")).startswith(prefix)
    ]


def replies_to(slack: SlackEmulator, root: ApiCall, prefix: str) -> list[ApiCall]:
    ts = root.response.get("ts")
    return [
        c
        for c in posts(slack, root.at)
        if c.params.get("thread_ts") == ts and str(c.params.get("text", "")).startswith(prefix)
    ]


async def page(bed: Bed, cluster: str, since: float, seconds: float) -> ApiCall:
    """The first root paging `cluster` (a name, a prefix of names ending in "-", or "" for any)
    posted after `since`."""
    prefix = f"[CRITICAL] {cluster}" + ("" if cluster.endswith("-") or not cluster else ":")

    async def posted() -> bool:
        return bool(roots_of(bed.slack, prefix, since))

    await until(posted, seconds, f"a page of {cluster or 'the fleet'}")
    return roots_of(bed.slack, prefix, since)[0]


async def diagnosis(bed: Bed, root: ApiCall, seconds: float) -> ApiCall:
    async def posted() -> bool:
        return bool(replies_to(bed.slack, root, "Diagnosis"))

    await until(posted, seconds, "the page's diagnosis")
    return replies_to(bed.slack, root, "Diagnosis")[0]


VERBOSE = False
BACKEND = "configmap"


class Spent:
    """With --verbose: the CPU seconds each process used over a span (whose CPU a page waited
    on: the holder's, or the simulator's, which serves the whole fleet's API servers alone)."""

    def __init__(self, bed: Bed) -> None:
        self.pids = {
            "simulator": bed.worlds.pid,
            **{f"replica {r.pid}": r.pid for r in bed.replicas},
        }
        self.before = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        self.started = time.monotonic()

    def say(self, what: str) -> None:
        if not VERBOSE:
            return
        span = time.monotonic() - self.started
        used = ", ".join(
            f"{name} {cpu_seconds(pid) - self.before[name]:.1f} s"
            for name, pid in self.pids.items()
        )
        print(f"    CPU used over the {span:.1f} s to {what}: {used}")


def explain(slack: SlackEmulator, since: float, until_: float, what: str) -> None:
    """With --verbose: every Slack call between a cause and its page, to see what it waited on."""
    if not VERBOSE:
        return
    print(f"    calls between the cause and {what}:")
    for c in slack.calls:
        if since <= c.at <= until_:
            text = str(c.params.get("text", ""))[:50]
            print(f"      +{c.at - since:6.2f}s {c.method} {c.status} {text!r}")


def rate_limited(slack: SlackEmulator, since: float) -> int:
    return sum(1 for c in slack.calls if c.rate_limited and c.at >= since)


# --- scenarios -------------------------------------------------------------------------------


async def at_rest(bed: Bed, clusters: int, checked: float) -> None:
    """A window at rest: each replica's RSS and CPU, API requests per cluster per interval."""
    window = max(1.1 * INTERVAL, 20.0)
    # At rest once the first timed-pause and -suspend sweeps, spread over the first 30 s of the
    # holder's jobs, are done (bench/fleet_scale.py); on a busy machine they start late.
    await asyncio.sleep(max(0.0, checked + REST_AFTER_START - time.monotonic()))
    before = {r.pid: cpu_seconds(r.pid) for r in bed.replicas}
    start_up = await bed.ask("requests by kind")
    if VERBOSE:
        print(f"    requests from the start to the window at rest: {start_up}")
    started = time.monotonic()
    await asyncio.sleep(window)  # a bench measures a span of time at rest; nothing to wait for
    cycles = (time.monotonic() - started) / INTERVAL
    kinds = await bed.ask("requests by kind")
    # The hourly lists and watch requests a window cannot see, at their rate (fleet_scale.py).
    made = sum(kinds.values()) / cycles / clusters + HOURLY_REQUESTS * INTERVAL / 3600
    if VERBOSE:
        print(f"    requests in the window at rest: {kinds}")
    holder = await bed.holder()
    print(f"  {clusters} clusters at rest on ConfigMaps, two replicas:")
    for replica in bed.replicas:
        threads, rss = proc_status(replica.pid)
        core = (cpu_seconds(replica.pid) - before[replica.pid]) / cycles / INTERVAL * 100
        role = "holder" if replica is holder else "standby"
        print(
            f"    {role}: {goal('RSS', round(rss, 1), 250, 'MB')}; "
            f"{goal('CPU, % of one core', round(core, 1), 20, '%')}; threads {threads}"
        )
        if replica is holder:
            record(
                f"{clusters} clusters on ConfigMaps at rest: RSS (holder)", round(rss, 1), 250, "MB"
            )
            record(
                f"{clusters} clusters on ConfigMaps at rest: CPU, % of one core (holder)",
                round(core, 1),
                20,
                "%",
            )
    label = "API requests per cluster per interval, both replicas"
    print(f"    {goal(label, round(made, 2), 1, '')}")
    record(
        f"{clusters} clusters on ConfigMaps at rest: API requests per cluster per interval",
        round(made, 2),
        1,
    )


async def all_stored(bed: Bed, documents: int, seconds: float) -> dict[str, dict[str, int]]:
    """Wait until `documents` state ConfigMaps hold an open incident; the states."""
    found: dict[str, dict[str, int]] = {}

    async def stored() -> bool:
        nonlocal found
        found = await bed.ask("states")
        return sum(1 for s in found.values() if s["open"]) >= documents

    await until(stored, seconds, f"{documents} clusters' states stored", every=1.0)
    return found


async def grouped(workdir: Path, slack: SlackEmulator, clusters: int, hold: float) -> None:
    bed = await open_bed(workdir, slack, clusters, 0, {"hold": f"{hold:g}s", "group_clusters": 3})
    try:
        await at_rest(bed, clusters, await start_pair(bed, clusters))
        spent = Spent(bed)
        broke = time.monotonic()
        await bed.ask("break", world="fleet", how="dependencies_missing")
        root = await page(bed, "", broke, hold + 300)
        spent.say("the fleet root")
        explain(slack, broke, root.at, "the fleet root")
        states = await all_stored(bed, clusters, 600)
        # One more interval: a second root, had there been one, would have been posted by now.
        await asyncio.sleep(INTERVAL)
        fleet_roots = len(roots_of(slack, "[CRITICAL]", broke))
        is_fleet = bool(re.match(r"\[CRITICAL\] \d+ clusters:", str(root.params.get("text"))))
        hours = (time.monotonic() - broke) / 3600
        largest = max(s["bytes"] for s in states.values())
    finally:
        await bed.close()
    paged = root.at - broke
    print(f"  {clusters} clusters failing at once, group_clusters 3:")
    print(f"    {goal('fleet root posted after the break', round(paged, 2), hold + 5, 's')}")
    print(
        f"    roots posted: {fleet_roots} (goal: 1, the fleet's: {is_fleet}); "
        f"states stored: {len(states)} documents"
    )
    share = round(largest / BUDGET * 100, 1)
    print(f"    {goal('largest document, % of its budget', share, 80, '%')}")
    print(f"    429s: {rate_limited(slack, broke) / hours:.0f} an hour")
    record(
        f"{clusters} clusters failing, grouped: fleet root after the break",
        round(paged, 2),
        hold + 5,
        "s",
    )
    record_text(
        f"{clusters} clusters failing, grouped: roots posted",
        "1",
        str(fleet_roots),
        fleet_roots == 1 and is_fleet,
    )
    record(
        f"{clusters} clusters failing, grouped: largest document, % of budget",
        round(largest / BUDGET * 100, 1),
        80,
        "%",
    )
    record(
        f"{clusters} clusters failing, grouped: 429s an hour",
        round(rate_limited(slack, broke) / hours),
        None,
    )


async def ungrouped(workdir: Path, slack: SlackEmulator, clusters: int, hold: float) -> None:
    bed = await open_bed(workdir, slack, clusters, 0, {"hold": f"{hold:g}s"})
    try:
        await start_pair(bed, clusters)
        spent = Spent(bed)
        broke = time.monotonic()
        await bed.ask("break", world="fleet", how="dependencies_missing")
        first = await page(bed, "gpu-", broke, hold + 300)
        spent.say("the first root")
        explain(slack, broke, first.at, "the first root")

        async def every_root() -> bool:
            return len(roots_of(slack, "[CRITICAL]", broke)) >= clusters

        # At Slack's pace: a root a second in the channel, and the diagnoses between them.
        last = await until(every_root, clusters * 2.5 + 300, "every cluster's root")
        states = await all_stored(bed, clusters, 120)
        hours = (time.monotonic() - broke) / 3600
    finally:
        await bed.close()
    names = [
        str(c.params.get("text", "")).split(":", 1)[0] for c in roots_of(slack, "[CRITICAL]", broke)
    ]
    twice = len(names) - len(set(names))
    print(f"  {clusters} clusters failing at once, grouping off:")
    print(f"    {goal('first root after the break', round(first.at - broke, 2), hold + 5, 's')}")
    print(
        f"    every root posted {last - broke:.0f} s after the break "
        f"({clusters / (last - broke) * 60:.0f} a minute); posted twice: {twice}; "
        f"states stored: {len(states)}"
    )
    print(f"    429s: {rate_limited(slack, broke) / hours:.0f} an hour")
    record(
        f"{clusters} clusters failing, ungrouped: first root after the break",
        round(first.at - broke, 2),
        hold + 5,
        "s",
    )
    record_text(
        f"{clusters} clusters failing, ungrouped: every root posted, none twice",
        "all, 0 twice",
        f"{len(set(names))}, {twice} twice",
        len(set(names)) == clusters and twice == 0,
    )
    record(
        f"{clusters} clusters failing, ungrouped: 429s an hour",
        round(rate_limited(slack, broke) / hours),
        None,
    )


async def evictions(workdir: Path, slack: SlackEmulator, hold: float) -> None:
    bed = await open_bed(workdir, slack, 50, 1, {"hold": f"{hold:g}s"}, notices=True)
    try:
        await bed.ask("seed", clusters=bed.fleet, threads=300)
        await start_pair(bed, 51)
        broke = time.monotonic()
        await bed.ask("break", world="probe-0", how="delete_kai_config")
        root = await page(bed, "probe-0", broke, hold + 120)
        states = await bed.ask("states")
    finally:
        await bed.close()
    largest = max(s["bytes"] for s in states.values())
    print("  50 clusters with 300 eviction threads each, then a new critical page:")
    print(f"    {goal('paged after the cause', round(root.at - broke, 2), hold + 5, 's')}")
    print(f"    largest document {largest:,} bytes")
    record(
        "50 clusters x 300 eviction threads: a new page after its cause",
        round(root.at - broke, 2),
        hold + 5,
        "s",
    )


async def settle_incidents(bed: Bed, count: int) -> None:
    """Wait until `count` incidents are paged and diagnosed and their states owe Slack nothing."""

    async def owed_nothing() -> bool:
        diagnosed = [
            c
            for c in posts(bed.slack)
            if c.params.get("thread_ts") and str(c.params.get("text", "")).startswith("Diagnosis")
        ]
        if len(roots_of(bed.slack, "[CRITICAL]")) < count or len(diagnosed) < count:
            return False
        return all(s["owed"] == 0 for s in (await bed.ask("states")).values())

    await until(owed_nothing, count * 6 + 300, f"{count} incidents paged and diagnosed", 1.0)


async def take_over(bed: Bed) -> float:
    """Restart the holder (SIGTERM, then a new process); the moment the other one holds."""
    holder = await bed.holder()
    assert holder is not None, "no replica holds the Lease"
    standby = next(r for r in bed.replicas if r is not holder)
    await bed.stop_replica(holder)

    async def standby_holds() -> bool:
        return await bed.holder() is standby

    moved = await until(standby_holds, 3 * LEASE_SECONDS, "the standby to take the Lease")
    await bed.start_replica()
    return moved


def channel_calls(slack: SlackEmulator, since: float, until_: float, skip: set[str]) -> int:
    """Slack calls about the channel in the window, leaving out those of the `skip` threads
    (the new page's root and replies)."""
    counted = 0
    for c in slack.calls:
        if c.method not in CHANNEL_CALLS or not since <= c.at <= until_:
            continue
        thread = str(c.params.get("thread_ts") or c.params.get("ts") or "")
        text = str(c.params.get("text", ""))
        if thread in skip or text.startswith("[CRITICAL] probe-"):
            continue
        counted += 1
    return counted


async def takeover(workdir: Path, slack: SlackEmulator, hold: float) -> None:
    open_incidents = 50
    bed = await open_bed(workdir, slack, open_incidents, 2, {"hold": f"{hold:g}s"})
    try:
        await start_pair(bed, open_incidents + 2)
        await bed.ask("break", world="fleet", how="dependencies_missing")
        await settle_incidents(bed, open_incidents)
        slack.flood(ALERT_CHANNEL, 4000)
        skipped_before = sum(r.skipped() for r in bed.replicas)
        moved = await take_over(bed)
        await bed.ask("break", world="probe-0", how="delete_kai_config")
        broke = time.monotonic()
        root = await page(bed, "probe-0", broke, hold + 120)
        diagnosed = await diagnosis(bed, root, hold + 120)
        explain(slack, broke, diagnosed.at, "the diagnosis")
        await asyncio.sleep(max(0.0, moved + 60 - time.monotonic()))  # the settle window, and more
        skip = {str(root.response.get("ts"))}
        per_incident = channel_calls(slack, moved, moved + 60, skip) / open_incidents
        skipped = sum(r.skipped() for r in bed.replicas) - skipped_before

        slack.fault_rule = lambda method: (
            Fault(503, 0, "service_unavailable") if method == "conversations.history" else None
        )
        await take_over(bed)
        await bed.ask("break", world="probe-1", how="delete_kai_config")
        broke_blind = time.monotonic()
        blind = await page(bed, "probe-1", broke_blind, hold + 120)
        explain(slack, broke_blind, blind.at, "the page")
        slack.fault_rule = None
    finally:
        await bed.close()
    print("  the holder restarted with 50 incidents open and 4 000 messages in the channel:")
    print(f"    {goal('a new page after its cause', round(root.at - broke, 2), hold + 5, 's')}")
    diagnosed_after = round(diagnosed.at - broke, 2)
    print(f"    {goal('its diagnosis after the cause', diagnosed_after, hold + 10, 's')}")
    print(f"    {goal('checks skipped', skipped, 0, '')}")
    print(
        f"    {goal('Slack calls per open incident, first minute', round(per_incident, 2), 2, '')}"
    )
    print(
        f"    with conversations.history failing, after another takeover: "
        f"{goal('a new page', round(blind.at - broke_blind, 2), hold + 2, 's')}"
    )
    record(
        "takeover, 50 open, 4 000 messages: a new page after its cause",
        round(root.at - broke, 2),
        hold + 5,
        "s",
    )
    record(
        "takeover, 50 open, 4 000 messages: its diagnosis after the cause",
        round(diagnosed.at - broke, 2),
        hold + 10,
        "s",
    )
    record("takeover, 50 open, 4 000 messages: checks skipped", skipped, 0)
    record("takeover: Slack calls per open incident", round(per_incident, 2), 2)
    record(
        "conversations.history failing: a new page after its cause",
        round(blind.at - broke_blind, 2),
        hold + 2,
        "s",
    )


async def first_interval(workdir: Path, slack: SlackEmulator, hold: float, rounds: int) -> None:
    """Each round: a fresh pair of replicas, and a probe broken at a random moment of the first
    interval after the first replica is ready."""
    bed = await open_bed(workdir, slack, 10, rounds, {"hold": f"{hold:g}s"})
    times = []
    try:
        for n in range(rounds):
            ready = time.monotonic()
            await bed.start_replica()
            await bed.start_replica()
            await asyncio.sleep(max(0.0, ready + random.uniform(0, INTERVAL) - time.monotonic()))
            broke = time.monotonic()
            await bed.ask("break", world=f"probe-{n}", how="delete_kai_config")
            root = await page(bed, f"probe-{n}", broke, hold + 120)
            times.append(root.at - broke)
            for replica in list(bed.replicas):
                await bed.stop_replica(replica)
    finally:
        await bed.close()
    worst = max(times)
    print(f"  a cause at a random moment of the first interval after a start ({rounds} rounds):")
    print(
        f"    {goal('paged after the cause, worst', round(worst, 2), hold + 3, 's')}"
        f" (each: {', '.join(f'{t:.2f}' for t in times)})"
    )
    record(
        "a cause in the first interval after a start: paged after it, worst",
        round(worst, 2),
        hold + 3,
        "s",
    )


async def main(args: argparse.Namespace) -> None:
    scenarios: dict[str, Callable[[Path, SlackEmulator], Awaitable[None]]] = {
        "grouped": lambda w, s: grouped(w, s, args.clusters, args.hold),
        "ungrouped": lambda w, s: ungrouped(w, s, args.ungrouped_clusters, args.hold),
        "evictions": lambda w, s: evictions(w, s, args.hold),
        "takeover": lambda w, s: takeover(w, s, args.hold),
        "first-interval": lambda w, s: first_interval(w, s, args.hold, args.rounds),
    }
    print(
        f"two replicas, state.backend configmap, Slack's tiers on; alerts.interval "
        f"{INTERVAL:g}s, hold {args.hold:g}s"
    )
    for name in args.only or list(scenarios):
        with tempfile.TemporaryDirectory() as tmp:
            workdir = Path(tmp) if args.keep is None else args.keep / name
            workdir.mkdir(parents=True, exist_ok=True)
            async with SlackEmulator() as slack:  # each scenario its own workspace and limits
                add_demo_people(slack)
                await scenarios[name](workdir, slack)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--ungrouped-clusters", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--only",
        nargs="+",
        choices=["grouped", "ungrouped", "evictions", "takeover", "first-interval"],
    )
    parser.add_argument(
        "--backend",
        choices=["configmap", "sqlite", "nolease"],
        default="configmap",
        help="configmap: two replicas and a Lease (the figures); for comparison, sqlite: one "
        "replica on SQLite, nolease: one replica on ConfigMaps without a Lease",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="the Slack calls before each page, and the CPU each process used meanwhile",
    )
    parser.add_argument(
        "--keep", type=Path, help="keep each scenario's config and replica logs in KEEP/SCENARIO"
    )
    arguments = parser.parse_args()
    VERBOSE = arguments.verbose
    BACKEND = arguments.backend
    asyncio.run(main(arguments))
