"""RBAC and Slack scopes are derived from what the code really calls.

A workload drives every feature through the real stack (signed Slack requests in, the official
client out to the simulator); the simulator records each Kubernetes call and the emulator each
Slack method. The deploy manifests must grant every call made, and nothing that is never made.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_render import DEPLOY, by_kind, render

from bot.service import schedule
from bot.sim import breakage
from bot.stack import Stack, running_stack
from handlers import keda as keda_handlers

Call = tuple[str, str, str, str | None]  # group, resource, verb, namespace (None: cluster-wide)
# Resources whose calls without a namespace are cluster-wide lists rather than cluster-scoped.
NAMESPACED = {
    "deployments", "scaledjobs", "scaledobjects", "helmreleases", "kustomizations",
    "gitrepositories", "helmrepositories", "ocirepositories", "helmcharts", "applications",
    "leases", "configmaps", "pods", "pods/log", "events", "replicasets", "endpointslices",
    "services",
}  # fmt: skip
# Slack method -> the bot scope it needs (auth.test and apps.connections.open need none).
SCOPES = {
    "chat.postMessage": "chat:write",
    "chat.update": "chat:write",
    "chat.postEphemeral": "chat:write",
    "usergroups.list": "usergroups:read",
    "usergroups.users.list": "usergroups:read",
    "users.info": "users:read",
}
SELF_NAMESPACE = "kai-chatops"


OCI_REPOSITORY = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "OCIRepository",
    "metadata": {"name": "podinfo", "namespace": "flux-system"},
    "spec": {"interval": "10m", "url": "oci://ghcr.io/stefanprodan/manifests/podinfo"},
}


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


async def confirm(stack: Stack, text: str) -> None:
    ask = await stack.command(text)
    assert ask.message is not None, ask.text
    await stack.click("Confirm", ask.message)


async def run_workload(stack: Stack, clock: Clock) -> None:
    """Every feature once, the way users and the scheduler use it."""
    await schedule.keep_lease(stack.service.deps)
    await stack.command("health")
    await stack.command("scaledjobs")
    await stack.command("scaledjobs --all-namespaces")
    await confirm(stack, "pause annia/annia-worker for 1h drain")
    await confirm(stack, "resume annia/annia-worker")
    await confirm(stack, "pause scaledobject annia/annia-api for 1h drain")
    clock.now += timedelta(hours=2)
    await schedule.keep_lease(stack.service.deps)
    await schedule.resume_expired_pauses(stack.service.deps, "sim")
    resumed = stack.sim.get("keda.sh/v1alpha1", "ScaledObject", "annia-api", "annia") or {}
    assert "autoscaling.keda.sh/paused" not in resumed["metadata"].get("annotations", {})
    stack.sim.apply(OCI_REPOSITORY)
    for text in (
        "reconcile ocirepo flux-system/podinfo",
        "reconcile hr flux-system/kai-scheduler --with-source",
        "reconcile ks flux-system/flux-system --with-source",
        "reconcile gitrepo flux-system/flux-system",
        "reconcile helmrepo flux-system/kedacore",
        "reconcile app argocd/kai-scheduler --hard",
    ):
        await stack.command(text, to_the_end=True)
    await confirm(stack, "sync argocd/kai-scheduler")
    await inspect_workloads(stack)
    await alert_cycle(stack, clock)


async def inspect_workloads(stack: Stack) -> None:
    """What viewers read: diagnoses with logs, KAI queues and jobs, lists, not-found hints."""
    breakage.metrics_apiserver_crashloop(stack.sim)
    breakage.gpu_quota_exhausted(stack.sim)
    crash_binder(stack)
    for text in (
        "diagnose kai",
        "diagnose keda",
        "diagnose kai-scheduler/binder",
        "queues",
        "pending",
        "pending annia",
        "why annia/annia-worker-9k4mz-0",
        *(f"list {kind}" for kind in ("hr", "ks", "gitrepo", "helmrepo", "ocirepo", "app", "sj")),
        "list so --all-namespaces",
        "reconcile ks flux-system/kai-scheduler",
    ):
        reply = await stack.command(text)
        assert reply.message is not None, (text, reply.text)
    breakage.heal(stack.sim)


def crash_binder(stack: Stack) -> None:
    """The binder's pod in CrashLoopBackOff, so `diagnose kai` reads a log in kai.namespace."""
    pods = stack.sim.store.list_objects(stack.sim.store.resolve("v1", "pods"), "kai-scheduler")
    pod = next(p for p in pods["items"] if p["metadata"]["name"].startswith("binder-"))
    pod["status"]["containerStatuses"][0].update(
        ready=False,
        state={"waiting": {"reason": "CrashLoopBackOff"}},
        lastState={"terminated": {"reason": "Error", "exitCode": 1}},
        restartCount=2,
    )
    stack.sim.apply(pod)
    stack.sim.set_condition(
        "apps/v1", "Deployment", "binder", "kai-scheduler", "Available", "False", "Min", "down"
    )


