"""deploy/'s RBAC as the real API server decides it for the bot's ServiceAccount token.

Every call: each (verb, group, resource, subresource, namespace) the bot makes (bot/kube/gateway.py
and its callers, listed below with where they come from) is allowed — asked with a
SelfSubjectAccessReview as the bot, and a few made for real with its token.

Nothing more: what SelfSubjectRulesReview (`kubectl auth can-i --list`) shows the bot in each
namespace it works in, and in one it never works in, equals INTENT, a table written from
docs/design.md and deploy/'s comments rather than derived from deploy/: a rule beyond it (secrets,
a delete, a create of a workload, a namespace too many) fails the test, naming the rule.

tests/e2e/test_deploy_permissions.py checks the same list against the rendered manifests and the
calls the simulator saw; this is the API server's own answer.
"""

from __future__ import annotations

import datetime as dt
import secrets
import time
from dataclasses import dataclass
from typing import Any

import pytest
from botcalls import (
    APPLICATION,
    BOT_NS,
    BOT_USER,
    CONFIG_MAP,
    FLUX_NS,
    HELM_RELEASE,
    KEDA_NS,
    LEASE,
    SCALED_JOB,
    SCALED_OBJECT,
    Answer,
    Caller,
    Kind,
    Seeder,
    admin_caller,
    path_of,
)
from controlplane import ControlPlane, poll

KAI_NS = "kai-scheduler"  # kai.namespace
KEDA_OPERATOR_NS = "keda"  # where the external-metrics APIService's Service lives
ARGO_NS = "argocd"
# Its state ConfigMaps: the legacy shared one of releases before the shards, one per cluster
# (and the fleet's), the replay memory, the journal, the approvals.
STATE = (
    "kai-chatops-state",
    "kai-chatops-state-sim",
    "kai-chatops-state--fleet",
    "kai-chatops-state-once",
    "kai-chatops-state-changes",
    "kai-chatops-state-approvals",
)
LEASE_NAME = "kai-chatops-alerts"
ALL = None  # a cluster-scoped resource, or a list across every namespace


@dataclass(frozen=True)
class Call:
    """One API call the bot makes, and the code that makes it."""

    verb: str
    group: str
    resource: str
    namespace: str | None
    name: str = ""
    subresource: str = ""
    where: str = ""

    @property
    def id(self) -> str:
        resource = self.resource + (f"/{self.subresource}" if self.subresource else "")
        place = self.namespace or "cluster"
        return f"{self.verb}-{resource}" + (f"-{self.name}" if self.name else "") + f"@{place}"


def reads(verbs: str, group: str, resource: str, namespace: str | None, where: str) -> list[Call]:
    return [Call(verb, group, resource, namespace, where=where) for verb in verbs.split()]


