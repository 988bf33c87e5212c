"""The ValidatingAdmissionPolicies of deploy/, run by a real CEL runtime (cel-python).

Every write the code makes (the workload's PATCHes and creates, paired with the object before
and after, as the simulator saw them) must be allowed; each change outside the fields the bot
owns must be refused with a message naming the field (issue 11 item 6, docs/design.md §2 "Safety").
The harness follows the API server's order: match rules, match conditions, variables (each
seeing the ones before), validations; a failing or erroring validation denies.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import itertools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import celpy
import pytest
from clocks import Clock
from deploy_render import DEPLOY, by_kind, render
from deploy_workload import run_workload, workload_stack

from bot.gitops import argo
from testbed.sim import patching
from testbed.sim.selectors import parse_selector
from testbed.stack import Stack

BOT = "system:serviceaccount:kai-chatops:kai-chatops"
WRITTEN = {  # group -> the resources the bot writes there
    "keda.sh": {"scaledjobs", "scaledobjects"},
    "helm.toolkit.fluxcd.io": {"helmreleases"},
    "kustomize.toolkit.fluxcd.io": {"kustomizations"},
    "source.toolkit.fluxcd.io": {
        "gitrepositories",
        "helmrepositories",
        "ocirepositories",
        "helmcharts",
        "buckets",
    },
    "argoproj.io": {"applications"},
    "": {"configmaps", "nodes"},
    "coordination.k8s.io": {"leases"},
}
Key = tuple[str, str, str, str]  # group, resource, namespace, name
NOW = datetime.datetime(2026, 12, 2, 1, 0, tzinfo=datetime.UTC)
_ENV = celpy.Environment()


# --- the harness ------------------------------------------------------------------------------


def cel(expression: str, activation: dict[str, Any]) -> Any:
    return _ENV.program(_ENV.compile(expression)).evaluate(activation)


def admission(
    operation: str,
    key: Key,
    obj: dict[str, Any] | None,
    old: dict[str, Any] | None,
    user: str = BOT,
) -> dict[str, Any]:
    """An AdmissionRequest, as a policy's `request`, `object` and `oldObject` see it."""
    group, resource, namespace, name = key
    request = {
        "operation": operation,
        "resource": {"group": group, "version": "v1", "resource": resource},
        "name": name,
        "namespace": namespace,
        "userInfo": {"username": user},
    }
    return {"request": request, "object": obj, "oldObject": old}


def matches(policy: dict[str, Any], review: dict[str, Any]) -> bool:
    request = review["request"]
    for rule in policy["spec"]["matchConstraints"]["resourceRules"]:
        resources = set(rule["resources"])
        if (
            request["resource"]["group"] in rule["apiGroups"]
            and ("*" in resources or request["resource"]["resource"] in resources)
            and request["operation"] in rule["operations"]
        ):
            break
    else:
        return False
    activation = {name: celpy.json_to_cel(value) for name, value in review.items()}
    return all(bool(cel(c["expression"], activation)) for c in policy["spec"]["matchConditions"])


def denials(policy: dict[str, Any], review: dict[str, Any]) -> list[str]:
    """The messages of the failed validations ([] when allowed or not matched)."""
    if not matches(policy, review):
        return []
    activation = {name: celpy.json_to_cel(value) for name, value in review.items()}
    variables: dict[str, Any] = {}
    for variable in policy["spec"].get("variables", []):
        activation["variables"] = celpy.celtypes.MapType(variables)
        try:  # lazily evaluated on the API server: an error matters only when used
            variables[celpy.celtypes.StringType(variable["name"])] = cel(
                variable["expression"], activation
            )
        except Exception:
            continue
    activation["variables"] = celpy.celtypes.MapType(variables)
    refused = []
    for validation in policy["spec"]["validations"]:
        try:
            allowed = cel(validation["expression"], activation)
        except Exception as e:  # failurePolicy Fail: an error denies
            refused.append(f"error: {e}")
            continue
        if isinstance(allowed, celpy.CELEvalError) or allowed != celpy.celtypes.BoolType(True):
            refused.append(str(cel(validation["messageExpression"], activation)))
    return refused


