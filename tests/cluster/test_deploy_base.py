"""deploy/ on a real API server that has nothing else: no CRDs, none of the demo's namespaces.

The base names no namespace of your workloads, so it applies on a cluster with only what KAI
Scheduler's and KEDA's installs create (`kai-scheduler`, `keda`); a team's overlay with two KEDA
namespaces gives the bot pause and resume in both and nowhere else, as the server decides it
(SubjectAccessReview). Its own control plane (`bare` in conftest.py: etcd and kube-apiserver only,
a few seconds), since the session's has deploy/'s example overlay, and so `annia`, applied.
"""

from __future__ import annotations

from pathlib import Path

from controlplane import BOT_NAMESPACE, ControlPlane
from deploy_render import DEPLOY, keda_rbac, team_overlay


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
    return plane.bot_may(verb, "keda.sh", resource, namespace)


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