FLUX_KINDS = {
    "helm.toolkit.fluxcd.io": ("helmreleases",),
    "kustomize.toolkit.fluxcd.io": ("kustomizations",),
    "source.toolkit.fluxcd.io": ("gitrepositories", "helmrepositories", "ocirepositories"),
}
# Every call the bot makes, by feature (namespaces as deploy/overlays/socket-mode/config.yaml
# sets them: keda.namespaces [annia], kai.namespace kai-scheduler, state and Lease in
# kai-chatops; Flux objects in flux-system, Applications in argocd).
CALLS: list[Call] = [
    # /kai health and the alert checks (bot/health/usecase.py)
    Call("get", "kai.scheduler", "configs", ALL, "kai-config", where="health"),
    *reads("list", "kai.scheduler", "schedulingshards", ALL, "health"),
    *reads("list", "apiextensions.k8s.io", "customresourcedefinitions", ALL, "health"),
    Call("get", "apiregistration.k8s.io", "apiservices", ALL, "v1beta1.external.metrics.k8s.io"),
    # The alert checks follow what they read by list and watch (bot/kube/informer.py)
    *reads("list watch", "kai.scheduler", "configs", ALL, "alerts: followed"),
    *reads("watch", "kai.scheduler", "schedulingshards", ALL, "alerts: followed"),
    *reads("list watch", "apiregistration.k8s.io", "apiservices", ALL, "alerts: followed"),
    *reads("watch", "scheduling.run.ai", "queues", ALL, "queue starvation: followed"),
    *reads("list watch", "scheduling.run.ai", "podgroups", ALL, "queue starvation: followed"),
    *reads("watch", "apps", "deployments", KAI_NS, "alerts: followed"),
    *reads("list watch", "coordination.k8s.io", "leases", KAI_NS, "scheduler stall: followed"),
    # GPU nodes (bot/nodes/usecase.py, expiry.py; the alert follows them: bot/alerts/node_checks.py)
    *reads("get list watch", "", "nodes", ALL, "/kai nodes, cordon, the GPU node alert"),
    Call("patch", "", "nodes", ALL, where="cordon, uncordon, a timed cordon's end"),
    *reads("list", "", "pods", ALL, "/kai nodes: the unfinished pods' GPUs, across the cluster"),
    # KEDA pause/resume (bot/keda/usecase.py, expiry.py; follow.py watches KEDA's Paused)
    *[
        call
        for plural in ("scaledjobs", "scaledobjects")
        for call in (
            *reads("get list patch watch", "keda.sh", plural, KEDA_NS, "keda pause/resume"),
            *reads("list", "keda.sh", plural, ALL, "/kai scaledjobs --all-namespaces"),
        )
    ],
    # /kai queues, pending, why (bot/workloads/usecase.py)
    *reads("get list", "scheduling.run.ai", "queues", ALL, "workloads"),
    Call("get", "", "namespaces", ALL, where="/kai pending NAMESPACE: does it exist"),
    *reads("get list", "scheduling.run.ai", "podgroups", KEDA_NS, "workloads"),
    *reads("get", "scheduling.run.ai", "bindrequests", KEDA_NS, "/kai why"),
    # Eviction notices: KAI's Evict Events, listed then watched across the cluster
    # (bot/notices/watch.py, field selector reason=Evict)
    *reads("list watch", "", "events", ALL, "eviction notices, the scheduler stall alert"),
    *reads("get", "", "pods", KEDA_NS, "/kai why NAMESPACE/POD"),
    *reads("list", "", "pods", KEDA_NS, "eviction notices: a stale gang's pods (KAI #1968)"),
    *reads("list", "", "events", KEDA_NS, "/kai why NAMESPACE/POD"),
    # /kai diagnose kai and NAMESPACE/DEPLOYMENT in kai.namespace (bot/diagnostics/usecase.py)
    *reads("get list", "apps", "deployments", KAI_NS, "health (list), diagnose kai"),
    *reads("list", "apps", "daemonsets", KAI_NS, "health: operands of any kind (KAI v0.16)"),
    *reads("list", "apps", "replicasets", KAI_NS, "diagnose kai, /kai timeline"),
    *reads("list", "apps", "controllerrevisions", KAI_NS, "/kai timeline: DaemonSet revisions"),
    *reads("list", "", "pods", KAI_NS, "diagnose kai"),
    *reads("list", "", "events", KAI_NS, "diagnose kai"),
    Call("get", "", "pods", KAI_NS, subresource="log", where="diagnose kai: a log tail"),
    # /kai diagnose keda: the Service behind the APIService, in KEDA's namespace
    *reads("get", "", "services", KEDA_OPERATOR_NS, "diagnose keda"),
    *reads("list", "apps", "deployments", KEDA_OPERATOR_NS, "diagnose keda"),
    *reads("list", "apps", "replicasets", KEDA_OPERATOR_NS, "diagnose keda, /kai timeline"),
    *reads("list", "apps", "controllerrevisions", KEDA_OPERATOR_NS, "/kai timeline"),
    *reads("list", "", "pods", KEDA_OPERATOR_NS, "diagnose keda"),
    *reads("list", "", "events", KEDA_OPERATOR_NS, "diagnose keda"),
    *reads("list", "discovery.k8s.io", "endpointslices", KEDA_OPERATOR_NS, "diagnose keda"),
    Call("get", "", "pods", KEDA_OPERATOR_NS, subresource="log", where="diagnose keda: a log"),
    # Flux reconcile, suspend, resume (bot/gitops/usecase.py, usecase_suspend.py; follow.py watches)
    *[
        call
        for group, plurals in FLUX_KINDS.items()
        for plural in plurals
        for call in (
            *reads("get patch watch", group, plural, FLUX_NS, "flux reconcile/suspend/resume"),
            *reads("list watch", group, plural, ALL, "timed suspends, Home tab, /kai list"),
        )
    ],
    *reads("get patch watch", "source.toolkit.fluxcd.io", "helmcharts", FLUX_NS, "--with-source"),
    # Argo CD refresh and sync (bot/gitops/usecase.py, argo.py), /kai list app
    *reads("get list patch watch", "argoproj.io", "applications", ARGO_NS, "argo refresh/sync"),
    *reads("get", "argoproj.io", "appprojects", ARGO_NS, "argo sync: the sync windows"),
    # Its own Lease and state (bot/alerts/lease.py, store.py, access/once.py, journal.py)
    *[Call(v, "coordination.k8s.io", "leases", BOT_NS, LEASE_NAME) for v in ("get", "patch")],
    Call("create", "coordination.k8s.io", "leases", BOT_NS, LEASE_NAME, where="first start"),
    *[Call(v, "", "configmaps", BOT_NS, name) for name in STATE for v in ("get", "patch")],
    *[Call("create", "", "configmaps", BOT_NS, name, where="first use") for name in STATE],
    *reads("list watch", "", "configmaps", BOT_NS, "the alert store's copy of its ConfigMaps"),
]
# `/kai reconcile ks NAME --with-source` on a Kustomization whose sourceRef is a Bucket reads,
# patches and follows the Bucket (bot/gitops/plan.py `direct_source` accepts every kind in
# bot/gitops/kinds.py FLUX, Bucket included): components/flux/rbac-flux.yaml grants it (issue 22).
BUCKETS: list[Any] = [
    pytest.param(
        Call(verb, "source.toolkit.fluxcd.io", "buckets", FLUX_NS, where="--with-source"),
        id=f"{verb}-buckets@{FLUX_NS}",
    )
    for verb in ("get", "patch", "watch")
]