async def alert_cycle(stack: Stack, clock: Clock) -> None:
    """What the scheduler does: hold the Lease, check, fire an alert, keep the state."""
    deps = stack.service.deps
    await schedule.keep_lease(deps)
    breakage.dependencies_missing(stack.sim)
    await schedule.check_cluster(deps, "sim")
    clock.now += timedelta(seconds=60)
    await schedule.keep_lease(deps)
    await schedule.check_cluster(deps, "sim")


@pytest.fixture
async def observed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Stack]:
    monkeypatch.setattr(
        keda_handlers, "ACK_WAIT", dataclasses.replace(keda_handlers.ACK_WAIT, timeout=0.2)
    )
    clock = Clock()
    configmap_state = {"state": {"backend": "configmap"}}
    async with running_stack(
        tmp_path, clock=clock, keda_controller=True, config_overrides=configmap_state
    ) as stack:
        stack.slack.add_usergroup("S0OTHERS", "others", [])
        await run_workload(stack, clock)
        await watches_ended(stack)
        yield stack


async def watches_ended(stack: Stack, deadline: float = 5.0) -> None:
    """Wait until the simulator has seen every watch end: it logs a watch only then."""
    end = asyncio.get_running_loop().time() + deadline
    while stack.sim.open_watches:
        assert asyncio.get_running_loop().time() < end, "a watch stream stayed open"
        await asyncio.sleep(0.05)


def calls_made(stack: Stack) -> set[Call]:
    made = set()
    for r in stack.sim.requests:
        if r.verb == "discovery" or not r.resource:
            continue
        resource = f"{r.resource}/{r.subresource}" if r.subresource else r.resource
        namespace = r.namespace if resource in NAMESPACED else None
        made.add((r.group, resource, r.verb, namespace))
    return made


def grants() -> set[Call]:
    """(group, resource, verb, namespace) granted to the bot; namespace None for ClusterRoles."""
    objects = render(DEPLOY / "base")
    bound = {b["roleRef"]["name"] for b in by_kind(objects, "ClusterRoleBinding")}
    bound_roles = {
        (b["metadata"]["namespace"], b["roleRef"]["name"]) for b in by_kind(objects, "RoleBinding")
    }
    granted: set[Call] = set()
    for role in by_kind(objects, "ClusterRole") + by_kind(objects, "Role"):
        namespace = role["metadata"].get("namespace")
        key = (
            role["metadata"]["name"] if namespace is None else (namespace, role["metadata"]["name"])
        )
        if key not in (bound if namespace is None else bound_roles):
            continue
        for rule in role["rules"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    granted |= {(group, resource, verb, namespace) for verb in rule["verbs"]}
    return granted


def is_granted(call: Call, granted: set[Call]) -> bool:
    group, resource, verb, namespace = call
    if namespace == "":
        namespace = SELF_NAMESPACE
    return (group, resource, verb, None) in granted or (group, resource, verb, namespace) in granted


async def test_the_manifests_grant_every_kubernetes_call_the_code_makes(observed: Stack) -> None:
    granted = grants()
    missing = sorted(call for call in calls_made(observed) if not is_granted(call, granted))
    assert missing == [], "\n".join(map(str, missing))


async def test_the_manifests_grant_nothing_the_code_never_calls(observed: Stack) -> None:
    made = calls_made(observed)
    unused = sorted(grant for grant in grants() if not is_used(grant, made))
    assert unused == [], "\n".join(map(str, unused))


def is_used(grant: Call, made: set[Call]) -> bool:
    """A Role's grant must be used in its namespace; a ClusterRole's across the cluster."""
    group, resource, verb, namespace = grant
    return (group, resource, verb, namespace) in made


async def test_the_slack_app_asks_exactly_for_the_scopes_the_code_uses(observed: Stack) -> None:
    methods = {call.method for call in observed.slack.calls}
    needed = {"commands"} | {SCOPES[m] for m in methods if m in SCOPES}
    manifest: dict[str, Any] = yaml.safe_load((DEPLOY / "slack-app-manifest.yaml").read_text())
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == needed
    assert manifest["features"]["slash_commands"][0]["command"] == "/kai"
    assert manifest["settings"]["interactivity"]["is_enabled"] is True


def named_grants() -> dict[Call, set[str]]:
    """Grants limited by `resourceNames`: which objects each one covers."""
    named: dict[Call, set[str]] = {}
    for role in by_kind(render(DEPLOY / "base"), "Role"):
        namespace = role["metadata"]["namespace"]
        for rule in role["rules"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for verb in rule["verbs"]:
                        key = (group, resource, verb, namespace)
                        named.setdefault(key, set()).update(rule.get("resourceNames") or ["*"])
    return {key: names for key, names in named.items() if "*" not in names}


async def test_grants_limited_by_name_cover_the_objects_the_code_touches(observed: Stack) -> None:
    named = named_grants()
    assert named, "the Lease and the state ConfigMap are granted by name"
    outside = [
        (r.resource, r.verb, r.name)
        for r in observed.sim.requests
        if (key := (r.group, r.resource, r.verb, r.namespace)) in named and r.name not in named[key]
    ]
    assert outside == []
