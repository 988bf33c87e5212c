"""The first answers of a real API server: readiness, the CRDs, deploy/'s RBAC and admission
policies as the bot's own ServiceAccount token meets them, and the aggregator's view of KEDA's
metrics API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from controlplane import BOT_NAMESPACE, BOT_SERVICE_ACCOUNT, ControlPlane, poll
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from seeding import Seeder

BOT_USER = f"system:serviceaccount:{BOT_NAMESPACE}:{BOT_SERVICE_ACCOUNT}"
KEDA_NS = "annia"  # keda.namespaces of the overlay applied: its keda-rbac.yaml lets the bot pause
METRICS_APISERVICE = "v1beta1.external.metrics.k8s.io"

# The kinds the bot reads (bot/kube/kinds.py), served by the upstream CRDs at these versions.
KINDS = {
    "scaledjobs.keda.sh": "v1alpha1",
    "scaledobjects.keda.sh": "v1alpha1",
    "helmreleases.helm.toolkit.fluxcd.io": "v2",
    "kustomizations.kustomize.toolkit.fluxcd.io": "v1",
    "gitrepositories.source.toolkit.fluxcd.io": "v1",
    "ocirepositories.source.toolkit.fluxcd.io": "v1",
    "helmrepositories.source.toolkit.fluxcd.io": "v1",
    "helmcharts.source.toolkit.fluxcd.io": "v1",
    "buckets.source.toolkit.fluxcd.io": "v1",
    "applications.argoproj.io": "v1alpha1",
    "appprojects.argoproj.io": "v1alpha1",
    "configs.kai.scheduler": "v1",
    "schedulingshards.kai.scheduler": "v1",
    "queues.scheduling.run.ai": "v2",
    "podgroups.scheduling.run.ai": "v2alpha2",
    "bindrequests.scheduling.run.ai": "v1alpha2",
}


def scaled_job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledJob",
        "metadata": {"name": name, "namespace": KEDA_NS},
        "spec": {
            "maxReplicaCount": 4,
            "jobTargetRef": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "train", "image": "busybox"}],
                    }
                }
            },
            "triggers": [
                {
                    "type": "cron",
                    "metadata": {
                        "timezone": "UTC",
                        "start": "0 * * * *",
                        "end": "30 * * * *",
                        "desiredReplicas": "1",
                    },
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def seeded(control_plane: ControlPlane) -> Iterator[ControlPlane]:
    """What the bot's reads find: the default scenario (KAI's Config, KEDA's metrics Service and
    APIService, ...) and one more ScaledJob of our own."""
    seeder = Seeder(control_plane.admin())
    seeder.scenario()
    # Nothing serves the metrics API here, whatever an earlier test served.
    slice_ = {"name": "keda-operator-metrics-apiserver-served", "namespace": "keda"}
    seeder.remove(
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": slice_}
    )
    control_plane.apply(scaled_job("train-llm"))
    yield control_plane


def refusal(e: ApiException) -> tuple[int, str]:
    body = json.loads(e.body or "{}")
    return e.status, str(body.get("message", ""))


# ------------------------------------------------------------------------------------ server
def test_apiserver_is_ready_and_is_the_pinned_release(control_plane: ControlPlane) -> None:
    admin = control_plane.admin()
    assert control_plane.raw_get("/readyz") == (200, b"ok")
    # Without credentials the server answers 401: anonymous auth is off.
    assert control_plane.raw_get("/readyz", token="not-a-token")[0] == 401
    version = client.VersionApi(admin).get_code()
    assert version.git_version == "v1.37.2"


def test_upstream_crds_are_established_at_the_versions_the_bot_reads(
    control_plane: ControlPlane,
) -> None:
    ext = client.ApiextensionsV1Api(control_plane.admin())
    for name, version in KINDS.items():
        crd = ext.read_custom_resource_definition(name)
        assert crd.status is not None, name
        conditions = {c.type: c.status for c in crd.status.conditions or []}
        assert conditions["Established"] == "True", name
        assert version in [v.name for v in crd.spec.versions if v.served], name


def test_the_bot_is_its_service_account_and_not_the_admin(control_plane: ControlPlane) -> None:
    review = client.AuthenticationV1Api(control_plane.bot()).create_self_subject_review(
        client.V1SelfSubjectReview()
    )
    assert review.status is not None and review.status.user_info is not None
    assert review.status.user_info.username == BOT_USER
    assert "system:masters" not in (review.status.user_info.groups or [])
    assert control_plane.admin_token not in control_plane.bot_kubeconfig.read_text()


def test_the_controller_manager_collects_what_an_owner_leaves(control_plane: ControlPlane) -> None:
    # Owned objects go with their owner only through kube-controller-manager's garbage collector.
    core = client.CoreV1Api(control_plane.admin())
    owner = core.create_namespaced_config_map(
        "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="gc-owner"))
    )
    reference = client.V1OwnerReference(
        api_version="v1", kind="ConfigMap", name="gc-owner", uid=owner.metadata.uid
    )
    meta = client.V1ObjectMeta(name="gc-owned", owner_references=[reference])
    core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=meta))
    core.delete_namespaced_config_map("gc-owner", "default")

    def collected() -> bool | None:
        names = [c.metadata.name for c in core.list_namespaced_config_map("default").items]
        return True if "gc-owned" not in names else None

    assert poll("the owned ConfigMap collected", collected, 45)


# ------------------------------------------------------------------------------------- RBAC
def test_the_bots_token_makes_the_reads_the_bot_makes(seeded: ControlPlane) -> None:
    bot = seeded.bot()
    custom = client.CustomObjectsApi(bot)
    jobs: Any = custom.list_namespaced_custom_object("keda.sh", "v1alpha1", KEDA_NS, "scaledjobs")
    assert "train-llm" in [j["metadata"]["name"] for j in jobs["items"]]
    everywhere: Any = custom.list_cluster_custom_object("keda.sh", "v1alpha1", "scaledjobs")
    assert "train-llm" in [j["metadata"]["name"] for j in everywhere["items"]]
    config: Any = custom.get_cluster_custom_object("kai.scheduler", "v1", "configs", "kai-config")
    assert config["metadata"]["name"] == "kai-config"
    custom.list_cluster_custom_object("kai.scheduler", "v1", "schedulingshards")
    custom.list_cluster_custom_object("scheduling.run.ai", "v2", "queues")
    apiservice = client.ApiregistrationV1Api(bot).read_api_service(METRICS_APISERVICE)
    assert apiservice.spec is not None and apiservice.spec.service is not None
    assert apiservice.spec.service.name == "keda-operator-metrics-apiserver"


@pytest.mark.parametrize(
    ("attempt", "verb", "resource"),
    [
        (lambda bot: client.CoreV1Api(bot).list_secret_for_all_namespaces(), "list", "secrets"),
        (lambda bot: client.CoreV1Api(bot).delete_namespace(KEDA_NS), "delete", "namespaces"),
        (
            lambda bot: client.CustomObjectsApi(bot).create_namespaced_custom_object(
                "keda.sh", "v1alpha1", KEDA_NS, "scaledjobs", scaled_job("sneaky")
            ),
            "create",
            "scaledjobs",
        ),
    ],
    ids=["list-secrets-cluster-wide", "delete-a-namespace", "create-a-scaledjob"],
)
def test_rbac_refuses_what_deploy_does_not_grant(
    seeded: ControlPlane, attempt: Any, verb: str, resource: str
) -> None:
    with pytest.raises(ApiException) as refused:
        attempt(seeded.bot())
    status, message = refusal(refused.value)
    assert status == 403
    # The real server's words: the user, the verb and the resource it was refused.
    assert f'User "{BOT_USER}" cannot {verb} resource "{resource}"' in message, message


# -------------------------------------------------------------------------------- admission
def test_the_bot_may_pause_a_scaled_job(seeded: ControlPlane) -> None:
    patched: Any = client.CustomObjectsApi(seeded.bot()).patch_namespaced_custom_object(
        "keda.sh",
        "v1alpha1",
        KEDA_NS,
        "scaledjobs",
        "train-llm",
        {"metadata": {"annotations": {"autoscaling.keda.sh/paused": "true"}}},
    )
    assert patched["metadata"]["annotations"]["autoscaling.keda.sh/paused"] == "true"


@pytest.mark.parametrize(
    ("patch", "words"),
    [
        ({"spec": {"maxReplicaCount": 5000}}, "kai-chatops may not change spec.maxReplicaCount"),
        (
            {"metadata": {"annotations": {"example.com/owner": "someone-else"}}},
            "kai-chatops may not change metadata.annotations[example.com/owner]",
        ),
        ({"metadata": {"labels": {"team": "other"}}}, "kai-chatops may not change metadata.labels"),
    ],
    ids=["spec", "foreign-annotation", "labels"],
)
def test_the_owned_fields_policy_refuses_the_bots_other_writes(
    seeded: ControlPlane, patch: dict[str, Any], words: str
) -> None:
    with pytest.raises(ApiException) as refused:
        client.CustomObjectsApi(seeded.bot()).patch_namespaced_custom_object(
            "keda.sh", "v1alpha1", KEDA_NS, "scaledjobs", "train-llm", patch
        )
    status, message = refusal(refused.value)
    assert status == 403, message
    assert "ValidatingAdmissionPolicy 'kai-chatops-owned-fields'" in message, message
    assert words in message, message


def test_the_own_state_policy_refuses_a_configmap_rbac_lets_through(seeded: ControlPlane) -> None:
    # RBAC lets the bot create and patch any ConfigMap in its namespace (one per cluster
    # cannot be named); only the policy keeps it to its own state ConfigMaps, labelled ours.
    core = client.CoreV1Api(seeded.bot())
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_config_map(
            BOT_NAMESPACE,
            client.V1ConfigMap(metadata=client.V1ObjectMeta(name="not-the-state")),
        )
    status, message = refusal(refused.value)
    assert status == 403, message
    assert "ValidatingAdmissionPolicy 'kai-chatops-own-state'" in message, message
    assert "not kai-chatops/not-the-state" in message, message
    # An earlier test's service may have made it: start from none.
    state = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kai-chatops-state"}}
    Seeder(seeded.admin()).remove(
        {**state, "metadata": {**state["metadata"], "namespace": BOT_NAMESPACE}}
    )
    ours = {"app.kubernetes.io/managed-by": "kai-chatops"}  # as every ConfigMap it writes
    created = core.create_namespaced_config_map(
        BOT_NAMESPACE,
        client.V1ConfigMap(metadata=client.V1ObjectMeta(name="kai-chatops-state", labels=ours)),
    )
    assert created.metadata is not None and created.metadata.name == "kai-chatops-state"


# ------------------------------------------------------------------------------- aggregator
def test_metrics_apiservice_without_endpoints_is_unavailable(seeded: ControlPlane) -> None:
    if not seeded.controller_manager:
        pytest.skip("EndpointSlices come from kube-controller-manager, which is not running")
    api = client.ApiregistrationV1Api(seeded.bot())

    def unavailable() -> Any:
        got = api.read_api_service(METRICS_APISERVICE)
        for cond in (got.status.conditions if got.status else None) or []:
            if cond.type == "Available" and cond.reason == "MissingEndpoints":
                return cond
        return None

    cond = poll("APIService Available=False MissingEndpoints", unavailable, 45)
    assert cond.status == "False"
    assert "have no addresses" in cond.message