def access_review(bot: Caller, call: Call) -> dict[str, Any]:
    attributes = {
        "verb": call.verb,
        "group": call.group,
        "resource": call.resource,
        "subresource": call.subresource,
        "namespace": call.namespace or "",
        "name": call.name,
    }
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    }
    answer = bot("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body)
    assert answer.status == 201, answer.message
    status: dict[str, Any] = answer.body["status"]
    return status


# ------------------------------------------------------------------------------- every call
@pytest.mark.parametrize("call", [pytest.param(c, id=c.id) for c in CALLS] + BUCKETS)
def test_the_service_account_may_make_each_call_the_bot_makes(bot: Caller, call: Call) -> None:
    review = access_review(bot, call)
    assert review.get("allowed") is True, f"{call} ({call.where}): {review}"
    assert not review.get("denied")


def test_the_call_list_names_each_call_once() -> None:
    ids = [c.id for c in CALLS]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_the_bots_token_lists_gets_and_watches_what_the_bot_reads(
    control_plane: ControlPlane, bot: Caller, seeder: Seeder
) -> None:
    job = seeder.make(SCALED_JOB, prefix="rbac")
    release = seeder.make(HELM_RELEASE, prefix="rbac")
    app = seeder.make(APPLICATION, prefix="rbac")
    for kind, obj in ((SCALED_JOB, job), (HELM_RELEASE, release), (APPLICATION, app)):
        got = bot("GET", path_of(kind, obj))
        assert got.status == 200, got.message
        assert got.body["metadata"]["uid"] == obj["metadata"]["uid"]
    listed = bot("GET", SCALED_JOB.path(KEDA_NS) + "?limit=500")
    assert job["metadata"]["name"] in [o["metadata"]["name"] for o in listed.body["items"]]
    across = bot("GET", "/apis/helm.toolkit.fluxcd.io/v2/helmreleases?limit=500")
    assert across.status == 200, across.message
    assert release["metadata"]["name"] in [o["metadata"]["name"] for o in across.body["items"]]
    crds = bot("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
    assert crds.status == 200, crds.message
    # A watch of one object from the version read, as bot/kube/gateway.py `watch_object` makes
    # it; the server ends the stream after timeoutSeconds, having sent nothing (no change).
    name, version = app["metadata"]["name"], app["metadata"]["resourceVersion"]
    query = (
        f"?watch=true&fieldSelector=metadata.name={name}&resourceVersion={version}"
        "&allowWatchBookmarks=true&timeoutSeconds=1"
    )
    watched = bot("GET", APPLICATION.path(ARGO_NS) + query)
    assert watched.status == 200, watched.message


def test_the_bots_token_patches_an_annotation_it_owns(bot: Caller, seeder: Seeder) -> None:
    so = seeder.make(SCALED_OBJECT, prefix="rbac")
    path = path_of(SCALED_OBJECT, so)
    for _ in range(3):  # a KEDA stand-in may write the object's status meanwhile: read again
        version = bot("GET", path).body["metadata"]["resourceVersion"]
        body = {
            "metadata": {
                "resourceVersion": version,
                "annotations": {"autoscaling.keda.sh/paused": "true"},
            }
        }
        written = bot.patch(path, body)
        if written.status != 409:
            break
    assert written.status == 200, written.message
    assert written.body["metadata"]["annotations"]["autoscaling.keda.sh/paused"] == "true"


def test_the_bots_token_reads_a_pods_log_as_far_as_rbac_goes(
    control_plane: ControlPlane, bot: Caller, seeder: Seeder
) -> None:
    # No kubelet runs here, so the pod is never scheduled and has no log: kube-apiserver 1.37
    # answers 204 No Content for it, only once RBAC has let the bot through (403 else).
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"binder-{int(time.time() * 1000) % 100000}", "namespace": KAI_NS},
        "spec": {
            "automountServiceAccountToken": False,
            "containers": [{"name": "binder", "image": "registry.example/binder:1"}],
        },
    }
    admin = admin_caller(control_plane)

    # The ServiceAccount admission plugin wants the namespace's `default` ServiceAccount, which
    # kube-controller-manager makes shortly after the namespace.
    def create() -> Answer | None:
        answer = admin("POST", f"/api/v1/namespaces/{KAI_NS}/pods", pod)
        return answer if answer.status == 201 else None

    created = poll("a pod in kai-scheduler", create, 30)
    seeder.forget_later(f"/api/v1/namespaces/{KAI_NS}/pods/{created.body['metadata']['name']}")
    name = created.body["metadata"]["name"]
    log = bot("GET", f"/api/v1/namespaces/{KAI_NS}/pods/{name}/log?container=binder&tailLines=20")
    assert log.status == 204, log.message
    # In a namespace where deploy/ grants no pods/log, the same read is RBAC's 403.
    refused = bot("GET", f"/api/v1/namespaces/{KEDA_NS}/pods/{name}/log")
    assert refused.status == 403, refused.message
    assert f'User "{BOT_USER}" cannot get resource "pods/log"' in refused.message


