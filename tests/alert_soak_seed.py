"""One seed of the alert delivery soak (`tests/alert_soak.py` runs many side by side): the
stack, its replicas, the fault schedule of its `SeedPlan`, the steps an incident takes, the
observers that watch the channel while it happens, and the judgement over the final channel.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from alert_chaos import Chaos, Figures, SeedPlan
from alert_invariants import (
    ChannelWatch,
    HolderLog,
    check_channel,
    check_notices,
    kept_messages,
    payload,
    replies_noted,
)
from alert_stack import Gate, alert_stack, identity, lease_holder
from clocks import Clock
from waiting import wait_until

from bot.alerts.model import FLEET, ClusterAlerts, Phase
from bot.service import jobs_alerts
from bot.service.server import Service
from testbed.sim import breakage, evictions
from testbed.slackemu import Hold, metadata_by
from testbed.slackemu.records import Fault
from testbed.stack import ALERT_CHANNEL, CLUSTER, Stack

STEP = 30  # seconds between checks
HOLD_STEPS = 2  # the alerts' `hold` (60 s) in steps: a page comes at the check after it
MAX_STEPS = 40  # per phase of an incident, and for the quiet period at the end
NOISE = 1200  # messages people post at once into a busy channel or thread
NOTICES = "C0EVICTIONS"  # where the eviction notices go ("*")
TOLD_WITHIN = 60.0  # seconds (real time) for the holder's watch to record every eviction
# Pages mention the on-call group; unanswered for a check, an incident escalates.
ALERTS = {
    "mention": ["@platform-oncall"],
    "escalate_after": "30s",
    "escalate_to": ["@platform-oncall"],
}


class Soak:
    """One seed: the stack, its replicas, the clock, the random choices and the watchers."""

    def __init__(
        self, plan: SeedPlan, stack: Stack, clock: Clock, replicas: list[Service], log: HolderLog
    ) -> None:
        self.rng = random.Random(plan.seed)
        self.plan, self.stack, self.clock, self.replicas = plan, stack, clock, replicas
        self.holders = log
        self.figures = Figures([plan.seed])
        self.chaos = Chaos(self.rng, self.figures)
        self.watch = ChannelWatch(stack.slack, ALERT_CHANNEL, per_failure=bool(plan.fleet))
        self.clusters = plan.fleet or (CLUSTER,)
        stack.slack.observers.append(self.watch)
        stack.slack.fault_rule = self._fault
        self.causes: list[int] = []  # the step each incident's cause came
        # Steps a post was faulted or held, a replica died, or the Lease moved: what may delay
        # a page (the checks read a watched copy; the state retries its own faults).
        self.disturbed: set[int] = set()
        stack.slack.clock_offset = plan.slack_clock
        self.steps = 0
        self.held = self.hold_writes()
        self.inflight: tuple[Hold, str, int] | None = None  # a failover's held post
        self.kept: set[str] = set()  # every message the state has kept (adopted copies too)
        self.evicted: dict[str, dict[str, Any]] = {}  # Evict Event uid -> the Event
        self.rises: dict[str, int] = {}  # uid -> how often its count rose (0 or 1)

    def hold_writes(self) -> tuple[Hold, str | None, int]:
        """A fresh hold on random writes, with the Lease holder and step it began at."""
        hold = self.stack.slack.hold_calls(self._holds)
        return hold, lease_holder(self.stack.sim), self.steps

    def _fault(self, method: str) -> Fault | None:
        """The chaos's fault for a call; a post's step is noted (a page it delays is not
        late)."""
        fault = self.chaos(method)
        if fault is not None and method == "chat.postMessage":
            self.disturbed.add(self.watch.step)
        return fault

    def _holds(self, method: str, params: Mapping[str, Any]) -> bool:
        held = self.chaos.holds(method, params)
        if held and method == "chat.postMessage":
            self.disturbed.add(self.watch.step)
        return held

    async def run(self, incidents: int) -> Figures:
        slow_edit: Hold | None = None
        for number in range(incidents):
            bury = self.plan.busy and number % 2 == 0
            self.evict()
            breakage.dependencies_missing(self.stack.sim)
            self.causes.append(self.watch.step)
            if bury:  # the root lands, its answer is lost, and history cannot be read
                self.stack.slack.fail_next("chat.postMessage", status=200, mode="drop_after")
                self.chaos.history_down = True
            await self.until(lambda s: _phase(s) is Phase.FIRING)
            if bury:
                await self.bury_root()
            elif self.plan.busy:
                await self.bury_latest_reply()
            elif self.rng.random() < 0.5:
                slow_edit = self.hold_next_edit()
                await self.acknowledge()
            for _ in range(self.rng.randrange(4)):  # long enough, unanswered, it escalates
                await self.step()
            breakage.heal(self.stack.sim, evictions_too=False)  # Events outlive it
            await self.until(lambda s: _phase(s) is None)
            await self.land_last(slow_edit)
            slow_edit = None
            self.figures.incidents += 1
        await self.calm()
        await self.until_told()
        await self.until(
            lambda s: (
                not s.closing
                and not any(a.outbox for a in s.alerts.values())
                and not any(t.outbox for t in s.threads)
            )
        )
        return self.judge()

    def evict(self) -> None:
        """KAI evicts once more (an Evict Event as its scheduler records it, at the service's
        time); now and then an earlier Event counts a repeat (one reply owed under its notice)."""
        sim = self.stack.sim
        group = sim.get(evictions.PODGROUP, "PodGroup", evictions.EVICTED, evictions.EVICTED_NS)
        if group is None:  # the first: a reclaim, its Event at the simulator's time
            evictions.reclaim(sim)
            group = sim.get(evictions.PODGROUP, "PodGroup", evictions.EVICTED, evictions.EVICTED_NS)
            events = sim.store.list_objects(sim.store.resolve("v1", "Event"), None)["items"]
            for event in events:
                if event.get("reason") == "Evict":
                    self.evicted[event["metadata"]["uid"]] = event
                    self.rises[event["metadata"]["uid"]] = 0
        action = self.rng.choice(["preempt", "reclaim", "consolidation"])
        notes = evictions.kai_annotations(
            action, self.rng.randint(1, 4), evictions.RECLAIMER, evictions.RECLAIMER_NS
        )
        event = evictions.evict_event(group or {}, f"Pod {action}", notes, self.clock.now)
        event["metadata"]["name"] += f"-{len(self.evicted)}"
        stored = sim.apply(event)
        self.evicted[stored["metadata"]["uid"]] = stored
        self.rises[stored["metadata"]["uid"]] = 0
        once = [uid for uid, rose in self.rises.items() if not rose]
        if len(once) > 1 and self.rng.random() < 0.5:
            uid = self.rng.choice(once[:-1])
            evictions.evicted_again(sim, self.evicted[uid], self.clock.now)
            self.rises[uid] = 1

    async def until_told(self) -> None:
        """Wait (real time: the holder's watch runs beside the check steps) until the state
        holds every eviction at its latest count."""
        try:
            await wait_until(self.all_recorded, TOLD_WITHIN, "every eviction recorded", every=0.1)
        except TimeoutError:  # a finding of the soak, not the end of its run
            self.figures.problems.append(f"seed {self.plan.seed}: evictions never all recorded")

    async def all_recorded(self) -> bool:
        """Every cluster's state (a fleet's clusters all read the one simulator, so each tells
        every Event under its own name) holds every eviction at its latest count."""
        counts: dict[str, int] = {}
        for cluster in self.clusters:
            state = await self.cluster_state(cluster)
            if state is None:
                return False
            counts |= {t.key: t.count for t in state.threads}
        return all(counts.get(key) == count for key, count in self.told().items())

    async def cluster_state(self, cluster: str) -> ClusterAlerts | None:
        desk = self.stack.service.deps.alerts
        assert desk is not None
        try:
            return (await desk.store.load(cluster)).state
        except Exception:  # the store is faulted on ConfigMap seeds: ask again next step
            return None

    def told(self) -> dict[str, int]:
        """Each notice thread owed (its cluster's, per Event) and the Event's final count."""
        return {
            _key(cluster, uid): 1 + rose
            for uid, rose in self.rises.items()
            for cluster in self.clusters
        }

    def hold_next_edit(self) -> Hold | None:
        """On some incidents the acknowledgement's edit of the root is held on the wire (its
        client gives up and sends it again) until the incident resolved: then it lands last."""
        if not self.chaos.on or self.rng.random() > 0.5:
            return None
        taken: list[str] = []

        def first_edit(method: str, params: Mapping[str, Any]) -> bool:
            if method != "chat.update" or taken:
                return False
            taken.append(method)
            self.figures.faults["edit held until resolved"] += 1
            return True

        return self.stack.slack.hold_calls(first_edit)

    async def land_last(self, hold: Hold | None) -> None:
        """A held edit lands now, after the edit to resolved: the channel must mend it."""
        if hold is not None:
            await self.release(hold)

    async def calm(self) -> None:
        """Faults stop; whatever is still held on the wire lands now."""
        self.chaos.on = False
        self.chaos.history_down = False
        self.stack.sim.faults.clear()
        await self.release(self.held[0])
        if self.inflight is not None:
            await self.release(self.inflight[0])
            self.inflight = None

    async def bury_root(self) -> None:
        """People post a thousand messages while history is down; then it comes back."""
        self.stack.slack.flood(ALERT_CHANNEL, NOISE)
        self.figures.faults["root buried under noise"] += 1
        await self.step()
        self.chaos.history_down = False

    async def bury_latest_reply(self) -> None:
        """A war-room thread of a thousand replies; then an ack whose reply's answer is lost."""
        roots = [
            m
            for m in self.stack.slack.root_messages(ALERT_CHANNEL)
            if str(payload(m).get("effect") or "").endswith(":0")
        ]
        if not roots:
            return
        self.stack.slack.flood(ALERT_CHANNEL, NOISE, thread_ts=roots[-1].ts)
        self.figures.faults["reply buried in a long thread"] += 1
        self.stack.slack.fail_next("chat.postMessage", status=200, mode="drop_after")
        await self.acknowledge()

    async def until(self, done: Callable[[ClusterAlerts], bool]) -> None:
        for _ in range(MAX_STEPS):
            await self.step()
            state = await self.state()
            if state is not None and done(state):
                return
        self.figures.problems.append(
            f"seed {self.plan.seed}: the alert never got where the soak drove it"
        )

    async def step(self) -> None:
        process = ("restart", "kill mid-post", "lease failover", "failover, post in flight")
        before = sum(self.figures.faults[kind] for kind in process)
        step, holder = self.watch.step, lease_holder(self.stack.sim)
        await self._step()
        moved = lease_holder(self.stack.sim) != holder  # a takeover's first checks come late
        if moved or sum(self.figures.faults[kind] for kind in process) != before:
            self.disturbed.add(step)

    async def _step(self) -> None:
        self.clock.advance(STEP)
        self.steps += 1
        self.fault_the_api_server()
        await self.renew()
        if self.chaos.on and self.rng.random() < 0.06:
            await self.restart(self.rng.randrange(len(self.replicas)))
        if self.chaos.on and self.rng.random() < 0.06:
            await self.kill_mid_post()
        self.arm_failover_in_flight()
        for replica in self.replicas:
            for cluster in self.clusters:
                await jobs_alerts.check_cluster(replica.deps, cluster)
        await self.land_held_calls()
        self.watch.end_step()
        self.kept |= kept_messages(await self.state())
        for cluster in self.plan.fleet:  # a fleet's notices are kept in its clusters' states
            self.kept |= kept_messages(await self.cluster_state(cluster))
        for stray in self.holders.end_step(self.stack.slack, ALERT_CHANNEL, self.kept):
            self.figures.strays += 1
            self.figures.problems.append(
                f"seed {self.plan.seed}: {stray.ts} posted by {stray.by} while {stray.holder} "
                f"held the Lease (step {stray.step}), still doubling a message steps later"
            )

    def fault_the_api_server(self) -> None:
        if not self.chaos.on:
            return
        if self.rng.random() < 0.15:
            self.stack.sim.faults.add(503, verb="get", times=1)
            self.figures.faults["api 503"] += 1
        if self.plan.configmap and self.rng.random() < 0.12:
            self.stack.sim.faults.add(503, resource="configmaps", verb="patch", applied=True)
            self.figures.faults["state write applied, answered 503"] += 1
        if self.plan.configmap and self.rng.random() < 0.08:
            storm = self.rng.randint(2, 4)
            self.stack.sim.faults.add(409, resource="configmaps", verb="patch", times=storm)
            self.figures.faults["state 409 storm"] += 1

    async def renew(self) -> None:
        for replica in self.replicas:
            holder = replica.deps.lease is not None and replica.deps.lease.is_leader()
            if self.inflight is not None and identity(replica) == self.inflight[1]:
                continue  # its post is on the wire, and it stops renewing
            if holder and len(self.replicas) > 1 and self.rng.random() < 0.1:
                self.figures.faults["lease failover"] += 1
                continue  # the holder misses its renewal: the other one takes over
            await jobs_alerts.keep_lease(replica.deps)

    def arm_failover_in_flight(self) -> None:
        """Now and then, with two replicas: the holder's posts of this step hang on the wire,
        it stops renewing, the other replica takes over and drains, then they land."""
        if self.inflight is not None or len(self.replicas) < 2 or not self.chaos.on:
            return
        holder = lease_holder(self.stack.sim)
        if holder is None or self.rng.random() > 0.12:
            return

        def by_holder(method: str, params: Mapping[str, Any]) -> bool:
            return method == "chat.postMessage" and metadata_by(params) == holder

        self.inflight = (self.stack.slack.hold_calls(by_holder), holder, self.steps)

    async def land_held_calls(self) -> None:
        """Held calls land once the Lease moved (or a few steps later)."""
        if self.inflight is not None:
            hold, holder, since = self.inflight
            if hold.held == 0 and since < self.steps:
                hold.release()  # nothing was on the wire: no failover after all
                self.inflight = None
            elif (hold.held and lease_holder(self.stack.sim) != holder) or since + 3 < self.steps:
                self.figures.faults["failover, post in flight"] += bool(hold.held)
                await self.release(hold)
                self.inflight = None
        hold, holder, since = self.held
        moved = lease_holder(self.stack.sim) != holder
        if hold.held and (moved or since + 2 < self.steps):
            await self.release(hold)
            self.held = self.hold_writes()

    async def release(self, hold: Hold) -> None:
        hold.release()
        await self.stack.slack.wait_for(lambda: hold.all_landed, timeout=30)

    async def kill_mid_post(self) -> None:
        """Kill a replica while its next post is on the wire; Slack still does that post
        while the replica is down; then it starts again."""
        gate = Gate()
        self.chaos.kill_gate = gate
        index = self.rng.randrange(len(self.replicas))
        task = asyncio.create_task(jobs_alerts.check_cluster(self.replicas[index].deps, CLUSTER))
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
            if self.plan.fleet:  # the pages are the fleet incidents'
                return (await desk.store.load(FLEET)).state
            return (await desk.list_alerts(CLUSTER))[0]
        except Exception:  # the store is faulted on ConfigMap seeds: ask again next step
            return None

    def judge(self) -> Figures:
        verdict = check_channel(
            self.stack.slack, ALERT_CHANNEL, holders=self.holders, kept=self.kept
        )
        wanted = self.figures.incidents
        found = sum(
            1
            for m in self.stack.slack.root_messages(ALERT_CHANNEL)
            if "DependenciesFulfilled" in m.text and m.text.startswith("[RESOLVED")
        )
        seed = self.plan.seed
        told = self.told()
        self.figures.evictions += len(self.rises)
        notices = check_notices(
            self.stack.slack, NOTICES, told, holders=self.holders, kept=self.kept
        )
        self.figures.notices += sum(1 for m in self.stack.slack.messages(NOTICES) if payload(m))
        self.figures.lost += notices.lost
        self.figures.duplicated += notices.duplicated
        self.figures.problems += [f"seed {seed}: {p}" for p in notices.problems]
        if self.plan.fleet:  # every page of the failure is its fleet incident's: none alone
            alone = [
                m.ts
                for m in self.stack.slack.root_messages(ALERT_CHANNEL)
                if "DependenciesFulfilled" in m.text and " clusters: " not in m.text
            ]
            self.figures.duplicated += len(alone)
            self.figures.problems += [f"seed {seed}: {ts}: paged by one cluster" for ts in alone]
        self.figures.problems += [f"seed {seed}: {p}" for p in self.pages_not_caused()]
        self.watch.end_step(final=True)
        self.figures.shown_late += self.watch.shown_late
        self.figures.diagnoses += replies_noted(self.stack.slack, ALERT_CHANNEL, "diagnosis")
        self.figures.escalations += replies_noted(self.stack.slack, ALERT_CHANNEL, "escalated")
        self.figures.seen_twice += len(self.watch.twice)
        late = self.late_pages()
        self.figures.late_pages += len(late)
        self.figures.problems += [f"seed {seed}: {p}" for p in late]
        self.figures.lies += len(self.watch.lies)
        self.figures.problems += [f"seed {seed}: {i}: a page seen twice" for i in self.watch.twice]
        self.figures.problems += [
            f"seed {seed}: {i}: shown resolved, then firing" for i in self.watch.lies
        ]
        self.figures.lost += verdict.lost + max(0, wanted - found)
        self.figures.duplicated += verdict.duplicated + max(0, found - wanted)
        self.figures.problems += [f"seed {seed}: {p}" for p in verdict.problems]
        return self.figures

    def pages_not_caused(self) -> list[str]:
        """Pages about something the soak never broke (it breaks only kai-config's
        dependencies; a cluster it cannot read is its faults' doing, and so is the bot's word
        on its own trouble, a `:warning:` about its Lease or its store): the simulated
        cluster is otherwise healthy however long the run, or the page is a false alarm."""
        causes = ("DependenciesFulfilled", "Cannot check cluster")
        return [
            f"{m.ts}: paged about something it did not break: {m.text.splitlines()[0]}"
            for m in self.stack.slack.root_messages(ALERT_CHANNEL)
            if payload(m) and m.text.startswith("[") and not any(c in m.text for c in causes)
        ]

    def late_pages(self) -> list[str]:
        """Each page that came later than the check after its `hold` though none of its posts
        was faulted or held and no replica died or lost the Lease from its cause to its coming:
        a page waiting behind reads or Slack's budget."""
        if self.plan.fleet:  # a fleet incident waits for its clusters on purpose
            return []
        shown = sorted(self.watch.first_shown.values())
        late = []
        for number, (cause, came) in enumerate(zip(self.causes, shown, strict=False)):
            window = set(range(cause, came + 1))
            if came > cause + HOLD_STEPS and not window & self.disturbed:
                late.append(f"page {number + 1}: its cause at step {cause}, shown at {came}")
        return late


