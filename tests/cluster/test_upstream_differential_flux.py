"""Differential tests of Flux (issue 35 item 4): a reconcile request (`reconcile.fluxcd.io/
requestedAt`) answered by the real source-controller and kustomize-controller v1.9.6 and by the
simulator's imitation (testbed/sim/controllers.py, controller_answers.py, flux_events.py), each
starting from the same object (the real one copied into the simulator), the answers compared:
the request handled, Ready and Reconciling (status, reason, message's template), the generation
observed, and the Events recorded. A failing build is asked of the imitation by its behaviour
annotation (`sim.kai-chatops/reconcile: retry`), since it builds nothing itself.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from controlplane import poll
from upstream import flux
from upstream.cluster import Upstream, wait_flux_ready
from upstream.diffing import (
    RealStates,
    Recorded,
    condition,
    copy_for_simulator,
    decided,
    event_view,
    real_events,
    simulated_events,
    simulated_states,
)
from waiting import wait_until

from testbed.sim import Simulator

REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
BEHAVIOUR = "sim.kai-chatops/reconcile"
KINDS = {
    "Kustomization": flux.KUSTOMIZE_API,
    "GitRepository": flux.SOURCE_API,
}


def handled(obj: dict[str, Any] | None, token: str) -> dict[str, Any] | None:
    """The object once Flux handled the request `token` and is not reconciling any more."""
    status = (obj or {}).get("status") or {}
    busy = condition(obj, "Reconciling").get("reason") == "Progressing"
    return dict(obj) if obj and status.get("lastHandledReconcileAt") == token and not busy else None


def answer(obj: dict[str, Any], events: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """What a Flux controller decided: the conditions it owns, the status fields it moves, and
    the Events it recorded."""
    status = obj.get("status") or {}
    return {
        "Ready": decided(condition(obj, "Ready"), names),
        "Reconciling": decided(condition(obj, "Reconciling"), names),
        "Stalled": decided(condition(obj, "Stalled"), names),
        "observedGeneration": status.get("observedGeneration"),
        "events": sorted((event_view(e, names) for e in events), key=repr),
    }


async def request_both(
    upstream: Upstream, sim: Simulator, kind: str, name: str, extra: dict[str, str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The real object copied into the simulator (with `extra` annotations), then the same
    request on both; each side's answer once handled."""
    api = KINDS[kind]
    real = upstream.seeder.read(api, kind, name, flux.NAMESPACE)
    copied = copy_for_simulator(real)
    copied["metadata"].setdefault("annotations", {}).update(extra)
    sim.apply(copied)
    real_recorded = Recorded(lambda: real_events(upstream.seeder, flux.NAMESPACE), name)
    sim_recorded = Recorded(lambda: simulated_events(sim, flux.NAMESPACE), name)
    token = f"diff-{time.time_ns()}"
    patch = {"metadata": {"annotations": {REQUESTED_AT: token}}}
    upstream.seeder.patch(api, kind, name, flux.NAMESPACE, patch)
    sim.patch(api, kind, name, flux.NAMESPACE, patch=patch)
    sim_done = await wait_until(
        lambda: handled(sim.get(api, kind, name, flux.NAMESPACE), token), 10, "the imitation"
    )
    real_done = poll(
        f"{kind} {name} handled {token}",
        lambda: handled(upstream.seeder.read(api, kind, name, flux.NAMESPACE), token),
        60,
    )
    names = _names(real_done)
    # Flux records its Event after the status is written: wait for it as the imitation does.
    await wait_until(lambda: sim_recorded.since() or None, 10, "the imitation's Event")
    poll(f"{kind} {name}'s Event", lambda: real_recorded.since() or None, 30)
    return (
        answer(real_done, real_recorded.since(), names),
        answer(sim_done, sim_recorded.since(), names),
    )


def _names(obj: dict[str, Any]) -> list[str]:
    """What differs between the two sides' words for no reason of Flux's: the revision."""
    status = obj.get("status") or {}
    artifact = status.get("artifact") or {}
    return [str(status.get("lastAttemptedRevision") or artifact.get("revision") or "")]


