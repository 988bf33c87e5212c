"""Differential tests of the controllers (issue 35 item 4): the same writes to the real controller
of the upstream tier and to the imitation the fast tiers use, the answers compared.

The imitations: the simulator's KEDA and Flux controllers (testbed/sim/keda_controller.py,
controllers.py, controller_answers.py, flux_events.py; `testbed.apicontrollers` runs the same
code against a real API server), and what the simulated breakages write as KAI would
(testbed/sim/evictions.py, scheduling_writes.py, breakage.py). Each test starts from the same
object on both sides (the real one copied into a `testbed.sim.Simulator`), makes the same change,
and compares what each controller wrote: conditions (type, status, reason, message), the status
fields it owns, annotations, and the Events it recorded, names and times taken out
(upstream/diffing.py). The real controller is the judge; where they differed, the imitation was
fixed (tests/cluster/README.md, "Differences found").
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from controlplane import poll
from upstream import keda
from upstream.cluster import Upstream
from upstream.diffing import (
    condition,
    copy_for_simulator,
    event_view,
    real_events,
    simulated_events,
)
from waiting import wait_until

from testbed.sim import Simulator
from testbed.sim.selectors import Selector

KEDA = "keda.sh/v1alpha1"
NAMESPACE = "annia"
PAUSED = "autoscaling.keda.sh/paused"
REPLICAS = "autoscaling.keda.sh/paused-replicas"
SCALE_IN = "autoscaling.keda.sh/paused-scale-in"
TARGET = "diff-target"
State = tuple[Any, ...]


def keda_state(obj: dict[str, Any]) -> State:
    """What KEDA decides about a pause: its `Paused` condition, `Ready`'s message, and a
    ScaledObject's `status.pausedReplicaCount`."""
    paused = condition(obj, "Paused")
    ready = condition(obj, "Ready")
    return (
        paused.get("status"),
        paused.get("reason"),
        paused.get("message"),
        ready.get("message"),
        (obj.get("status") or {}).get("pausedReplicaCount"),
    )


class RealStates:
    """The states a real object goes through from now on, read by a watch in a thread."""

    def __init__(self, upstream: Upstream, kind: str, name: str) -> None:
        self.resource = upstream.seeder.dynamic.resources.get(api_version=KEDA, kind=kind)
        self.name = name
        self.seen: list[State] = []
        since = self.resource.get(name=name, namespace=NAMESPACE).metadata.resourceVersion
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, args=(since,), daemon=True)
        self._thread.start()

    def _follow(self, since: str) -> None:
        watch = self.resource.watch
        while not self._stop.is_set():
            try:
                for event in watch(namespace=NAMESPACE, resource_version=since, timeout=2):
                    obj = event["raw_object"]
                    since = obj["metadata"]["resourceVersion"]
                    if obj["metadata"]["name"] == self.name:
                        self.seen.append(keda_state(obj))
                    if self._stop.is_set():
                        return
            except Exception:  # the server went away (the session ends): nothing more to see
                if self._stop.wait(0.2):
                    return

    def wait_for(self, wanted: set[State], deadline_s: float = 30) -> set[State]:
        """Poll until every state of `wanted` was seen; the decided states seen then."""
        try:
            poll(
                f"{self.name} through {wanted}",
                lambda: wanted <= decided(self.seen) or None,
                deadline_s,
            )
        finally:
            self._stop.set()
        return decided(self.seen)


def decided(states: list[State]) -> set[State]:
    """The states KEDA decided on a pause or a resume: its `Paused` condition has a reason (the
    initialised one has none, and the change's own write is not a decision)."""
    return {s for s in states if s[1]}


def sim_states(sim: Simulator, kind: str, name: str) -> tuple[list[State], Callable[[], None]]:
    """The states a simulated object goes through from now on (the store's own watch)."""
    rtype = sim.store.resolve(KEDA, kind)
    seen: list[State] = []

    def changed(_: str, obj: dict[str, Any]) -> None:
        if obj["metadata"]["name"] == name:
            seen.append(keda_state(obj))

    _, stop = sim.store.watch(rtype, NAMESPACE, Selector(), sim.store.resource_version, changed)
    return seen, stop


def keda_events(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """KEDA's pause Events about `name` as a reader sees them, each once, by reason (KEDA may
    record one again when a stale write makes it reconcile once more)."""
    ours = {
        repr(view): view
        for view in (event_view(e, [name]) for e in events if e["involvedObject"]["name"] == name)
        if "aused" in str(view["reason"])
    }
    return sorted(ours.values(), key=lambda e: str(e["reason"]))


def keda_object(kind: str, name: str) -> dict[str, Any]:
    if kind == "ScaledJob":
        return keda.scaled_job(name, NAMESPACE)
    return keda.scaled_object(name, NAMESPACE, TARGET)


async def change_both(
    upstream: Upstream, sim: Simulator, kind: str, name: str, annotations: dict[str, Any]
) -> None:
    """Write the same annotations on both sides; wait until each controller has answered all it
    answers (the imitation: its Event; the real one: every state the imitation wrote, seen by
    a watch, so the imitation says nothing KEDA would not); compare."""
    real = RealStates(upstream, kind, name)
    simulated, stop = sim_states(sim, kind, name)
    before = len(keda_events(simulated_events(sim, NAMESPACE), name))
    patch = {"metadata": {"annotations": annotations}}
    upstream.seeder.patch(KEDA, kind, name, NAMESPACE, patch)
    sim.patch(KEDA, kind, name, NAMESPACE, patch=patch)
    await wait_until(
        lambda: len(keda_events(simulated_events(sim, NAMESPACE), name)) > before,
        10,
        "the imitation's Event",
    )
    stop()
    written = decided(simulated)
    seen = real.wait_for(written)
    assert written <= seen, (written, seen)
    assert keda_events(simulated_events(sim, NAMESPACE), name) == keda_events(
        real_events(upstream.seeder, NAMESPACE), name
    )


@pytest.mark.parametrize(
    ("kind", "pause"),
    [
        ("ScaledJob", {PAUSED: "true"}),
        ("ScaledJob", {PAUSED: "yes"}),  # Go's ParseBool refuses it: KEDA pauses
        ("ScaledObject", {REPLICAS: "0"}),
        ("ScaledObject", {PAUSED: "true"}),
        ("ScaledObject", {SCALE_IN: "true"}),
    ],
    ids=["job", "job-unparsable", "object-replicas", "object-paused", "object-scale-in"],
)
async def test_a_pause_and_a_resume_write_what_keda_writes(
    upstream: Upstream,
    sim: Simulator,
    kind: str,
    pause: dict[str, str],
    request: pytest.FixtureRequest,
) -> None:
    name = f"diff-{request.node.callspec.id}"
    upstream.seeder.replace(keda.target(TARGET, NAMESPACE))
    upstream.seeder.replace(keda_object(kind, name))
    try:
        ready = poll(
            f"{kind} {name} Ready",
            lambda: _ready(upstream.seeder.read(KEDA, kind, name, NAMESPACE)),
            60,
        )
        sim.apply(copy_for_simulator(ready))  # the same object, as KEDA initialised it
        await change_both(upstream, sim, kind, name, pause)
        await change_both(upstream, sim, kind, name, dict.fromkeys(pause))
    finally:
        upstream.seeder.remove(keda_object(kind, name))


def _ready(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    ok = condition(obj, "Ready").get("status") == "True" and condition(obj, "Paused")
    return obj if ok else None
