"""The simulated clusters of `bench/fleet_ha.py`, served by a process of their own.

A *fleet* world (one simulator answering every fleet cluster, each a context of one kubeconfig;
the first of them holds the state ConfigMaps and the Lease, as the first configured cluster does)
and *probe* worlds (one simulator each: a cluster that breaks alone while the fleet does what
it does). The bench drives it with one JSON object a line on stdin and reads one JSON answer a
line on stdout:

    {"op": "break", "world": "probe-0", "how": "delete_kai_config"}   testbed.sim.breakage.HOW
    {"op": "heal", "world": "fleet"}
    {"op": "requests"}                API requests served by every world since the last ask
    {"op": "states"}                  each state ConfigMap: its bytes, open incidents, owed effects
    {"op": "seed", "clusters": [...], "threads": 300}   eviction notice threads already told
    {"op": "lease"}                   the Lease's holderIdentity ("" when free)
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bot.alerts.document import dump_cluster, load_cluster
from bot.alerts.model import ClusterAlerts
from bot.kube.kinds import owned_config_map
from testbed.sim import Simulator, breakage

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the budget tests' largest documents, reused as they are
from state_documents import thread  # noqa: E402

NAMESPACE = "kai-chatops"  # state.namespace and lease.namespace, by default
CONFIGMAP = "kai-chatops-state"  # state.configmap, by default
LEASE = "kai-chatops-alerts"


def fleet_names(count: int) -> list[str]:
    return [f"gpu-{i:04}" for i in range(count)]


def probe_names(count: int) -> list[str]:
    return [f"probe-{i}" for i in range(count)]


@dataclass
class Worlds:
    fleet: Simulator
    probes: dict[str, Simulator]

    def world(self, name: str) -> Simulator:
        return self.fleet if name == "fleet" else self.probes[name]

    def every(self) -> list[Simulator]:
        return [self.fleet, *self.probes.values()]


def write_kubeconfig(path: str, worlds: Worlds, fleet: list[str], urls: list[str]) -> None:
    """One kubeconfig: a context per fleet cluster on the fleet's server (each at an address
    of its own), one per probe."""
    servers = dict(zip(fleet, urls, strict=True))
    servers.update({name: sim.url for name, sim in worlds.probes.items()})
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": {"server": url}} for n, url in servers.items()],
        "users": [{"name": n, "user": {}} for n in servers],
        "contexts": [{"name": n, "context": {"cluster": n, "user": n}} for n in servers],
        "current-context": fleet[0],
    }
    Path(path).write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def state_summary(sim: Simulator) -> dict[str, dict[str, int]]:
    """Each alert state ConfigMap of the fleet's first cluster: bytes, open incidents, owed."""
    summary = {}
    configmaps = sim.store.resolve("v1", "ConfigMap")
    for cm in sim.store.list_objects(configmaps, NAMESPACE)["items"]:
        name = cm["metadata"]["name"]
        if not name.startswith(CONFIGMAP):
            continue
        for key, text in (cm.get("data") or {}).items():
            if not key.endswith(".json"):
                continue
            state = load_cluster(key.removesuffix(".json"), text)
            summary[name] = {
                "bytes": len(text),
                "open": len(state.alerts),
                "owed": sum(len(a.outbox) for a in state.alerts.values()),
            }
    return summary


def seed(sim: Simulator, clusters: list[str], threads: int) -> None:
    """Each cluster's state as if `threads` eviction notices had been told on it already."""
    for cluster in clusters:
        state = ClusterAlerts(
            cluster, threads=tuple(thread(i, cluster=cluster) for i in range(threads))
        )
        # Labelled as the bot labels its own (`owned_config_map`): its watched copy of the
        # state ConfigMaps selects by that label, and would not see these otherwise.
        name, data = f"{CONFIGMAP}-{cluster}", {f"{cluster}.json": dump_cluster(state)}
        sim.apply(owned_config_map(name, NAMESPACE, data))


def answer(worlds: Worlds, command: dict[str, Any]) -> Any:
    op = command["op"]
    if op == "break":
        getattr(breakage, command["how"])(worlds.world(command["world"]))
        return True
    if op == "heal":
        breakage.heal(worlds.world(command["world"]))
        return True
    if op in ("requests", "requests by kind"):
        made = [r for sim in worlds.every() for r in sim.requests]
        for sim in worlds.every():
            sim.clear_requests()
        if op == "requests":
            return len(made)
        return dict(Counter(f"{r.verb} {r.resource}" for r in made).most_common())
    if op == "states":
        return state_summary(worlds.fleet)
    if op == "seed":
        seed(worlds.fleet, command["clusters"], command["threads"])
        return True
    if op == "lease":
        lease = worlds.fleet.get("coordination.k8s.io/v1", "Lease", LEASE, NAMESPACE)
        return "" if lease is None else str(lease["spec"].get("holderIdentity") or "")
    raise ValueError(f"unknown op {op!r}")


async def serve(kubeconfig: str, fleet: int, probes: int) -> None:
    """Serve the worlds until stdin closes; `ready` once the kubeconfig is written."""
    # Bookmarks about once a minute, as kube-apiserver sends them (bench/fleet_scale.py).
    # A history deep enough that a fleet's writes do not compact a watch away at every step.
    # A client gone noticed within ten seconds, not half of one: each look wakes every open
    # stream, and a fleet's 4 000 watches on this one process (a real cluster serves its own
    # four) took it 40 % of a core at rest and most of one under a fleet-wide failure.
    async with Simulator(
        scenarios=("default",), bookmark_every=60.0, history=20_000, gone_every=10.0
    ) as fleet_sim:
        probe_sims = {}
        for name in probe_names(probes):
            sim = Simulator(scenarios=("default",), bookmark_every=60.0)
            await sim.start()
            probe_sims[name] = sim
        worlds = Worlds(fleet_sim, probe_sims)
        urls = [fleet_sim.url, *await fleet_sim.more_urls(fleet - 1)]
        write_kubeconfig(kubeconfig, worlds, fleet_names(fleet), urls)
        print(json.dumps("ready"), flush=True)
        loop = asyncio.get_running_loop()
        try:
            while line := await loop.run_in_executor(None, sys.stdin.readline):
                try:
                    print(json.dumps(answer(worlds, json.loads(line))), flush=True)
                except Exception as exc:  # an error answered, never a dead process
                    print(json.dumps({"error": repr(exc)}), flush=True)
        finally:
            for sim in probe_sims.values():
                await sim.stop()


if __name__ == "__main__":
    kubeconfig_path, fleet_count, probe_count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    asyncio.run(serve(kubeconfig_path, fleet_count, probe_count))
