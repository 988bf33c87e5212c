"""`/kai timeline`, end to end (signed slash commands, the simulator, the Slack emulator): what
changed on the cluster, newest first, from every source, in a constant number of API requests;
bad input said and nothing read. (The alert thread's reply and the postmortem draft:
test_e2e_timeline_incident.py.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alert_stack import HOLD, check, overrides
from clocks import Clock
from stack_steps import confirm

from bot.keda.usecase import AckWait
from testbed.sim import breakage, evictions
from testbed.sim.objects import timestamp
from testbed.stack import OPERATOR, Stack, running_stack

KAI_NS = "kai-scheduler"
READS = {"helmreleases", "applications", "replicasets", "controllerrevisions", "events"}


@asynccontextmanager
async def timeline_stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    """The stack on the test's clock, the simulator's stamps too (objects it creates now are
    created at the service's now)."""
    async with running_stack(
        tmp_path,
        clock=clock,
        sim_clock=clock,
        monotonic=clock.monotonic,
        config_overrides=overrides(tmp_path),
        slack_backoffs=(0.0, 0.0, 0.0),
        keda_wait=AckWait(timeout=0.2),
    ) as stack:
        yield stack


def replica_set(name: str, deployment: str, revision: int, image: str) -> dict[str, Any]:
    """A ReplicaSet as the Deployment controller makes one for a rollout."""
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": KAI_NS,
            "annotations": {"deployment.kubernetes.io/revision": str(revision)},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment,
                 "uid": "0b1c", "controller": True}
            ],
        },
        "spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}},
    }  # fmt: skip


def controller_revision(name: str, daemonset: str, revision: int) -> dict[str, Any]:
    """A ControllerRevision as the DaemonSet controller makes one for a rollout."""
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": name,
            "namespace": KAI_NS,
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": daemonset,
                 "uid": "0d1e", "controller": True}
            ],
        },
        "revision": revision,
        "data": {},
    }  # fmt: skip


def argo_synced(stack: Stack, at: datetime, who: str) -> None:
    """Argo CD's record of a sync of argocd/kai-scheduler, and a later one that failed."""
    app = stack.sim.get("argoproj.io/v1alpha1", "Application", "kai-scheduler", "argocd") or {}
    history = list((app.get("status") or {}).get("history") or [])
    history.append(
        {"id": len(history) + 1, "revision": "4f2a9c1e7b3d5f60", "deployedAt": timestamp(at),
         "initiatedBy": {"username": who}}
    )  # fmt: skip
    failed = {
        "phase": "Failed",
        "message": "one or more objects failed to apply",
        "startedAt": timestamp(at + timedelta(seconds=20)),
        "finishedAt": timestamp(at + timedelta(seconds=30)),
        "operation": {"sync": {}, "initiatedBy": {"automated": True}},
    }
    status = {"history": history, "operationState": failed}
    stack.sim.patch_status("argoproj.io/v1alpha1", "Application", "kai-scheduler", "argocd", status)


def lines(message: dict[str, Any] | None) -> list[str]:
    """The reply's timeline lines (its sections after the title)."""
    assert message is not None
    sections = [b["text"]["text"] for b in message["blocks"] if b["type"] == "section"]
    return [line for text in sections[1:] for line in text.split("\n")]


def notes(message: dict[str, Any] | None) -> str:
    assert message is not None
    return "\n".join(
        e["text"] for b in message["blocks"] if b["type"] == "context" for e in b["elements"]
    )


def timeline_reads(stack: Stack) -> list[tuple[str, str]]:
    return [(r.verb, r.resource) for r in stack.sim.requests if r.resource in READS]


def helm_upgraded(stack: Stack, at: datetime) -> None:
    """helm-controller's record of an upgrade of flux-system/keda to chart 2.20.3 (v6)."""
    release = stack.sim.get("helm.toolkit.fluxcd.io/v2", "HelmRelease", "keda", "flux-system")
    [v5] = ((release or {}).get("status") or {})["history"]
    v6 = {
        **v5, "version": 6, "action": "upgrade", "chartVersion": "2.20.3",
        "appVersion": "2.20.3", "configDigest": "sha256:77e0c1d2a3b4c5d6e7f8a9b0",
        "lastDeployed": timestamp(at),
    }  # fmt: skip
    history = {"history": [v6, {**v5, "status": "superseded"}]}
    stack.sim.patch_status(
        "helm.toolkit.fluxcd.io/v2", "HelmRelease", "keda", "flux-system", history
    )