@pytest.mark.parametrize(
    ("kind", "name", "extra"),
    [
        ("Kustomization", flux.APPS, {}),
        ("Kustomization", flux.BROKEN, {BEHAVIOUR: "retry"}),
        ("GitRepository", flux.REPOSITORY, {}),
    ],
    ids=["applied", "build-fails", "source"],
)
async def test_a_reconcile_request_is_answered_as_flux_answers_it(
    upstream: Upstream, sim: Simulator, kind: str, name: str, extra: dict[str, str]
) -> None:
    real, imitated = await request_both(upstream, sim, kind, name, extra)
    assert imitated == real


async def test_a_suspended_kustomization_marks_the_request_handled_and_does_nothing_else(
    upstream: Upstream, sim: Simulator
) -> None:
    api, name = flux.KUSTOMIZE_API, flux.APPS
    suspend = {"spec": {"suspend": True}}
    upstream.seeder.patch(api, "Kustomization", name, flux.NAMESPACE, suspend)
    try:
        before = upstream.seeder.read(api, "Kustomization", name, flux.NAMESPACE)
        sim.apply(copy_for_simulator(before))
        real_recorded = Recorded(lambda: real_events(upstream.seeder, flux.NAMESPACE), name)
        sim_recorded = Recorded(lambda: simulated_events(sim, flux.NAMESPACE), name)
        token = f"diff-{time.time_ns()}"
        patch = {"metadata": {"annotations": {REQUESTED_AT: token}}}
        upstream.seeder.patch(api, "Kustomization", name, flux.NAMESPACE, patch)
        sim.patch(api, "Kustomization", name, flux.NAMESPACE, patch=patch)
        imitated = await wait_until(
            lambda: handled(sim.get(api, "Kustomization", name, flux.NAMESPACE), token), 10, "sim"
        )
        real = poll(
            "the request handled",
            lambda: handled(
                upstream.seeder.read(api, "Kustomization", name, flux.NAMESPACE), token
            ),
            30,
        )
        for answered in (real, imitated):
            assert answered["status"]["conditions"] == before["status"]["conditions"]
        assert real_recorded.since() == sim_recorded.since() == []
    finally:
        upstream.seeder.patch(
            api, "Kustomization", name, flux.NAMESPACE, {"spec": {"suspend": False}}
        )
        wait_flux_ready(upstream.seeder, name)


def reconciling_state(obj: dict[str, Any]) -> tuple[Any, ...]:
    """Ready's and Reconciling's status, reason and message's template (the revision out)."""
    names = _names(obj)
    ready = decided(condition(obj, "Ready"), names)
    busy = decided(condition(obj, "Reconciling"), names)
    return tuple(ready.values()) + tuple(busy.values())


async def test_a_reconcile_in_progress_reads_as_kustomize_controller_writes_it(
    upstream: Upstream, sim: Simulator
) -> None:
    """The imitation's `slow:` reconcile shows a state the real one goes through."""
    api, kind, name = flux.KUSTOMIZE_API, "Kustomization", flux.APPS
    copied = copy_for_simulator(upstream.seeder.read(api, kind, name, flux.NAMESPACE))
    copied["metadata"].setdefault("annotations", {})[BEHAVIOUR] = "slow:0.2s"
    sim.apply(copied)
    real = RealStates(upstream.seeder, api, kind, name, flux.NAMESPACE, reconciling_state)
    imitated, stop = simulated_states(sim, api, kind, name, flux.NAMESPACE, reconciling_state)
    token = f"diff-{time.time_ns()}"
    patch = {"metadata": {"annotations": {REQUESTED_AT: token}}}
    upstream.seeder.patch(api, kind, name, flux.NAMESPACE, patch)
    sim.patch(api, kind, name, flux.NAMESPACE, patch=patch)
    await wait_until(
        lambda: handled(sim.get(api, kind, name, flux.NAMESPACE), token), 10, "the imitation"
    )
    stop()
    busy = {s for s in imitated if s[1] == "Unknown"}  # Ready Unknown: in progress
    assert busy, imitated
    assert busy <= real.wait_for(busy, lambda s: s[1] == "Unknown")