def test_the_bots_token_creates_and_renews_its_lease_and_state(
    bot: Caller, seeder: Seeder, control_plane: ControlPlane
) -> None:
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lease_path = LEASE.path(BOT_NS, LEASE_NAME)
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": LEASE_NAME, "namespace": BOT_NS},
        "spec": {"holderIdentity": "pod-1", "leaseDurationSeconds": 60, "renewTime": now},
    }
    ensure_created(bot, admin_caller(control_plane), LEASE, lease)
    seeder.forget_later(lease_path)
    read = bot("GET", lease_path)
    assert read.status == 200, read.message
    renewed = bot.patch(
        lease_path,
        {
            "metadata": {"resourceVersion": read.body["metadata"]["resourceVersion"]},
            "spec": {"holderIdentity": "pod-2", "renewTime": now},
        },
    )
    assert renewed.status == 200, renewed.message
    assert renewed.body["spec"]["holderIdentity"] == "pod-2"
    state = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "kai-chatops-state-changes",
            "namespace": BOT_NS,
            "labels": {"app.kubernetes.io/managed-by": "kai-chatops"},
        },
        "data": {"changes.json": "[]"},
    }
    ensure_created(bot, admin_caller(control_plane), CONFIG_MAP, state)
    seeder.forget_later(CONFIG_MAP.path(BOT_NS, "kai-chatops-state-changes"))
    patched = bot.patch(
        CONFIG_MAP.path(BOT_NS, "kai-chatops-state-changes"), {"data": {"changes.json": "[1]"}}
    )
    assert patched.status == 200, patched.message