async def what_changed(stack: Stack, clock: Clock) -> None:
    """A morning on the cluster, three hours after it was set up, a minute apart: a pause
    through the bot, a Helm upgrade, kai-config changed and a Kustomization applying a new
    revision (seen by a check), a rollout of the binder and of a DaemonSet, a KAI eviction, an
    Argo CD sync and a failed one."""
    clock.advance(timedelta(hours=3))
    await check(stack.service)  # the memory of moves begins
    clock.advance(60)
    helm_upgraded(stack, clock())
    clock.advance(60)
    await confirm(stack, "pause annia/annia-worker for 1h node drain")
    clock.advance(60)
    stack.sim.patch("kai.scheduler/v1", "Config", "kai-config", patch={"spec": {"x": 1}})
    revision = {"lastAppliedRevision": "main@sha1:9be1d0c4e7a6"}
    stack.sim.patch_status(
        "kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "flux-system", revision
    )
    await check(stack.service)
    clock.advance(60)
    stack.sim.apply(replica_set("binder-7c4d9f8b6", "binder", 2, "ghcr.io/kai/binder:v0.17.1"))
    clock.advance(60)
    stack.sim.apply(controller_revision("numa-exporter-5d8c7b", "numa-exporter", 3))
    clock.advance(60)
    evictions.reclaim(stack.sim)
    clock.advance(60)
    argo_synced(stack, clock(), "alice@example.com")
    clock.advance(60)


async def test_timeline_tells_what_changed_newest_first_from_every_source(
    tmp_path: Path, clock: Clock
) -> None:
    async with timeline_stack(tmp_path, clock) as stack:
        await what_changed(stack, clock)
        before = len(timeline_reads(stack))
        reply = await stack.command("timeline")

        assert reply.delivery.acked and reply.delivery.latency < 3
        assert reply.message is not None and reply.message["response_type"] == "ephemeral"
        shown = lines(reply.message)
        subjects = [line.split("*")[1] for line in shown]
        assert subjects == [
            "Application argocd/kai-scheduler",  # the sync that failed, 30 s after
            "Application argocd/kai-scheduler",
            f"PodGroup {evictions.EVICTED_NS}/{evictions.EVICTED}",
            "DaemonSet kai-scheduler/numa-exporter",
            "Deployment kai-scheduler/binder",
            "Config kai-config",
            "Kustomization flux-system/flux-system",
            "ScaledJob annia/annia-worker",
            "HelmRelease flux-system/keda",
        ]
        failed, synced, evicted, daemonset, binder, config, applied, paused, helm = shown
        assert "sync Failed: one or more objects failed to apply" in failed
        assert "Argo CD (automated)" in failed
        assert "synced 4f2a9c1e7b3d — by alice@example.com _(Argo CD)_" in synced
        assert "1 pod(s) reclaimed by KAI for annia/" in evicted
        assert "rolled out revision 3 (ControllerRevision numa-exporter-5d8c7b)" in daemonset
        assert "revision 2 (ReplicaSet binder-7c4d9f8b6: ghcr.io/kai/binder:v0.17.1)" in binder
        assert "changed: generation 1 → 2" in config
        assert "applied main@sha1:9be1d0c4e7a6 (was main@sha1:3f2c9a1e" in applied
        assert "pause (" in paused and f"— by <@{OPERATOR}>, why: node drain" in paused
        assert "upgrade to v6: chart keda@2.20.3 (app 2.20.3), values sha256:77e0c1d2a3b4…" in helm
        assert "deployed _(Flux)_" in helm
        # one unpaged request per source, then the same however many objects there are
        reads = timeline_reads(stack)[before:]
        assert sorted(reads) == [
            ("list", "applications"),
            ("list", "controllerrevisions"),
            ("list", "controllerrevisions"),
            ("list", "events"),
            ("list", "helmreleases"),
            ("list", "replicasets"),
            ("list", "replicasets"),
        ]


