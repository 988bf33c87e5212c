"""RBAC and Slack scopes are derived from what the code really calls.

A workload drives every feature through the real stack (signed Slack requests in, the official
client out to the simulator); the simulator records each Kubernetes call and the emulator each
Slack method. The deploy manifests must grant every call made, and nothing that is never made.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_render import DEPLOY, by_kind, render
from deploy_workload import run_workload, workload_stack
from waiting import watches_ended

from testbed.stack import Stack

Call = tuple[str, str, str, str | None]  # group, resource, verb, namespace (None: cluster-wide)
# Resources whose calls without a namespace are cluster-wide lists rather than cluster-scoped.
NAMESPACED = {
    "deployments", "daemonsets", "scaledjobs", "scaledobjects", "helmreleases", "kustomizations",
    "gitrepositories", "helmrepositories", "ocirepositories", "helmcharts", "buckets",
    "applications", "appprojects",
    "leases", "configmaps", "pods", "pods/log", "events", "replicasets", "endpointslices",
    "services", "controllerrevisions",
}  # fmt: skip
# Slack method -> the bot scopes it needs (those in NO_SCOPE need none).
# Reading a conversation needs channels:history for a public channel, groups:history for a
# private one; the alert channel may be either.
HISTORY = ("channels:history", "groups:history")
SCOPES = {
    "chat.postMessage": ("chat:write",),
    "chat.update": ("chat:write",),
    "chat.delete": ("chat:write",),
    "chat.postEphemeral": ("chat:write",),
    "conversations.history": HISTORY,
    "conversations.replies": HISTORY,
    "usergroups.list": ("usergroups:read",),
    "usergroups.users.list": ("usergroups:read",),
    "users.info": ("users:read",),
    "files.getUploadURLExternal": ("files:write",),
    "files.completeUploadExternal": ("files:write",),
}
NO_SCOPE = {"auth.test", "apps.connections.open", "views.publish"}
SELF_NAMESPACE = "kai-chatops"


@pytest.fixture
async def observed(tmp_path: Path) -> AsyncIterator[Stack]:
    async with workload_stack(tmp_path) as (stack, clock):
        stack.slack.add_usergroup("S0OTHERS", "others", [])
        await run_workload(stack, clock)
        await watches_ended(stack.sim)
        yield stack


def calls_made(stack: Stack) -> set[Call]:
    made = set()
    for r in stack.sim.requests:
        if r.verb == "discovery" or not r.resource:
            continue
        resource = f"{r.resource}/{r.subresource}" if r.subresource else r.resource
        namespace = r.namespace if resource in NAMESPACED else None
        made.add((r.group, resource, r.verb, namespace))
    return made


BOTH_TOOLS = DEPLOY / "overlays" / "socket-mode"


def grants(overlay: Path = BOTH_TOOLS) -> set[Call]:
    """(group, resource, verb, namespace) granted to the bot; namespace None for ClusterRoles."""
    objects = render(overlay)
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


@pytest.mark.parametrize(
    ("overlay", "other_tool"),
    [("flux-only", "argoproj.io"), ("argo-only", "toolkit.fluxcd.io")],
)
async def test_a_single_tool_overlay_grants_exactly_the_calls_but_the_other_tools(
    observed: Stack, overlay: str, other_tool: str
) -> None:
    # In a cluster without the other tool those calls find no such resource (404), which the
    # Home tab and the timed-suspend job pass over quietly.
    made = {call for call in calls_made(observed) if not call[0].endswith(other_tool)}
    granted = grants(DEPLOY / "overlays" / overlay)
    assert sorted(c for c in made if not is_granted(c, granted)) == []
    assert sorted(g for g in granted if not is_used(g, made)) == []


def is_used(grant: Call, made: set[Call]) -> bool:
    """A Role's grant must be used in its namespace; a ClusterRole's across the cluster."""
    group, resource, verb, namespace = grant
    return (group, resource, verb, namespace) in made


async def test_the_slack_app_asks_exactly_for_the_scopes_the_code_uses(observed: Stack) -> None:
    methods = {call.method for call in observed.slack.calls}
    assert methods <= SCOPES.keys() | NO_SCOPE, methods - SCOPES.keys() - NO_SCOPE
    needed = {"commands"} | {scope for m in methods if m in SCOPES for scope in SCOPES[m]}
    manifest: dict[str, Any] = yaml.safe_load((DEPLOY / "slack-app-manifest.yaml").read_text())
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == needed
    assert manifest["features"]["slash_commands"][0]["command"] == "/kai"
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert manifest["settings"]["event_subscriptions"]["bot_events"] == ["app_home_opened"]
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True


def named_grants() -> dict[Call, set[str]]:
    """Grants limited by `resourceNames`: which objects each one covers."""
    named: dict[Call, set[str]] = {}
    for role in by_kind(render(BOTH_TOOLS), "Role"):
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