def ensure_created(bot: Caller, admin: Caller, kind: Kind, obj: dict[str, Any]) -> None:
    """Create `obj` as the bot, after deleting (as the admin) one another test left."""
    path = kind.path(obj["metadata"]["namespace"], obj["metadata"]["name"])
    admin("DELETE", path)
    created = bot("POST", kind.path(obj["metadata"]["namespace"]), obj)
    assert created.status == 201, created.message


# ------------------------------------------------------------------------------ nothing more
Rule = tuple[str, str, str, str]  # group, resource (with /subresource), verb, resourceName or *
# What Kubernetes' bootstrap roles give every authenticated user (checked below against a
# ServiceAccount bound to nothing): who am I, what may I do, and the public CA bundles.
EVERYONE: set[Rule] = {
    ("authorization.k8s.io", "selfsubjectaccessreviews", "create", "*"),
    ("authorization.k8s.io", "selfsubjectrulesreviews", "create", "*"),
    ("authentication.k8s.io", "selfsubjectreviews", "create", "*"),
    ("certificates.k8s.io", "clustertrustbundles", "get", "*"),
    ("certificates.k8s.io", "clustertrustbundles", "list", "*"),
    ("certificates.k8s.io", "clustertrustbundles", "watch", "*"),
}


def rules(group: str, resources: str, verbs: str, names: str = "*") -> set[Rule]:
    return {
        (group, resource, verb, name)
        for resource in resources.split()
        for verb in verbs.split()
        for name in names.split()
    }


# What the bot is meant to be able to do, cluster-wide (ClusterRoles), from docs/design.md §2:
# read KAI's Config, shards, queues and workloads and the metrics APIService for the checks;
# list and watch Events (KAI's evictions, `notices.evictions`; the scheduler's Events about
# PodGroups, `alerts.stall_after`);
# list the KEDA and Flux kinds across the cluster (`--all-namespaces`, the Home tab, timed
# suspends). Reads only: no write anywhere but the namespaces below.
CLUSTER_WIDE: set[Rule] = (
    rules("kai.scheduler", "configs", "get list watch")
    | rules("kai.scheduler", "schedulingshards", "list watch")
    | rules("apiextensions.k8s.io", "customresourcedefinitions", "list")
    | rules("apiregistration.k8s.io", "apiservices", "get list watch")
    | rules("keda.sh", "scaledjobs scaledobjects", "list")
    | rules("scheduling.run.ai", "queues podgroups", "get list watch")
    | rules("", "namespaces", "get")
    | rules("scheduling.run.ai", "bindrequests", "get")
    | rules("", "events", "list watch")
    | rules("", "nodes", "get list watch patch")
    | rules("", "pods", "list")
    | rules("helm.toolkit.fluxcd.io", "helmreleases", "list watch")
    | rules("kustomize.toolkit.fluxcd.io", "kustomizations", "list watch")
    | rules(
        "source.toolkit.fluxcd.io",
        "gitrepositories helmrepositories ocirepositories",
        "list watch",
    )
)
# And per namespace, on top of CLUSTER_WIDE.
INTENT: dict[str, set[Rule]] = {
    # keda.namespaces: pause and resume (patch; watch for KEDA's Paused), /kai why's pod reads,
    # a stale gang's pods (eviction notices).
    KEDA_NS: rules("keda.sh", "scaledjobs scaledobjects", "get list patch watch")
    | rules("", "pods", "get list")
    | rules("", "events", "list"),
    # KEDA's own namespace: /kai diagnose keda reads, and one log; /kai timeline's revisions.
    KEDA_OPERATOR_NS: rules("", "services", "get")
    | rules("apps", "deployments replicasets controllerrevisions", "list")
    | rules("", "pods events", "list")
    | rules("", "pods/log", "get")
    | rules("discovery.k8s.io", "endpointslices", "list"),
    # kai.namespace: KAI's Deployments and DaemonSets for the health check, /kai diagnose kai;
    # the shard schedulers' leader Leases, followed for the scheduler stall alert.
    KAI_NS: rules("apps", "deployments", "get list watch")
    | rules("coordination.k8s.io", "leases", "list watch")
    | rules("apps", "daemonsets replicasets controllerrevisions", "list")
    | rules("", "pods events", "list")
    | rules("", "pods/log", "get"),
    # Flux: read, reconcile (annotations), suspend/resume (spec.suspend), follow by watch.
    FLUX_NS: rules("helm.toolkit.fluxcd.io", "helmreleases", "get patch watch")
    | rules("kustomize.toolkit.fluxcd.io", "kustomizations", "get patch watch")
    | rules(
        "source.toolkit.fluxcd.io",
        "gitrepositories helmrepositories ocirepositories helmcharts buckets",
        "get patch watch",
    ),
    # Argo CD: refresh (annotation) and sync (operation), list, follow by watch; the AppProject's
    # sync windows read before a sync.
    ARGO_NS: rules("argoproj.io", "applications", "get list patch watch")
    | rules("argoproj.io", "appprojects", "get"),
    # Its own namespace: its Lease by name; its state ConfigMaps, one per cluster, cannot be
    # named, and a watch by label cannot be limited by name: the admission policy
    # kai-chatops-own-state lets it write only its own (test_admission.py). No Secret.
    BOT_NS: rules("coordination.k8s.io", "leases", "get patch", LEASE_NAME)
    | rules("coordination.k8s.io", "leases", "create")
    | rules("", "configmaps", "get list watch patch create"),
    # A namespace the bot has no business in: the cluster-wide reads only.
    "default": set(),
}