async def test_the_requests_stay_the_same_however_many_objects_and_events(
    tmp_path: Path, clock: Clock
) -> None:
    async with timeline_stack(tmp_path, clock) as stack:
        first = len(stack.sim.requests)
        await stack.command("timeline --since 30m")
        few = len(stack.sim.requests) - first
        for n in range(120):
            release = {
                "apiVersion": "helm.toolkit.fluxcd.io/v2",
                "kind": "HelmRelease",
                "metadata": {"name": f"team-{n}", "namespace": "flux-system"},
                "spec": {"chart": {"spec": {"chart": "team", "version": "1.0.0"}}},
            }
            stack.sim.apply(release)
        for n in range(700):
            evictions_group = {"metadata": {"name": f"pg-{n}", "namespace": "vision",
                                            "uid": f"u{n}", "resourceVersion": "1"}}  # fmt: skip
            notes_ = evictions.kai_annotations("preempt", 1)
            at = clock() - timedelta(seconds=n)
            event = evictions.evict_event(evictions_group, "x", notes_, at)
            stack.sim.apply(event)
        before = len(stack.sim.requests)
        reply = await stack.command("timeline --since 30m")
        assert len(stack.sim.requests) - before == few
        assert len(lines(reply.message)) == 40  # the newest 40 (of 700 evictions and the install)
        total = int(reply.text.split(": ")[1].split(" ")[0])
        assert total > 700 and f"… and {total - 40} older, not shown." in notes(reply.message)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("timeline --since 8d", "too far back: the timeline goes back at most 7d"),
        ("timeline --since soon", "--since soon:"),
        ("timeline 2h", "write --since 2h"),
        ("timeline nope!", "is not an ALERT_ID"),
        ("timeline 3f9a2c", "No incident of alert 3f9a2c is known"),
    ],
    ids=["too far back", "a malformed DURATION", "a DURATION without --since", "not an ID",
         "an unknown ALERT_ID"],
)  # fmt: skip
async def test_bad_input_gets_a_private_answer_and_reads_nothing_of_the_cluster(
    tmp_path: Path, clock: Clock, text: str, said: str
) -> None:
    async with timeline_stack(tmp_path, clock) as stack:
        before = len(stack.sim.requests)
        reply = await stack.command(text)
        assert said in reply.text
        if reply.message is not None:  # answered after the ack (the state was read)
            assert reply.message["response_type"] == "ephemeral"
        else:
            assert "/kai timeline [--since DURATION]" in reply.text  # the usage, in the ack
        assert timeline_reads(stack)[before:] == []
        assert stack.slack.files.by_id == {}


async def test_a_window_older_than_what_a_source_keeps_says_how_far_back_it_goes(
    tmp_path: Path, clock: Clock
) -> None:
    async with timeline_stack(tmp_path, clock) as stack:
        await check(stack.service)  # the checks begin remembering moves now
        clock.advance(600)
        reply = await stack.command("timeline --since 3d")
        said = notes(reply.message)
        assert "Evictions: back to 2026-08-24 07:10 UTC only (KAI's Evict Events last" in said
        assert "moves: back to 2026-08-24 08:00 UTC only (what kai-chatops saw move" in said
        assert "Times in UTC." in said


async def test_kai_config_deleted_and_created_again_the_apiservice_keda_and_the_alerts_are_told(
    tmp_path: Path, clock: Clock
) -> None:
    async with timeline_stack(tmp_path, clock) as stack:
        clock.advance(timedelta(hours=3))
        await check(stack.service)  # the memory of moves begins
        config = stack.sim.get("kai.scheduler/v1", "Config", "kai-config") or {}
        clock.advance(60)
        breakage.delete_kai_config(stack.sim)
        breakage.apiservice_down(stack.sim)
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)  # both fire
        clock.advance(60)
        keda_set = replica_set("keda-operator-6f9d8c", "keda-operator", 4, "kedacore/keda:2.20.3")
        stack.sim.apply({**keda_set, "metadata": {**keda_set["metadata"], "namespace": "keda"}})
        clock.advance(60)
        breakage.heal(stack.sim)
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)  # both resolve
        reply = await stack.command("timeline")
        shown = lines(reply.message)
        again = stack.sim.get("kai.scheduler/v1", "Config", "kai-config") or {}
        fired = [line for line in shown if "fired (critical)" in line]
        resolved = [line for line in shown if "* resolved: " in line]
        assert [line.split("* ")[1] for line in shown if "_(alert)_" not in line] == [
            f"created (UID {again['metadata']['uid']}, generation 1) _(KAI)_",
            "Available False (MissingEndpoints), service keda/keda-operator-metrics-apiserver → "
            "Available True (Passed), service keda/keda-operator-metrics-apiserver _(APIService)_",
            "rolled out revision 4 (ReplicaSet keda-operator-6f9d8c: kedacore/keda:2.20.3) "
            "_(rollout)_",
            f"deleted (UID {config['metadata']['uid']}) _(KAI)_",
            "Available True (Passed), service keda/keda-operator-metrics-apiserver → "
            "Available False (MissingEndpoints), service keda/keda-operator-metrics-apiserver "
            "_(APIService)_",
        ]
        assert len(fired) == len(resolved) == 2  # kai-config missing, the APIService
        assert shown.index(resolved[-1]) < shown.index(fired[0])  # newest first
        assert any("kai-config is missing" in line for line in fired)
