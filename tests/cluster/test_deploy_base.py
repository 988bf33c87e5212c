"""deploy/ on a real API server that has nothing else: no CRDs, none of the demo's namespaces.

The base names no namespace of your workloads, so it applies on a cluster with only what KAI
Scheduler's and KEDA's installs create (`kai-scheduler`, `keda`); a team's overlay with two KEDA
namespaces gives the bot pause and resume in both and nowhere else, as the server decides it
(SubjectAccessReview). Its own control plane (etcd and kube-apiserver only, a few seconds), since
the session's has deploy/'s example overlay, and so `annia`, applied.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import cluster_build as build
import pytest
from controlplane import BOT_NAMESPACE, BOT_SERVICE_ACCOUNT, ControlPlane
from deploy_render import DEPLOY, keda_rbac, team_overlay

# What KAI Scheduler's and KEDA's own installs create: the base reads there.
PRODUCT_NAMESPACES = ("kai-scheduler", "keda")
BOT_USER = f"system:serviceaccount:{BOT_NAMESPACE}:{BOT_SERVICE_ACCOUNT}"


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    if build.missing() and shutil.which("go") is None:
        pytest.skip("Go is not installed: the cluster tier builds kube-apiserver and etcd with it")
    plane = ControlPlane(
        bin_dir=build.build(),
        crd_dir=build.cache_dir() / "crds",
        run_dir=tmp_path_factory.mktemp("bare-control-plane"),
        controller_manager=False,
        bare=True,
    )
    with plane:
        for namespace in PRODUCT_NAMESPACES:
            plane.ensure_namespace(namespace)
        yield plane


def namespaces(plane: ControlPlane) -> set[str]:
    from kubernetes import client

    return {ns.metadata.name for ns in client.CoreV1Api(plane.admin()).list_namespace().items}


def apply_in_order(plane: ControlPlane, directory: Path) -> list[tuple[str, str | None, str]]:
    """Apply as `kubectl apply -k` does (namespaces first), creating no namespace it names:
    one it needs and the cluster lacks fails the apply with the server's 404."""
    objects = plane.render(directory)
    for obj in sorted(objects, key=lambda o: o["kind"] != "Namespace"):
        plane.apply(obj)
    return [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects]


def test_the_base_applies_to_a_cluster_without_the_demos_namespace(bare: ControlPlane) -> None:
    applied = apply_in_order(bare, DEPLOY / "base")
    assert ("Deployment", BOT_NAMESPACE, "kai-chatops") in applied
    assert ("ValidatingAdmissionPolicy", None, "kai-chatops-owned-fields") in applied
    assert "annia" not in namespaces(bare)


def may(plane: ControlPlane, verb: str, resource: str, namespace: str) -> bool:
    from kubernetes import client

    review = client.V1SubjectAccessReview(
        spec=client.V1SubjectAccessReviewSpec(
            user=BOT_USER,
            groups=["system:serviceaccounts", f"system:serviceaccounts:{BOT_NAMESPACE}"],
            resource_attributes=client.V1ResourceAttributes(
                group="keda.sh", resource=resource, verb=verb, namespace=namespace
            ),
        )
    )
    done = client.AuthorizationV1Api(plane.admin()).create_subject_access_review(review)
    return bool(done.status.allowed)


def test_an_overlay_for_two_keda_namespaces_lets_the_bot_pause_in_both_and_nowhere_else(
    bare: ControlPlane, tmp_path: Path
) -> None:
    overlay = team_overlay(tmp_path / "our-team", ["gpu-a", "gpu-b"])
    assert keda_rbac.main([str(overlay)]) == 0
    # Flux's own namespace (the overlay is flux-only's) and the team's, there before the bot.
    for namespace in ("flux-system", "gpu-a", "gpu-b"):
        bare.ensure_namespace(namespace)
    apply_in_order(bare, overlay)
    for namespace in ("gpu-a", "gpu-b"):
        assert may(bare, "patch", "scaledjobs", namespace)
        assert may(bare, "watch", "scaledobjects", namespace)
        assert not may(bare, "delete", "scaledjobs", namespace)
    assert not may(bare, "patch", "scaledjobs", "annia")
    assert not may(bare, "patch", "scaledjobs", "default")