def _key(cluster: str, uid: str) -> str:
    return f"{cluster}/evict/{uid}"


def _phase(state: ClusterAlerts) -> Phase | None:
    alert = next((a for a in state.alerts.values() if a.key.kind == "Config"), None)
    if alert is None:
        return None
    return Phase.FIRING if alert.phase in (Phase.FIRING, Phase.ACKNOWLEDGED) else alert.phase


async def soak_seed(seed: int, workdir: Path, incidents: int) -> Figures:
    """One seed as its `SeedPlan` says."""
    plan = SeedPlan(seed)
    clock = Clock()
    lease = {"enabled": True, "duration": "15s" if plan.replicas > 1 else "1h"}
    kubernetes = {"request_timeout": "5s", "retries": 0}  # a failed read fails the check
    alerts: dict[str, Any] = {**ALERTS, "hold": "60s", "interval": "1h", "repeat": "4h"}
    state: dict[str, Any] = {"state": {"backend": "configmap"}} if plan.configmap else {}
    if plan.fleet:
        alerts["group_clusters"] = len(plan.fleet)
        where = {"kubeconfig": str(workdir / "kubeconfig"), "context": "sim"}
        state["clusters"] = [{"name": name, **where} for name in plan.fleet]
    notices = {"evictions": True, "channels": {"*": NOTICES}}
    async with alert_stack(
        workdir, clock, lease=lease, kubernetes=kubernetes, alerts=alerts, notices=notices, **state
    ) as (stack, holders):
        replicas = [stack.service]
        if plan.replicas > 1:
            replicas.append(stack.make_service())
            await replicas[1].start()
        soak = Soak(plan, stack, clock, replicas, holders)
        try:
            return await soak.run(incidents)
        finally:
            await soak.calm()
            for replica in soak.replicas[1:]:
                await replica.stop()