@pytest.fixture(scope="module")
def policies() -> list[dict[str, Any]]:
    found = by_kind(render(DEPLOY / "base"), "ValidatingAdmissionPolicy")
    bindings = by_kind(render(DEPLOY / "base"), "ValidatingAdmissionPolicyBinding")
    assert {b["spec"]["policyName"] for b in bindings} == {p["metadata"]["name"] for p in found}
    assert all(b["spec"]["validationActions"] == ["Deny"] for b in bindings)
    return found


def refused_by(policies: list[dict[str, Any]], review: dict[str, Any]) -> list[str]:
    return [message for policy in policies for message in denials(policy, review)]


# --- every write the code makes is allowed -----------------------------------------------------


@dataclasses.dataclass
class Versions:
    """Every version of the objects of the kinds the bot writes, as a watch sees them."""

    seen: dict[Key, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)

    def callback(self, group: str, resource: str) -> Callable[[str, dict[str, Any]], None]:
        def record(_: str, obj: dict[str, Any]) -> None:
            meta = obj["metadata"]
            key = (group, resource, meta.get("namespace", ""), meta["name"])
            self.seen.setdefault(key, []).append(copy.deepcopy(obj))

        return record


@dataclasses.dataclass(frozen=True)
class Write:
    operation: str
    key: Key
    obj: dict[str, Any]
    old: dict[str, Any] | None


def comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """What a patch decides: the object without the fields the API server maintains, and
    without the metadata maps a patch emptied (the API server keeps no empty map)."""
    meta = {
        k: v
        for k, v in obj["metadata"].items()
        if k not in ("resourceVersion", "generation", "managedFields")
        and not (k in ("labels", "annotations", "finalizers") and not v)
    }
    return {**obj, "metadata": meta}


