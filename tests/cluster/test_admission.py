"""deploy/'s ValidatingAdmissionPolicies as the real API server enforces them on the bot's token.

The bot's own writes pass: each body built by the bot's own code (bot/keda/pause.py,
bot/gitops/plan.py, suspend.py, argo.py) and sent as bot/kube/gateway.py sends it (a JSON merge
patch), and its Lease and request memory written by the bot's own classes through its own
gateway. Every other change made with its token is refused by the server (403) with a message
naming the policy and the field: `kai-chatops-owned-fields` for the KEDA, Flux and Argo CD
objects, `kai-chatops-own-state` for ConfigMaps and Leases, and RBAC (no verb) for deletes,
status writes and other objects. Each refused object is read back unchanged.

The fields the bot owns, written in any shape but the one it writes (docs/design.md §2 "Safety":
"only the fields it owns, in the shape it writes"; issue 22) are refused too, naming the field:
paused-replicas set (the bot only removes it), an Argo CD operation other than the sync it
builds, a refresh annotation with another value.

tests/e2e/test_deploy_admission_policy.py runs the same CEL with cel-python; this is the real
server, with the upstream CRDs' schemas (pruning, defaults) in front of the policy.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable
from typing import Any

import pytest
from botcalls import (
    APPLICATION,
    ARGO_NS,
    BOT_NS,
    BOT_USER,
    CONFIG_MAP,
    CRON,
    FLUX_NS,
    FOREIGN,
    GIT_REPOSITORY,
    HELM_RELEASE,
    HELM_REPOSITORY,
    KEDA_NS,
    KUSTOMIZATION,
    LEASE,
    SCALED_JOB,
    SCALED_OBJECT,
    Answer,
    Caller,
    Kind,
    Seeder,
    path_of,
)
from controlplane import ControlPlane

from bot.access.once import ConfigMapOnce
from bot.alerts.lease import LeaderLease
from bot.config.settings import LeaseSettings
from bot.gitops import argo, plan, suspend
from bot.gitops.target import GitopsTarget
from bot.keda import pause
from bot.kube.gateway import KubeGateway

OWNED_FIELDS = (
    "ValidatingAdmissionPolicy 'kai-chatops-owned-fields' with binding "
    "'kai-chatops-owned-fields' denied request"
)
OWN_STATE = (
    "ValidatingAdmissionPolicy 'kai-chatops-own-state' with binding "
    "'kai-chatops-own-state' denied request"
)
NOW = dt.datetime(2026, 12, 1, 23, 0, tzinfo=dt.UTC)
USER = "U0OPERATOR"


def admitted(answer: Answer) -> dict[str, Any]:
    assert answer.status == 200, f"{answer.status}: {answer.message}"
    body: dict[str, Any] = answer.body
    return body


def annotations(obj: dict[str, Any]) -> dict[str, str]:
    found: dict[str, str] = obj["metadata"].get("annotations") or {}
    return found


def version(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["resourceVersion"])


# ------------------------------------------------------------------- the bot's writes pass
@pytest.mark.parametrize("kind", [SCALED_JOB, SCALED_OBJECT], ids=["ScaledJob", "ScaledObject"])
def test_a_keda_pause_and_resume_as_the_bot_plans_them_are_admitted(
    bot: Caller, seeder: Seeder, kind: Kind
) -> None:
    obj = seeder.make(kind)
    target = pause.KedaTarget(kind.kind, KEDA_NS, obj["metadata"]["name"], "tier")
    paused = pause.plan_pause(
        target, obj, user=USER, reason="GPU maintenance", duration=dt.timedelta(hours=2), now=NOW
    )
    written = admitted(bot.patch(path_of(kind, obj), paused.patch_body(version(obj))))
    assert annotations(written)["autoscaling.keda.sh/paused"] == "true"
    assert annotations(written)["kai-chatops/pause-until"] == "2026-12-02T01:00:00Z"
    resumed = pause.plan_resume(target, written)
    back = admitted(bot.patch(path_of(kind, obj), resumed.patch_body(version(written))))
    # Our keys deleted, everyone else's left as they were.
    assert annotations(back) == FOREIGN


def test_a_scaled_object_resume_deletes_paused_replicas_and_is_admitted(
    bot: Caller, seeder: Seeder
) -> None:
    # Paused by hand to a replica count (KEDA's own annotation): resume deletes that key too.
    held = {"autoscaling.keda.sh/paused": "true", "autoscaling.keda.sh/paused-replicas": "0"}
    obj = seeder.make(SCALED_OBJECT, annotations=held)
    target = pause.KedaTarget("ScaledObject", KEDA_NS, obj["metadata"]["name"], "tier")
    resumed = pause.plan_resume(target, obj)
    assert resumed.annotations == {k: None for k in held}
    back = admitted(bot.patch(path_of(SCALED_OBJECT, obj), resumed.patch_body(version(obj))))
    assert annotations(back) == FOREIGN


@pytest.mark.parametrize(
    ("kind", "force_reset"),
    [
        (HELM_RELEASE, True),
        (KUSTOMIZATION, False),
        (GIT_REPOSITORY, False),
        (HELM_REPOSITORY, False),
    ],
    ids=["HelmRelease-force-reset", "Kustomization", "GitRepository", "HelmRepository"],
)
def test_a_flux_reconcile_request_as_the_bot_builds_it_is_admitted(
    bot: Caller, seeder: Seeder, kind: Kind, force_reset: bool
) -> None:
    obj = seeder.make(kind)
    token = plan.new_token(NOW, plan.taken_tokens(obj))
    body = plan.flux_request_patch(token, USER, force=force_reset, reset=force_reset)
    written = admitted(bot.patch(path_of(kind, obj), body))
    assert annotations(written)["reconcile.fluxcd.io/requestedAt"] == token
    assert annotations(written)["kai-chatops/requested-by"] == f"slack:{USER}"
    if force_reset:
        assert annotations(written)["reconcile.fluxcd.io/forceAt"] == token
        assert annotations(written)["reconcile.fluxcd.io/resetAt"] == token


@pytest.mark.parametrize("kind", [KUSTOMIZATION, HELM_RELEASE], ids=lambda k: k.kind)
def test_a_flux_suspend_and_resume_as_the_bot_plans_them_are_admitted(
    bot: Caller, seeder: Seeder, kind: Kind
) -> None:
    obj = seeder.make(kind)
    target = GitopsTarget(kind.kind, FLUX_NS, obj["metadata"]["name"], "tier")
    suspending = suspend.plan_suspend(
        obj, target, user=USER, reason="incident 42", duration=dt.timedelta(hours=1), now=NOW
    )
    written = admitted(bot.patch(path_of(kind, obj), suspending.patch_body(version(obj))))
    assert written["spec"]["suspend"] is True
    assert annotations(written)["kai-chatops/suspended-by"] == USER
    resuming = suspend.plan_resume(written, target)
    back = admitted(bot.patch(path_of(kind, obj), resuming.patch_body(version(written))))
    assert back["spec"]["suspend"] is False
    assert annotations(back) == FOREIGN


@pytest.mark.parametrize("hard", [True, False], ids=["hard", "normal"])
def test_an_argo_refresh_as_the_bot_builds_it_is_admitted(
    bot: Caller, seeder: Seeder, hard: bool
) -> None:
    app = seeder.make(APPLICATION)
    written = admitted(bot.patch(path_of(APPLICATION, app), argo.refresh_patch(hard, USER, NOW)))
    assert annotations(written)["argocd.argoproj.io/refresh"] == ("hard" if hard else "normal")


def test_an_argo_sync_operation_as_the_bot_builds_it_is_admitted(
    bot: Caller, seeder: Seeder
) -> None:
    app = seeder.make(APPLICATION)  # with syncOptions and retry, which the bot carries over
    body = argo.sync_patch(app, USER, "C0CHANNEL", NOW)
    assert body["operation"]["sync"]["syncOptions"] == ["ServerSideApply=true"]
    written = admitted(bot.patch(path_of(APPLICATION, app), body))
    assert written["operation"] == body["operation"]


async def test_the_bots_lease_is_taken_renewed_and_released_by_its_own_code(
    control_plane: ControlPlane, seeder: Seeder, admin: Caller
) -> None:
    settings = LeaseSettings()
    path = LEASE.path(settings.namespace, settings.name)
    admin("DELETE", path)  # another test's
    seeder.forget_later(path)
    gateway = KubeGateway(control_plane.bot(), cluster="tier", timeout=10, retries=0)
    try:
        lease = LeaderLease(gateway, settings, identity="replica-1")
        assert await lease.renew(NOW) is True  # created
        assert await lease.renew(NOW + dt.timedelta(seconds=4)) is True  # patched
        assert lease.last_error is None
        await lease.release(NOW + dt.timedelta(seconds=5))
    finally:
        gateway.close()
    stored = admitted(admin("GET", path))
    assert stored["spec"].get("holderIdentity") is None
    assert stored["spec"]["leaseTransitions"] == 0


async def test_the_bots_request_memory_is_created_and_patched_by_its_own_code(
    control_plane: ControlPlane, seeder: Seeder, admin: Caller
) -> None:
    name = "kai-chatops-state-once"
    path = CONFIG_MAP.path(BOT_NS, name)
    admin("DELETE", path)
    seeder.forget_later(path)
    gateway = KubeGateway(control_plane.bot(), cluster="tier", timeout=10, retries=0)
    try:
        once = ConfigMapOnce(gateway, namespace=BOT_NS, name=name)
        later = NOW + dt.timedelta(minutes=5)
        assert await once.claim("request-1", later, NOW) is True  # created
        assert await once.claim("request-2", later, NOW) is True  # patched
        assert await once.claim("request-1", later, NOW) is False  # remembered
    finally:
        gateway.close()
    assert set(admitted(admin("GET", path))["data"]) == {"request-1", "request-2"}


def test_the_bots_alert_state_configmap_may_be_created_and_patched(
    bot: Caller, admin: Caller, seeder: Seeder
) -> None:
    path = CONFIG_MAP.path(BOT_NS, "kai-chatops-state")
    admin("DELETE", path)  # test_control_plane.py creates it too: never leave ours behind
    seeder.forget_later(path)
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kai-chatops-state", "namespace": BOT_NS},
        "data": {"alerts.json": "{}"},
    }
    created = bot("POST", CONFIG_MAP.path(BOT_NS), body)
    assert created.status == 201, created.message
    patch = {"metadata": {"resourceVersion": version(created.body)}, "data": {"alerts.json": "[]"}}
    assert admitted(bot.patch(path, patch))["data"] == {"alerts.json": "[]"}


# ------------------------------------------------------------- everything else is refused
def ann(key: str, value: str | None) -> dict[str, Any]:
    return {"metadata": {"annotations": {key: value}}}


def spec(**fields: Any) -> dict[str, Any]:
    return {"spec": fields}


OWNER = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "name": "someone",
    "uid": "6a1f3b0e-0000-4000-8000-000000000001",
}
EVIL_REPO = "https://evil.example/fleet"
# (kind, merge patch with the bot's token, the words after "kai-chatops may not change ").
OWNED_FIELD_CASES: dict[str, tuple[Kind, dict[str, Any], str]] = {
    # KEDA: only paused, paused-replicas and kai-chatops/ annotations.
    "ScaledJob-image": (
        SCALED_JOB,
        spec(
            jobTargetRef={
                "template": {"spec": {"containers": [{"name": "train", "image": "evil:1"}]}}
            }
        ),
        "spec.jobTargetRef",
    ),
    "ScaledJob-triggers": (
        SCALED_JOB,
        spec(triggers=[{"type": "cron", "metadata": {**CRON, "desiredReplicas": "100"}}]),
        "spec.triggers",
    ),
    "ScaledJob-pollingInterval": (SCALED_JOB, spec(pollingInterval=1), "spec.pollingInterval"),
    "ScaledJob-finalizers": (
        SCALED_JOB,
        {"metadata": {"finalizers": ["example.com/hold"]}},
        "metadata.finalizers",
    ),
    "ScaledJob-ownerReferences": (
        SCALED_JOB,
        {"metadata": {"ownerReferences": [OWNER]}},
        "metadata.ownerReferences",
    ),
    "ScaledJob-removing-a-foreign-annotation": (
        SCALED_JOB,
        ann("team", None),
        "metadata.annotations[team]",
    ),
    "ScaledJob-one-direction-pause": (
        SCALED_JOB,
        ann("autoscaling.keda.sh/paused-scale-in", "true"),
        "metadata.annotations[autoscaling.keda.sh/paused-scale-in]",
    ),
    "ScaledJob-a-Flux-annotation": (
        SCALED_JOB,
        ann("reconcile.fluxcd.io/requestedAt", "now"),
        "metadata.annotations[reconcile.fluxcd.io/requestedAt]",
    ),
    "ScaledObject-minReplicaCount": (
        SCALED_OBJECT,
        spec(minReplicaCount=0),
        "spec.minReplicaCount",
    ),
    "ScaledObject-scaleTargetRef": (
        SCALED_OBJECT,
        spec(scaleTargetRef={"name": "someone-elses"}),
        "spec.scaleTargetRef",
    ),
    "ScaledObject-labels": (
        SCALED_OBJECT,
        {"metadata": {"labels": {"team": "other"}}},
        "metadata.labels",
    ),
    "ScaledObject-hpa-ownership-annotation": (
        SCALED_OBJECT,
        ann("scaledobject.keda.sh/transfer-hpa-ownership", "true"),
        "metadata.annotations[scaledobject.keda.sh/transfer-hpa-ownership]",
    ),
    # Flux: only reconcile.fluxcd.io/ and kai-chatops/ annotations, and spec.suspend.
    "GitRepository-url": (GIT_REPOSITORY, spec(url=EVIL_REPO), "spec.url"),
    "GitRepository-branch": (GIT_REPOSITORY, spec(ref={"branch": "evil"}), "spec.ref"),
    "GitRepository-labels": (
        GIT_REPOSITORY,
        {"metadata": {"labels": {"app.kubernetes.io/name": "x"}}},
        "metadata.labels",
    ),
    "GitRepository-an-Argo-annotation": (
        GIT_REPOSITORY,
        ann("argocd.argoproj.io/refresh", "hard"),
        "metadata.annotations[argocd.argoproj.io/refresh]",
    ),
    "HelmRepository-url": (HELM_REPOSITORY, spec(url="https://evil.example/charts"), "spec.url"),
    "HelmRelease-values": (HELM_RELEASE, spec(values={"replicas": 100}), "spec.values"),
    "HelmRelease-chart-version": (
        HELM_RELEASE,
        spec(chart={"spec": {"version": "9.9.9"}}),
        "spec.chart",
    ),
    "HelmRelease-finalizers": (
        HELM_RELEASE,
        {"metadata": {"finalizers": ["finalizers.fluxcd.io"]}},
        "metadata.finalizers",
    ),
    "Kustomization-prune": (KUSTOMIZATION, spec(prune=True), "spec.prune"),
    "Kustomization-path": (KUSTOMIZATION, spec(path="./clusters/evil"), "spec.path"),
    "Kustomization-sourceRef": (
        KUSTOMIZATION,
        spec(sourceRef={"kind": "GitRepository", "name": "evil"}),
        "spec.sourceRef",
    ),
    "Kustomization-ownerReferences": (
        KUSTOMIZATION,
        {"metadata": {"ownerReferences": [OWNER]}},
        "metadata.ownerReferences",
    ),
    "Kustomization-ssa-annotation": (
        KUSTOMIZATION,
        ann("kustomize.toolkit.fluxcd.io/ssa", "Ignore"),
        "metadata.annotations[kustomize.toolkit.fluxcd.io/ssa]",
    ),
    # Argo CD: only the refresh and kai-chatops/ annotations, and the top-level operation.
    "Application-source": (APPLICATION, spec(source={"repoURL": EVIL_REPO}), "spec.source"),
    "Application-destination": (
        APPLICATION,
        spec(destination={"namespace": "kube-system"}),
        "spec.destination",
    ),
    "Application-project": (APPLICATION, spec(project="admin"), "spec.project"),
    "Application-automated-prune": (
        APPLICATION,
        spec(syncPolicy={"automated": {"prune": True}}),
        "spec.syncPolicy",
    ),
    "Application-sync-options-annotation": (
        APPLICATION,
        ann("argocd.argoproj.io/sync-options", "Prune=true"),
        "metadata.annotations[argocd.argoproj.io/sync-options]",
    ),
    "Application-a-KEDA-annotation": (
        APPLICATION,
        ann("autoscaling.keda.sh/paused", "true"),
        "metadata.annotations[autoscaling.keda.sh/paused]",
    ),
    "Application-status": (APPLICATION, {"status": {"sync": {"status": "Synced"}}}, "status"),
    "Application-cascade-delete-finalizer": (
        APPLICATION,
        {"metadata": {"finalizers": ["resources-finalizer.argocd.argoproj.io"]}},
        "metadata.finalizers",
    ),
    "Application-labels": (
        APPLICATION,
        {"metadata": {"labels": {"argocd.argoproj.io/instance": "x"}}},
        "metadata.labels",
    ),
}


@pytest.mark.parametrize(
    ("kind", "patch", "field"), list(OWNED_FIELD_CASES.values()), ids=list(OWNED_FIELD_CASES)
)
def test_a_change_outside_the_bots_fields_is_refused_naming_policy_and_field(
    bot: Caller, admin: Caller, seeder: Seeder, kind: Kind, patch: dict[str, Any], field: str
) -> None:
    obj = seeder.make(kind)
    refused = bot.patch(path_of(kind, obj), patch)
    assert refused.status == 403, f"{refused.status}: {refused.message}"
    assert refused.body["reason"] == "Forbidden"
    assert OWNED_FIELDS in refused.message, refused.message
    assert f"kai-chatops may not change {field}" in refused.message, refused.message
    assert version(admitted(admin("GET", path_of(kind, obj)))) == version(obj)


def lease(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": BOT_NS},
        "spec": {"holderIdentity": "thief"},
    }


def config_map(name: str, namespace: str = BOT_NS) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"k": "v"},
    }


OWN_STATE_CASES: dict[str, tuple[Kind, dict[str, Any], str]] = {
    # RBAC lets the bot create any Lease or ConfigMap in its namespace; the policy does not.
    "another-Lease": (LEASE, lease("kube-scheduler"), "not kai-chatops/kube-scheduler"),
    "a-look-alike-state-ConfigMap": (
        CONFIG_MAP,
        config_map("kai-chatops-state-copy"),
        "not kai-chatops/kai-chatops-state-copy",
    ),
}


@pytest.mark.parametrize(
    ("kind", "body", "words"), list(OWN_STATE_CASES.values()), ids=list(OWN_STATE_CASES)
)
def test_creating_anything_but_its_own_state_is_refused_naming_the_policy(
    bot: Caller, admin: Caller, kind: Kind, body: dict[str, Any], words: str
) -> None:
    refused = bot("POST", kind.path(BOT_NS), body)
    assert refused.status == 403, f"{refused.status}: {refused.message}"
    assert OWN_STATE in refused.message, refused.message
    assert f"kai-chatops may write only its own {kind.plural} in kai-chatops" in refused.message
    assert words in refused.message, refused.message
    assert admin("GET", kind.path(BOT_NS, body["metadata"]["name"])).status == 404


# What RBAC refuses before any policy is asked: a verb deploy/ does not grant (delete, status
# writes), an object outside the names it grants, a namespace it does not work in.
Attempt = Callable[[Seeder, Caller], tuple[str, str, Any]]  # -> method, path, body


def on(kind: Kind, method: str, sub: str | None = None, body: Any = None, **make: Any) -> Attempt:
    def attempt(seeder: Seeder, admin: Caller) -> tuple[str, str, Any]:
        return method, path_of(kind, seeder.make(kind, **make), sub), body

    return attempt


def the_bots_config(seeder: Seeder, admin: Caller) -> tuple[str, str, Any]:
    listed = admitted(admin("GET", CONFIG_MAP.path(BOT_NS)))["items"]
    name = next(
        o["metadata"]["name"]
        for o in listed
        if o["metadata"]["name"].startswith("kai-chatops-config")
    )
    return "PATCH", CONFIG_MAP.path(BOT_NS, name), {"data": {"config.yaml": "access: {}"}}


def another_lease(seeder: Seeder, admin: Caller) -> tuple[str, str, Any]:
    obj = seeder.create(LEASE, lease(f"other-{secrets.token_hex(3)}"))
    return "PATCH", path_of(LEASE, obj), {"spec": {"holderIdentity": "thief"}}


def fixed(method: str, path: str, body: Any = None) -> Attempt:
    return lambda seeder, admin: (method, path, body)


STATUS = {"status": {"conditions": []}}
RBAC_CASES: dict[str, tuple[Attempt, str, str]] = {
    "delete-a-ScaledJob": (on(SCALED_JOB, "DELETE"), "delete", "scaledjobs"),
    "delete-a-HelmRelease": (on(HELM_RELEASE, "DELETE"), "delete", "helmreleases"),
    "delete-a-GitRepository": (on(GIT_REPOSITORY, "DELETE"), "delete", "gitrepositories"),
    "delete-an-Application": (on(APPLICATION, "DELETE"), "delete", "applications"),
    "delete-its-state": (
        fixed("DELETE", CONFIG_MAP.path(BOT_NS, "kai-chatops-state")),
        "delete",
        "configmaps",
    ),
    "delete-its-Lease": (
        fixed("DELETE", LEASE.path(BOT_NS, "kai-chatops-alerts")),
        "delete",
        "leases",
    ),
    "ScaledJob-status-write": (
        on(SCALED_JOB, "PATCH", "status", STATUS),
        "patch",
        "scaledjobs/status",
    ),
    "HelmRelease-status-write": (
        on(HELM_RELEASE, "PATCH", "status", STATUS),
        "patch",
        "helmreleases/status",
    ),
    "its-own-config-ConfigMap": (the_bots_config, "patch", "configmaps"),
    "another-Lease-in-its-namespace": (another_lease, "patch", "leases"),
    "a-ScaledJob-outside-keda-namespaces": (
        on(
            SCALED_JOB,
            "PATCH",
            None,
            ann("autoscaling.keda.sh/paused", "true"),
            namespace="default",
        ),
        "patch",
        "scaledjobs",
    ),
    "a-HelmRelease-outside-flux-system": (
        on(
            HELM_RELEASE,
            "PATCH",
            None,
            ann("reconcile.fluxcd.io/requestedAt", "x"),
            namespace=KEDA_NS,
        ),
        "patch",
        "helmreleases",
    ),
    "create-an-Application": (
        fixed("POST", APPLICATION.path(ARGO_NS), {"kind": "Application"}),
        "create",
        "applications",
    ),
    "create-a-ConfigMap-elsewhere": (
        fixed("POST", CONFIG_MAP.path(KEDA_NS), config_map("kai-chatops-state", KEDA_NS)),
        "create",
        "configmaps",
    ),
    "read-its-Slack-Secret": (
        fixed("GET", f"/api/v1/namespaces/{BOT_NS}/secrets/kai-chatops-slack"),
        "get",
        "secrets",
    ),
    "create-a-Deployment": (
        fixed("POST", f"/apis/apps/v1/namespaces/{BOT_NS}/deployments", {"kind": "Deployment"}),
        "create",
        "deployments",
    ),
}


@pytest.mark.parametrize(
    ("attempt", "verb", "resource"), list(RBAC_CASES.values()), ids=list(RBAC_CASES)
)
def test_rbac_refuses_what_no_role_grants_naming_verb_and_resource(
    bot: Caller, admin: Caller, seeder: Seeder, attempt: Attempt, verb: str, resource: str
) -> None:
    method, path, body = attempt(seeder, admin)
    content = "application/merge-patch+json" if method == "PATCH" else "application/json"
    refused = bot(method, path, body, content)
    assert refused.status == 403, f"{refused.status}: {refused.message}"
    assert f'User "{BOT_USER}" cannot {verb} resource "{resource}"' in refused.message


# ------------------------------------- the bot's own fields, in any other shape (issue 22)
def sync_operation(**sync: Any) -> dict[str, Any]:
    return {"operation": {"initiatedBy": {"username": f"slack:{USER}"}, "sync": sync}}


def bot_sync(app: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """The operation argo.sync_patch builds for `app`, with `changes` (a key set to None is
    removed) in operation.sync, or at the top of the operation when prefixed `top_`."""
    body = argo.sync_patch(app, USER, "C0CHANNEL", NOW)
    operation = body["operation"]
    for name, value in changes.items():
        node, key = (operation, name[4:]) if name.startswith("top_") else (operation["sync"], name)
        if value is None:
            node.pop(key, None)
        else:
            node[key] = value
    return {"operation": operation}


HOOK = {"hook": {}}
# name -> (kind, merge patch or a maker of one from the seeded object, the field the refusal names)
Patch = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]
SHAPE_CASES: dict[str, tuple[Kind, Patch, str]] = {
    "ScaledObject-paused-replicas-5000": (
        SCALED_OBJECT,
        ann("autoscaling.keda.sh/paused-replicas", "5000"),
        "metadata.annotations[autoscaling.keda.sh/paused-replicas]",
    ),
    "ScaledJob-paused-false": (
        SCALED_JOB,
        ann("autoscaling.keda.sh/paused", "false"),
        "metadata.annotations[autoscaling.keda.sh/paused]",
    ),
    "Application-refresh-other-value": (
        APPLICATION,
        ann("argocd.argoproj.io/refresh", "hard,prune"),
        "metadata.annotations[argocd.argoproj.io/refresh]",
    ),
    "Application-refresh-timestamp-not-a-time": (
        APPLICATION,
        ann("argocd.argoproj.io/refresh-timestamp", "yesterday"),
        "metadata.annotations[argocd.argoproj.io/refresh-timestamp]",
    ),
    "Application-sync-from-another-source": (
        APPLICATION,
        sync_operation(source={"repoURL": EVIL_REPO, "path": ".", "targetRevision": "HEAD"}),
        "operation.sync.source",
    ),
    "Application-sync-from-other-sources": (
        APPLICATION,
        sync_operation(sources=[{"repoURL": EVIL_REPO, "path": "."}]),
        "operation.sync.sources",
    ),
    "Application-sync-of-inline-manifests": (
        APPLICATION,
        sync_operation(manifests=['{"apiVersion":"v1","kind":"Namespace","metadata":{}}']),
        "operation.sync.manifests",
    ),
    "Application-sync-with-prune": (
        APPLICATION,
        sync_operation(prune=True, syncStrategy=HOOK),
        "operation.sync.prune",
    ),
    "Application-sync-with-force": (
        APPLICATION,
        sync_operation(syncStrategy={"apply": {"force": True}}),
        "operation.sync.syncStrategy",
    ),
    "Application-bot-sync-of-chosen-resources": (
        APPLICATION,
        lambda app: bot_sync(app, resources=[{"kind": "Secret", "name": "x"}]),
        "operation.sync.resources",
    ),
    "Application-bot-sync-of-another-revision": (
        APPLICATION,
        lambda app: bot_sync(app, revision="evil"),
        "operation.sync.revision",
    ),
    "Application-bot-sync-with-other-syncOptions": (
        APPLICATION,
        lambda app: bot_sync(app, syncOptions=["Replace=true"]),
        "operation.sync.syncOptions",
    ),
    "Application-bot-sync-with-another-retry": (
        APPLICATION,
        lambda app: bot_sync(app, top_retry={"limit": 100}),
        "operation.retry",
    ),
    "Application-bot-sync-started-as-someone-else": (
        APPLICATION,
        lambda app: bot_sync(app, top_initiatedBy={"username": "admin"}),
        "operation.initiatedBy",
    ),
}


@pytest.mark.parametrize(
    ("kind", "patch", "field"), list(SHAPE_CASES.values()), ids=list(SHAPE_CASES)
)
def test_a_write_outside_the_shape_the_bot_writes_is_refused(
    bot: Caller, admin: Caller, seeder: Seeder, kind: Kind, patch: Patch, field: str
) -> None:
    obj = seeder.make(kind)
    refused = bot.patch(path_of(kind, obj), patch(obj) if callable(patch) else patch)
    assert refused.status == 403, f"{refused.status}: {refused.message}"
    assert OWNED_FIELDS in refused.message, refused.message
    assert field in refused.message, refused.message
    assert version(admitted(admin("GET", path_of(kind, obj)))) == version(obj)


def test_an_argo_refresh_with_its_timestamp_is_admitted(bot: Caller, seeder: Seeder) -> None:
    app = seeder.make(APPLICATION)
    body = argo.refresh_patch(True, USER, NOW)
    body["metadata"]["annotations"]["argocd.argoproj.io/refresh-timestamp"] = "2026-12-01T23:00:00Z"
    written = admitted(bot.patch(path_of(APPLICATION, app), body))
    assert annotations(written)["argocd.argoproj.io/refresh-timestamp"] == "2026-12-01T23:00:00Z"