def rules_review(bot: Caller, namespace: str) -> dict[str, Any]:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": namespace},
    }
    answer = bot("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", body)
    assert answer.status == 201, answer.message
    status: dict[str, Any] = answer.body["status"]
    return status


def expand(resource_rules: list[dict[str, Any]]) -> set[Rule]:
    return {
        (group, resource, verb, name)
        for rule in resource_rules
        for group in rule.get("apiGroups") or [""]
        for resource in rule.get("resources") or []
        for verb in rule.get("verbs") or []
        for name in rule.get("resourceNames") or ["*"]
    }


@pytest.mark.parametrize("namespace", list(INTENT))
def test_the_service_account_may_do_nothing_beyond_deploys_intent(
    bot: Caller, namespace: str
) -> None:
    review = rules_review(bot, namespace)
    assert review.get("incomplete") is not True, review.get("evaluationError")
    granted = expand(review.get("resourceRules") or [])
    meant = EVERYONE | CLUSTER_WIDE | INTENT[namespace]
    beyond = sorted(granted - meant)
    assert beyond == [], f"the bot may do more than deploy/ means to in {namespace}: {beyond}"
    short = sorted(meant - granted)
    assert short == [], f"the bot may not do what deploy/ means to in {namespace}: {short}"


def test_everyone_is_what_a_service_account_bound_to_nothing_may_do(
    control_plane: ControlPlane,
) -> None:
    admin = admin_caller(control_plane)
    name = f"nobody-{secrets.token_hex(3)}"
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
    assert admin("POST", "/api/v1/namespaces/default/serviceaccounts", account).status == 201
    try:
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
        minted = admin("POST", f"/api/v1/namespaces/default/serviceaccounts/{name}/token", request)
        assert minted.status == 201, minted.message
        nobody = Caller(control_plane, minted.body["status"]["token"])
        for namespace in ("default", BOT_NS):
            assert expand(rules_review(nobody, namespace)["resourceRules"]) == EVERYONE
    finally:
        admin("DELETE", f"/api/v1/namespaces/default/serviceaccounts/{name}")


def test_no_rule_of_the_bot_names_a_wildcard_or_a_secret(bot: Caller) -> None:
    for namespace in INTENT:
        review = rules_review(bot, namespace)
        # Discovery, /version, /healthz and the like: read-only for everyone.
        for rule in review.get("nonResourceRules") or []:
            assert set(rule["verbs"]) <= {"get"}, (namespace, rule)
        for group, resource, verb, _ in expand(review["resourceRules"]):
            if (group, resource, verb, "*") in EVERYONE:
                continue
            assert "*" not in (group, resource, verb), (namespace, group, resource, verb)
            assert resource not in ("secrets", "serviceaccounts/token"), (namespace, resource)
            assert verb not in ("delete", "deletecollection", "impersonate", "escalate", "bind")