def pair(request: Any, versions: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The (before, after) versions this merge patch turned one into the other; a patch that
    changed nothing (a Lease renewed at once) is an update of a version to itself."""
    body = copy.deepcopy(request.body)
    body.get("metadata", {}).pop("resourceVersion", None)

    def applied(obj: dict[str, Any]) -> dict[str, Any]:
        return comparable(patching.merge_patch(copy.deepcopy(obj), body))

    for old, new in itertools.pairwise(versions):
        if applied(old) == comparable(new):
            return old, new
    for same in versions:
        if applied(same) == comparable(same):
            return same, same
    raise AssertionError(f"no version pair for the patch of {request.path}")


async def observed_writes(stack: Stack, clock: Clock) -> list[Write]:
    versions = Versions()
    store = stack.sim.store
    for rtype in store.registry.all():
        if rtype.plural in WRITTEN.get(rtype.group, set()):
            callback = versions.callback(rtype.group, rtype.plural)
            first, _ = store.watch(rtype, None, parse_selector(), "", callback)
            for kind, obj in first:
                callback(kind, obj)
    stack.sim.clear_requests()
    await run_workload(stack, clock)
    writes = []
    for request in stack.sim.requests:
        if request.verb not in ("patch", "create") or request.status >= 400:
            continue
        key = (request.group, request.resource, request.namespace or "", request.name or "")
        if request.verb == "create":
            key = (*key[:3], request.body["metadata"]["name"])
            writes.append(Write("CREATE", key, request.body, None))
            continue
        old, new = pair(request, versions.seen[key])
        writes.append(Write("UPDATE", key, new, old))
    return writes


@pytest.fixture
async def writes(tmp_path: Path) -> AsyncIterator[list[Write]]:
    async with workload_stack(tmp_path) as (stack, clock):
        yield await observed_writes(stack, clock)


async def test_every_write_the_code_makes_is_allowed(
    writes: list[Write], policies: list[dict[str, Any]]
) -> None:
    kinds = {(w.operation, w.key[1]) for w in writes}
    expected = {"scaledjobs", "scaledobjects", "helmreleases", "applications", "leases", "nodes"}
    assert {("UPDATE", resource) for resource in expected} | {("CREATE", "configmaps")} <= kinds
    refused = {
        f"{w.operation} {w.key}": refused_by(policies, admission(w.operation, w.key, w.obj, w.old))
        for w in writes
    }
    assert {what: why for what, why in refused.items() if why} == {}


# --- every other change is refused, naming the field --------------------------------------------

JOB_KEY: Key = ("keda.sh", "scaledjobs", "annia", "annia-worker")
SO_KEY: Key = ("keda.sh", "scaledobjects", "annia", "annia-api")
GIT_KEY: Key = ("source.toolkit.fluxcd.io", "gitrepositories", "flux-system", "flux-system")
HR_KEY: Key = ("helm.toolkit.fluxcd.io", "helmreleases", "flux-system", "kai-scheduler")
APP_KEY: Key = ("argoproj.io", "applications", "argocd", "kai-scheduler")
STATE_KEY: Key = ("", "configmaps", "kai-chatops", "kai-chatops-state")
SHARD_KEY: Key = ("", "configmaps", "kai-chatops", "kai-chatops-state-prod")
APPROVALS_KEY: Key = ("", "configmaps", "kai-chatops", "kai-chatops-state-approvals")
LEASE_KEY: Key = ("coordination.k8s.io", "leases", "kai-chatops", "kai-chatops-alerts")
NODE_KEY: Key = ("", "nodes", "", "gpu-node-1")


OURS = {"app.kubernetes.io/managed-by": "kai-chatops"}  # the label on the bot's ConfigMaps


def base(key: Key) -> dict[str, Any]:
    group, resource, namespace, name = key
    obj: dict[str, Any] = {
        "apiVersion": f"{group}/v1" if group else "v1",
        "kind": "Thing",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(OURS) if resource == "configmaps" else {"app": name},
            "annotations": {"team": "platform"},
            "finalizers": ["finalizers.fluxcd.io"],
            "resourceVersion": "10",
            "generation": 3,
        },
        "spec": {
            "interval": "10m",
            "url": "https://github.com/org/repo",
            "suspend": False,
            "source": {"repoURL": "https://github.com/org/apps", "path": "kai"},
            "jobTargetRef": {"template": {"spec": {"containers": [{"image": "worker:1"}]}}},
        },
        "status": {"conditions": []},
    }
    return obj


def changed(key: Key, edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    new = copy.deepcopy(base(key))
    edit(new)
    new["metadata"]["resourceVersion"] = "10"
    return admission("UPDATE", key, new, base(key))


def annotate(key: Key, name: str, value: str | None) -> dict[str, Any]:
    def edit(obj: dict[str, Any]) -> None:
        if value is None:
            obj["metadata"]["annotations"].pop(name, None)
        else:
            obj["metadata"]["annotations"][name] = value

    return changed(key, edit)


PAUSED_REPLICAS = "autoscaling.keda.sh/paused-replicas"


def with_annotation(key: Key, name: str, value: str) -> dict[str, Any]:
    obj = base(key)
    obj["metadata"]["annotations"][name] = value
    return obj


def set_in(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(obj: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = obj
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value

    return edit


POLICY = {"syncOptions": ["ServerSideApply=true"], "retry": {"limit": 2, "backoff": {"factor": 2}}}


def synced(edit: Callable[[dict[str, Any]], None] = lambda op: None) -> dict[str, Any]:
    """An Application with a syncPolicy, given the operation argo.sync_patch builds for it
    (then `edit`ed): what the bot writes, or a variant of it."""
    app = base(APP_KEY)
    app["spec"]["syncPolicy"] = copy.deepcopy(POLICY)
    operation = argo.sync_patch(app, "U0OPERATOR", "C0CHANNEL", NOW)["operation"]
    edit(operation)
    new = {**copy.deepcopy(app), "operation": operation}
    return admission("UPDATE", APP_KEY, new, app)


def without(*path: str) -> Callable[[dict[str, Any]], None]:
    def edit(operation: dict[str, Any]) -> None:
        node = operation
        for part in path[:-1]:
            node = node[part]
        del node[path[-1]]

    return edit


def removing_operation() -> dict[str, Any]:
    review = synced()
    review["object"], review["oldObject"] = review["oldObject"], review["object"]
    return review


ALLOWED = {
    "pause a ScaledJob": annotate(JOB_KEY, "autoscaling.keda.sh/paused", "true"),
    "resume a ScaledObject": admission(
        "UPDATE",
        SO_KEY,
        base(SO_KEY),
        with_annotation(SO_KEY, "autoscaling.keda.sh/paused", "true"),
    ),
    "remove paused-replicas": admission(
        "UPDATE", SO_KEY, base(SO_KEY), with_annotation(SO_KEY, PAUSED_REPLICAS, "0")
    ),
    "our record on a ScaledJob": annotate(JOB_KEY, "kai-chatops/paused-by", "U0OPERATOR"),
    "Flux reconcile request": annotate(GIT_KEY, "reconcile.fluxcd.io/requestedAt", "now"),
    "Flux suspend": changed(GIT_KEY, set_in("spec.suspend", True)),
    "Argo CD refresh": annotate(APP_KEY, "argocd.argoproj.io/refresh", "hard"),
    "Argo CD normal refresh": annotate(APP_KEY, "argocd.argoproj.io/refresh", "normal"),
    "Argo CD refresh timestamp": annotate(
        APP_KEY, "argocd.argoproj.io/refresh-timestamp", "2026-12-02T01:00:00Z"
    ),
    "Argo CD refresh timestamp with an offset": annotate(
        APP_KEY, "argocd.argoproj.io/refresh-timestamp", "2026-12-02T02:00:00.5+01:00"
    ),
    "Argo CD sync as the bot builds it": synced(),
    "Argo CD sync of an app without syncPolicy": changed(
        APP_KEY,
        set_in("operation", argo.sync_patch(base(APP_KEY), "U0OP", "", NOW)["operation"]),
    ),
    "its state ConfigMap": changed(STATE_KEY, set_in("data", {"sim.json": "{}"})),
    "a cluster's state ConfigMap": changed(SHARD_KEY, set_in("data", {"prod.json": "{}"})),
    "the fleet incidents' ConfigMap": changed(
        (*STATE_KEY[:3], "kai-chatops-state--fleet"), set_in("data", {"_fleet.json": "{}"})
    ),
    "a cluster's state ConfigMap created": admission("CREATE", SHARD_KEY, base(SHARD_KEY), None),
    "the approvals' ConfigMap created": admission(
        "CREATE", APPROVALS_KEY, base(APPROVALS_KEY), None
    ),
    "its Lease": changed(LEASE_KEY, set_in("spec.holderIdentity", "pod-2")),
    "a cordon": changed(NODE_KEY, set_in("spec.unschedulable", True)),
    "an uncordon": changed(NODE_KEY, set_in("spec.unschedulable", False)),
    "our cordon record": annotate(NODE_KEY, "kai-chatops/cordoned-by", "U0OPERATOR"),
    "someone else's change": {
        **changed(GIT_KEY, set_in("spec.url", "https://evil.example/repo")),
        "request": {
            **changed(GIT_KEY, set_in("spec.url", "x"))["request"],
            "userInfo": {"username": "system:serviceaccount:flux-system:kustomize-controller"},
        },
    },
}
REFUSED = {
    "a GitRepository's url": (
        changed(GIT_KEY, set_in("spec.url", "https://evil.example/repo")),
        "may not change spec.url",
    ),
    "an Application's source": (
        changed(APP_KEY, set_in("spec.source.repoURL", "https://evil.example/apps")),
        "may not change spec.source",
    ),
    "a HelmRelease's interval": (
        changed(HR_KEY, set_in("spec.interval", "1s")),
        "may not change spec.interval",
    ),
    "a ScaledJob's image": (
        changed(JOB_KEY, set_in("spec.jobTargetRef", {"template": {}})),
        "may not change spec.jobTargetRef",
    ),
    "suspend on a ScaledJob": (
        changed(JOB_KEY, set_in("spec.suspend", True)),
        "may not change spec.suspend",
    ),
    "someone else's annotation": (
        annotate(HR_KEY, "team", "intruders"),
        "may not change metadata.annotations[team]",
    ),
    "removing someone else's annotation": (
        annotate(HR_KEY, "team", None),
        "may not change metadata.annotations[team]",
    ),
    "Flux's annotation on a ScaledJob": (
        annotate(JOB_KEY, "reconcile.fluxcd.io/requestedAt", "now"),
        "metadata.annotations[reconcile.fluxcd.io/requestedAt]",
    ),
    "a one-direction KEDA pause": (
        annotate(JOB_KEY, "autoscaling.keda.sh/paused-scale-in", "true"),
        "metadata.annotations[autoscaling.keda.sh/paused-scale-in]",
    ),
    "Argo CD sync options": (
        annotate(APP_KEY, "argocd.argoproj.io/sync-options", "Prune=true"),
        "metadata.annotations[argocd.argoproj.io/sync-options]",
    ),
    "labels": (changed(HR_KEY, set_in("metadata.labels", {"app": "x"})), "metadata.labels"),
    "finalizers": (changed(HR_KEY, set_in("metadata.finalizers", [])), "metadata.finalizers"),
    "an Application's status": (
        changed(APP_KEY, set_in("status.sync", {"status": "Synced"})),
        "may not change status",
    ),
    "an operation on a HelmRelease": (
        changed(HR_KEY, set_in("operation", {"sync": {}})),
        "may not change operation",
    ),
    "deleting a GitRepository": (
        admission("DELETE", GIT_KEY, None, base(GIT_KEY)),
        "may only update gitrepositories, not DELETE",
    ),
    "creating a HelmRelease": (
        admission("CREATE", HR_KEY, base(HR_KEY), None),
        "may only update helmreleases, not CREATE",
    ),
    "its own config ConfigMap": (
        changed(("", "configmaps", "kai-chatops", "kai-chatops-config"), set_in("data", {})),
        "not kai-chatops/kai-chatops-config",
    ),
    "a ConfigMap elsewhere": (
        admission("CREATE", ("", "configmaps", "kube-system", "kai-chatops-state"), {}, None),
        "not kube-system/kai-chatops-state",
    ),
    "deleting its state": (
        admission("DELETE", STATE_KEY, None, base(STATE_KEY)),
        "may not delete configmaps",
    ),
    "deleting a cluster's state": (
        admission("DELETE", SHARD_KEY, None, base(SHARD_KEY)),
        "may not delete configmaps",
    ),
    "a ConfigMap named past the prefix": (
        changed(("", "configmaps", "kai-chatops", "kai-chatops-statewide"), set_in("data", {})),
        "not kai-chatops/kai-chatops-statewide",
    ),
    "a cluster's state ConfigMap created without our label": (
        admission(
            "CREATE", SHARD_KEY, {**base(SHARD_KEY), "metadata": {"name": SHARD_KEY[3]}}, None
        ),
        "managed-by: kai-chatops, not kai-chatops/kai-chatops-state-prod without it",
    ),
    "our label taken off a state ConfigMap": (
        changed(SHARD_KEY, set_in("metadata.labels", {"app": "x"})),
        "labelled app.kubernetes.io/managed-by: kai-chatops",
    ),
    "a node's taints": (
        changed(NODE_KEY, set_in("spec.taints", [{"key": "x", "effect": "NoExecute"}])),
        "may not change spec.taints",
    ),
    "a node's providerID": (
        changed(NODE_KEY, set_in("spec.providerID", "aws:///evil")),
        "may not change spec.providerID",
    ),
    "a node's labels": (
        changed(NODE_KEY, set_in("metadata.labels", {"nvidia.com/gpu.present": "false"})),
        "may not change metadata.labels",
    ),
    "NVSentinel's annotation on a node": (
        annotate(NODE_KEY, "k8saas.nvidia.com/cordon-by", "kai-chatops"),
        "metadata.annotations[k8saas.nvidia.com/cordon-by]",
    ),
    "a node deleted": (
        admission("DELETE", NODE_KEY, None, base(NODE_KEY)),
        "may only update nodes, not DELETE",
    ),
    "unschedulable on a ScaledJob": (
        changed(JOB_KEY, set_in("spec.unschedulable", True)),
        "may not change spec.unschedulable",
    ),
    "another Lease": (
        changed(("coordination.k8s.io", "leases", "kai-chatops", "other"), set_in("spec", {})),
        "not kai-chatops/other",
    ),
}


# Issue 22: the fields the bot owns, written with anything but what it writes.
REFRESH = "argocd.argoproj.io/refresh"
REFRESH_TIMESTAMP = "argocd.argoproj.io/refresh-timestamp"


def refused_value(key: Key, name: str, value: str) -> tuple[dict[str, Any], str]:
    """The annotation `name` set to `value`, and the field its refusal must name."""
    return annotate(key, name, value), f"metadata.annotations[{name}]"


EVIL = "https://evil.example/apps"
REFUSED_VALUES = {
    "paused-replicas set to 5000": refused_value(JOB_KEY, PAUSED_REPLICAS, "5000"),
    "paused-replicas changed": (
        admission(
            "UPDATE",
            SO_KEY,
            with_annotation(SO_KEY, PAUSED_REPLICAS, "9"),
            with_annotation(SO_KEY, PAUSED_REPLICAS, "0"),
        ),
        "metadata.annotations[autoscaling.keda.sh/paused-replicas]",
    ),
    "paused set to false": refused_value(JOB_KEY, "autoscaling.keda.sh/paused", "false"),
    "refresh set to something else": refused_value(APP_KEY, REFRESH, "hard; prune"),
    "refresh-timestamp not a time": refused_value(APP_KEY, REFRESH_TIMESTAMP, "now"),
    "refresh-timestamp on a HelmRelease": refused_value(
        HR_KEY, REFRESH_TIMESTAMP, "2026-12-02T01:00:00Z"
    ),
    "sync from another source": (
        synced(set_in("sync.source", {"repoURL": EVIL, "path": "."})),
        "operation.sync.source",
    ),
    "sync from other sources": (
        synced(set_in("sync.sources", [{"repoURL": EVIL}])),
        "operation.sync.sources",
    ),
    "sync of inline manifests": (
        synced(set_in("sync.manifests", ['{"kind":"Namespace"}'])),
        "operation.sync.manifests",
    ),
    "sync of chosen resources": (
        synced(set_in("sync.resources", [{"kind": "Secret", "name": "x"}])),
        "operation.sync.resources",
    ),
    "sync of another revision": (
        synced(set_in("sync.revision", "evil-branch")),
        "operation.sync.revision",
    ),
    "sync with prune": (synced(set_in("sync.prune", True)), "operation.sync.prune"),
    "sync with apply --force": (
        synced(set_in("sync.syncStrategy", {"apply": {"force": True}})),
        "operation.sync.syncStrategy",
    ),
    "sync with hook --force": (
        synced(set_in("sync.syncStrategy", {"hook": {"force": True}})),
        "operation.sync.syncStrategy",
    ),
    "sync with no strategy": (synced(without("sync", "syncStrategy")), "syncStrategy"),
    "sync with other syncOptions": (
        synced(set_in("sync.syncOptions", ["ServerSideApply=true", "Replace=true"])),
        "operation.sync.syncOptions",
    ),
    "sync without the app's syncOptions": (
        synced(without("sync", "syncOptions")),
        "operation.sync.syncOptions",
    ),
    "sync with another retry": (
        synced(set_in("retry", {"limit": 100})),
        "operation.retry",
    ),
    "sync without the app's retry": (synced(without("retry")), "operation.retry"),
    "an operation without a sync": (synced(without("sync")), "operation.sync"),
    "an operation beside the sync": (
        synced(set_in("rollback", {"id": 1})),
        "operation.rollback",
    ),
    "an operation started as someone else": (
        synced(set_in("initiatedBy", {"username": "admin", "automated": True})),
        "operation.initiatedBy",
    ),
    "an operation removed": (removing_operation(), "operation (removing it)"),
}


@pytest.mark.parametrize("review", list(ALLOWED.values()), ids=list(ALLOWED))
def test_the_fields_the_bot_owns_may_change(
    review: dict[str, Any], policies: list[dict[str, Any]]
) -> None:
    assert refused_by(policies, review) == []


# Outside the bot's fields, or in them in another shape than it writes (REFUSED_VALUES).
EVERY_REFUSED = {**REFUSED, **REFUSED_VALUES}


@pytest.mark.parametrize(
    ("review", "naming"), list(EVERY_REFUSED.values()), ids=list(EVERY_REFUSED)
)
def test_any_other_change_is_refused_naming_the_field(
    review: dict[str, Any], naming: str, policies: list[dict[str, Any]]
) -> None:
    refused = refused_by(policies, review)
    assert refused, "allowed"
    assert naming in refused[0], refused
