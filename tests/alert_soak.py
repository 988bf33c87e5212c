"""A seeded randomised soak of alert delivery: many incidents under random fault schedules.

Per seed: the whole stack (one replica, or two sharing a Lease), a Slack that randomly answers
429, fails with a 5xx before or after doing the call, drops the connection before or after
doing it, or answers after the client gave up; an API server that randomly fails reads; Lease
holders that stop renewing (a failover); replicas restarted, or killed while a post is on the
wire. Each incident is broken (its page mentions the on-call group, its first reply is its
diagnosis), acknowledged now and then (a signed `/kai ack`), left unanswered long enough to
escalate now and then, and healed;
then faults stop, the checks go on until nothing is owed, and the invariant checker reads the
final channel. Run `python tests/alert_soak.py --seeds 1-20` (`make soak`); the test suite runs a
few seeds (`tests/e2e/test_alert_soak.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from alert_invariants import check_channel, replies_noted
from alert_stack import SLACK_TIMEOUT, Clock, Gate, alert_stack

from bot.alerts.model import ClusterAlerts, Phase
from bot.service import schedule
from bot.service.server import Service
from testbed.sim import breakage
from testbed.slackemu.records import Fault
from testbed.stack import ALERT_CHANNEL, CLUSTER, Stack

STEP = 30  # seconds between checks
WRITES = ("chat.postMessage", "chat.update", "chat.delete")
READS = ("conversations.history", "conversations.replies")
MAX_STEPS = 40  # per phase of an incident, and for the quiet period at the end
# Pages mention the on-call group; unanswered for a check, an incident escalates.
ALERTS = {
    "mention": ["@platform-oncall"],
    "escalate_after": "30s",
    "escalate_to": ["@platform-oncall"],
}


@dataclass
class Figures:
    """What one soak did and found."""

    seeds: list[int] = field(default_factory=list)
    incidents: int = 0
    diagnoses: int = 0
    escalations: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    lost: int = 0
    duplicated: int = 0
    problems: list[str] = field(default_factory=list)

    def add(self, other: Figures) -> None:
        self.seeds += other.seeds
        self.incidents += other.incidents
        self.diagnoses += other.diagnoses
        self.escalations += other.escalations
        self.faults.update(other.faults)
        self.lost += other.lost
        self.duplicated += other.duplicated
        self.problems += other.problems

    def summary(self) -> str:
        faults = ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items()))
        seeds = f"{self.seeds[0]}-{self.seeds[-1]}" if len(self.seeds) > 1 else str(self.seeds)
        return (
            f"seeds {seeds} ({len(self.seeds)}): incidents {self.incidents} (diagnoses "
            f"{self.diagnoses}, escalations {self.escalations}), faults injected "
            f"{sum(self.faults.values())} ({faults}); lost {self.lost}, "
            f"duplicated {self.duplicated}"
        )


class Chaos:
    """The random fault schedule of one seed, as the emulator's fault rule."""

    def __init__(self, rng: random.Random, figures: Figures) -> None:
        self.rng = rng
        self.figures = figures
        self.on = True
        self.kill_gate: Gate | None = None  # armed: hold the next post on the wire

    def __call__(self, method: str) -> Fault | None:
        if method == "chat.postMessage" and self.kill_gate is not None:
            gate, self.kill_gate = self.kill_gate, None
            self.figures.faults["kill mid-post"] += 1
            return Fault(200, 0, "", "delay_before", gate=gate)
        if not self.on or method not in WRITES + READS or self.rng.random() > 0.25:
            return None
        kind = self.rng.choices(
            ["429", "5xx", "5xx after", "drop before", "drop after", "late answer"],
            weights=[3, 3, 2, 2, 3, 1],
        )[0]
        self.figures.faults[kind] += 1
        return {
            "429": Fault(429, 0, "ratelimited"),
            "5xx": Fault(503, 0, "service_unavailable"),
            "5xx after": Fault(503, 0, "service_unavailable", "applied_error"),
            "drop before": Fault(200, 0, "", "drop_before"),
            "drop after": Fault(200, 0, "", "drop_after"),
            "late answer": Fault(200, 0, "", "delay_after", SLACK_TIMEOUT * 1.5),
        }[kind]


