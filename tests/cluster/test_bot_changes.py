"""Changes from Slack against a real kube-apiserver: KEDA pause and resume, Flux reconcile,
Argo CD refresh and sync — each written with the bot's own token, through deploy/'s RBAC and
ValidatingAdmissionPolicies, and answered by `testbed.apicontrollers` playing the controllers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from controlplane import ControlPlane
from seeding import Seeder

from testbed.stack import DEMO_CHANNEL, OPERATOR, Reply, ServiceStack

KEDA = "keda.sh/v1alpha1"
PAUSED = "autoscaling.keda.sh/paused"
HELMRELEASE = "helm.toolkit.fluxcd.io/v2"
REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
ARGO = "argoproj.io/v1alpha1"
REFRESH = "argocd.argoproj.io/refresh"


@pytest.fixture
def admin(control_plane: ControlPlane) -> Seeder:
    return Seeder(control_plane.admin())


def annotations(admin: Seeder, api: str, kind: str, name: str, namespace: str) -> dict[str, str]:
    obj = admin.read(api, kind, name, namespace)
    assert obj is not None
    return dict(obj["metadata"].get("annotations") or {})


async def click(stack: ServiceStack, reply: Reply, label: str = "Confirm") -> Mapping[str, Any]:
    assert reply.message is not None
    answer = await stack.click(label, reply.message)
    assert answer.message is not None
    return answer.message


async def final(stack: ServiceStack, reply: Reply) -> Mapping[str, Any]:
    """The message that replaced a "reconciling…" reply."""
    post = await stack.slack.wait_for_response(reply.delivery.hook_id, count=2, timeout=30)
    return post.body


async def test_a_confirmed_pause_is_admitted_and_written_then_resume_deletes_it(
    stack: ServiceStack, admin: Seeder
) -> None:
    reply = await stack.command("pause annia/annia-worker for 2h node drain")
    assert annotations(admin, KEDA, "ScaledJob", "annia-worker", "annia") == {}
    result = await click(stack, reply)
    assert "ScaledJob annia/annia-worker on sim is paused" in result["text"]
    assert "KEDA acknowledged it (its Paused condition is True)" in result["text"]
    written = annotations(admin, KEDA, "ScaledJob", "annia-worker", "annia")
    assert written[PAUSED] == "true"
    assert written["kai-chatops/paused-by"] == OPERATOR
    assert written["kai-chatops/pause-reason"] == "node drain"

    resumed = await click(stack, await stack.command("resume annia/annia-worker"))
    assert "resumed" in resumed["text"].lower()
    left = annotations(admin, KEDA, "ScaledJob", "annia-worker", "annia")
    assert PAUSED not in left and not any(k.startswith("kai-chatops/") for k in left)
    assert stack.slack.violations == []


async def test_a_pause_outside_the_configured_namespaces_touches_nothing(
    stack: ServiceStack, admin: Seeder
) -> None:
    reply = await stack.command("pause keda/keda-operator")
    assert reply.message is not None and reply.message["response_type"] == "ephemeral"
    assert "annia" in reply.text  # it names where pausing is allowed


async def test_a_flux_reconcile_is_handled_and_reported_ready(
    stack: ServiceStack, admin: Seeder
) -> None:
    reply = await stack.command("reconcile hr flux-system/kai-scheduler")
    assert reply.text.endswith("reconciling…")
    result = await final(stack, reply)
    lines = result["text"].splitlines()
    assert lines[0] == "Flux reconcile of HelmRelease flux-system/kai-scheduler on sim: reconciled"
    assert "Ready True (InstallSucceeded)" in lines[1]
    token = annotations(admin, HELMRELEASE, "HelmRelease", "kai-scheduler", "flux-system")[
        REQUESTED_AT
    ]
    status = admin.read(HELMRELEASE, "HelmRelease", "kai-scheduler", "flux-system")["status"]
    assert status["lastHandledReconcileAt"] == token
    assert f"requestedAt `{token}`" in json.dumps(result["blocks"])


async def test_a_suspend_then_resume_of_a_kustomization_flips_spec_suspend(
    stack: ServiceStack, admin: Seeder
) -> None:
    kustomization = ("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system")
    await click(stack, await stack.command("suspend ks flux-system/flux-system"))
    spec = admin.read(*kustomization, "flux-system")["spec"]
    assert spec["suspend"] is True

    reply = await stack.command("resume ks flux-system/flux-system")
    await click(stack, reply)
    spec = admin.read(*kustomization, "flux-system")["spec"]
    assert spec["suspend"] is False


async def test_an_argo_cd_refresh_is_removed_by_the_controller_and_reported(
    stack: ServiceStack, admin: Seeder
) -> None:
    reply = await stack.command("reconcile app argocd/kai-scheduler --hard")
    assert reply.text.endswith("refreshing…")
    result = await final(stack, reply)
    assert result["text"].splitlines()[0] == (
        "Argo CD hard refresh of Application argocd/kai-scheduler on sim: done"
    )
    assert REFRESH not in annotations(admin, ARGO, "Application", "kai-scheduler", "argocd")


async def test_a_confirmed_sync_writes_the_operation_and_reports_the_result(
    stack: ServiceStack, admin: Seeder
) -> None:
    reply = await stack.command("sync argocd/kai-scheduler")
    assert admin.read(ARGO, "Application", "kai-scheduler", "argocd").get("operation") is None
    result = await click(stack, reply)
    assert result["text"].splitlines()[0] == (
        "Argo CD sync of Application argocd/kai-scheduler on sim: Succeeded, revision v0.17.0"
    )
    app = admin.read(ARGO, "Application", "kai-scheduler", "argocd")
    assert app.get("operation") is None
    assert app["status"]["operationState"]["operation"]["initiatedBy"] == {
        "username": f"slack:{OPERATOR}"
    }
    started, record = await stack.slack.wait_for_messages(DEMO_CHANNEL, count=2)
    assert started.text.startswith(f"<@{OPERATOR}> started an Argo CD sync")
    assert record.text.startswith(f"<@{OPERATOR}> synced Argo CD Application")