class Soak:
    """One seed: the stack, its replicas, the clock, and the random choices."""

    def __init__(self, seed: int, stack: Stack, clock: Clock, replicas: list[Service]) -> None:
        self.rng = random.Random(seed)
        self.stack, self.clock, self.replicas = stack, clock, replicas
        self.figures = Figures([seed])
        self.chaos = Chaos(self.rng, self.figures)
        stack.slack.fault_rule = self.chaos

    async def run(self, incidents: int) -> Figures:
        for _ in range(incidents):
            breakage.dependencies_missing(self.stack.sim)
            await self.until(lambda s: _phase(s) is Phase.FIRING)
            if self.rng.random() < 0.5:
                await self.acknowledge()
            for _ in range(self.rng.randrange(4)):  # long enough, unanswered, it escalates
                await self.step()
            breakage.heal(self.stack.sim)
            await self.until(lambda s: _phase(s) is None)
            self.figures.incidents += 1
        self.chaos.on = False
        self.stack.sim.faults.clear()
        await self.until(lambda s: not s.closing and not any(a.outbox for a in s.alerts.values()))
        return self.judge()

    async def until(self, done: Callable[[ClusterAlerts], bool]) -> None:
        for _ in range(MAX_STEPS):
            await self.step()
            state = await self.state()
            if state is not None and done(state):
                return
        self.figures.problems.append("the alert never got where the soak drove it")

    async def step(self) -> None:
        self.clock.advance(STEP)
        if self.chaos.on and self.rng.random() < 0.15:
            self.stack.sim.faults.add(503, verb="get", times=1)
            self.figures.faults["api 503"] += 1
        await self.renew()
        if self.chaos.on and self.rng.random() < 0.06:
            await self.restart(self.rng.randrange(len(self.replicas)))
        if self.chaos.on and self.rng.random() < 0.06:
            await self.kill_mid_post()
        for replica in self.replicas:
            await schedule.check_cluster(replica.deps, CLUSTER)

    async def renew(self) -> None:
        for replica in self.replicas:
            holder = replica.deps.lease is not None and replica.deps.lease.is_leader()
            if holder and len(self.replicas) > 1 and self.rng.random() < 0.1:
                self.figures.faults["lease failover"] += 1
                continue  # the holder misses its renewal: the other one takes over
            await schedule.keep_lease(replica.deps)

    async def kill_mid_post(self) -> None:
        """Kill a replica while its next post is on the wire; Slack still does that post
        while the replica is down; then it starts again."""
        gate = Gate()
        self.chaos.kill_gate = gate
        index = self.rng.randrange(len(self.replicas))
        task = asyncio.create_task(schedule.check_cluster(self.replicas[index].deps, CLUSTER))
        arrived = asyncio.create_task(gate.arrived.wait())
        await asyncio.wait([task, arrived], return_when=asyncio.FIRST_COMPLETED)
        arrived.cancel()
        task.cancel()
        await asyncio.gather(task, arrived, return_exceptions=True)
        self.chaos.kill_gate = None
        if gate.arrived.is_set():  # a post was on the wire: the replica died with it
            posts = len(self.stack.slack.calls_to("chat.postMessage"))
            gate.set()
            await self.stack.slack.wait_for_call("chat.postMessage", count=posts + 1)
            await self.restart(index)

    async def restart(self, index: int) -> None:
        self.figures.faults["restart"] += 1
        if index == 0:
            await self.stack.restart_service()
            self.replicas[0] = self.stack.service
            return
        await self.replicas[index].stop()
        self.replicas[index] = self.stack.make_service()
        await self.replicas[index].start()

    async def acknowledge(self) -> None:
        state = await self.state()
        alert = next(iter(state.alerts.values()), None) if state else None
        if alert is not None:
            await self.stack.command(f"ack {alert.alert_id}")

    async def state(self) -> ClusterAlerts | None:
        desk = self.stack.service.deps.alerts
        assert desk is not None
        try:
            return (await desk.list_alerts(CLUSTER))[0]
        except Exception:  # the store itself is not faulted; be safe anyway
            return None

    def judge(self) -> Figures:
        verdict = check_channel(self.stack.slack, ALERT_CHANNEL)
        wanted = self.figures.incidents
        found = sum(
            1
            for m in self.stack.slack.root_messages(ALERT_CHANNEL)
            if "DependenciesFulfilled" in m.text and m.text.startswith("[RESOLVED")
        )
        self.figures.diagnoses += replies_noted(self.stack.slack, ALERT_CHANNEL, "diagnosis")
        self.figures.escalations += replies_noted(self.stack.slack, ALERT_CHANNEL, "escalated")
        self.figures.lost += verdict.lost + max(0, wanted - found)
        self.figures.duplicated += verdict.duplicated + max(0, found - wanted)
        self.figures.problems += [f"seed {self.figures.seeds[0]}: {p}" for p in verdict.problems]
        return self.figures


def _phase(state: ClusterAlerts) -> Phase | None:
    alert = next((a for a in state.alerts.values() if a.key.kind == "Config"), None)
    if alert is None:
        return None
    return Phase.FIRING if alert.phase in (Phase.FIRING, Phase.ACKNOWLEDGED) else alert.phase


async def soak_seed(seed: int, workdir: Path, incidents: int) -> Figures:
    """One seed: two replicas sharing a Lease for even seeds, one replica for odd ones."""
    clock = Clock()
    lease = {"enabled": True, "duration": "1h" if seed % 2 else "15s"}
    kubernetes = {"request_timeout": "5s", "retries": 0}  # a failed read fails the check
    alerts = {**ALERTS, "hold": "60s", "interval": "1h", "repeat": "4h"}
    async with alert_stack(workdir, clock, lease=lease, kubernetes=kubernetes, alerts=alerts) as (
        stack,
        _,
    ):
        replicas = [stack.service]
        if seed % 2 == 0:
            replicas.append(stack.make_service())
            await replicas[1].start()
        soak = Soak(seed, stack, clock, replicas)
        try:
            return await soak.run(incidents)
        finally:
            for replica in soak.replicas[1:]:
                await replica.stop()


async def soak(seeds: list[int], incidents: int) -> Figures:
    total = Figures()
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            total.add(await soak_seed(seed, Path(tmp), incidents))
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1-20", help="a range like 1-20")
    parser.add_argument("--incidents", type=int, default=6, help="incidents per seed")
    parser.add_argument(
        "--log",
        default=str(Path(tempfile.gettempdir()) / "kai-chatops-soak.log"),
        help="where the service's log goes (the faults make it warn a lot)",
    )
    args = parser.parse_args()
    logging.basicConfig(filename=args.log, filemode="w", level=logging.WARNING)
    first, _, last = args.seeds.partition("-")
    seeds = list(range(int(first), int(last or first) + 1))
    started = time.monotonic()
    figures = asyncio.run(soak(seeds, args.incidents))
    print(f"{figures.summary()} in {time.monotonic() - started:.0f}s (service log: {args.log})")
    for problem in figures.problems:
        print("  " + problem)
    sys.exit(1 if figures.lost or figures.duplicated or figures.problems else 0)


if __name__ == "__main__":
    main()
