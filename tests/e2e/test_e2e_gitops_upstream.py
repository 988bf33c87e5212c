"""Flux and Argo CD end to end, where the bot must do exactly what `flux` and `argocd` do.

Issue 12 A1-A4: a sync carries the Application's sync options and retry and a sync window's hold
is said; a Flux failure is reported at once, saying whether Flux retries; the reconcile wait
ends when `lastHandledReconcileAt` changes; `--force` / `--reset`; a reconcile ending with Ready
Unknown.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from gitops_e2e import click_confirm, controlled_stack, result_of
from stack_steps import patches
from waiting import wait_until

from testbed.sim.faults import RecordedRequest
from testbed.stack import DEMO_CHANNEL, OPERATOR, Reply, Stack, running_stack

HR_API = "helm.toolkit.fluxcd.io/v2"
APP_API = "argoproj.io/v1alpha1"
REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    async with controlled_stack(tmp_path) as running:
        yield running


async def first_patch(stack: Stack) -> RecordedRequest:
    """The bot's request patch, once it has been made (polled with a deadline)."""
    return (await wait_until(lambda: patches(stack), 5, "the bot's request"))[0]


async def reconcile_unanswered(stack: Stack) -> tuple[Reply, str]:
    """`reconcile hr flux-system/keda` with the simulated Flux told never to answer: the reply
    (still "reconciling…") and the token the bot wrote, once it has written it."""
    never = {"metadata": {"annotations": {"sim.kai-chatops/reconcile": "never"}}}
    stack.sim.patch(HR_API, "HelmRelease", "keda", "flux-system", patch=never)
    stack.sim.clear_requests()
    reply = await stack.command("reconcile hr flux-system/keda")
    token = (await first_patch(stack)).body["metadata"]["annotations"][REQUESTED_AT]
    return reply, token


def kai_app(stack: Stack) -> dict[str, Any]:
    app = stack.sim.get(APP_API, "Application", "kai-scheduler", "argocd")
    assert app is not None
    return app


async def test_e2e_argo_sync_carries_sync_options_and_retry(stack: Stack) -> None:
    # The seed app asks for CreateNamespace=true, ServerSideApply=true and retry.limit 3; point it
    # at a namespace that does not exist yet, so only a sync that carries the options succeeds.
    destination = {"server": "https://kubernetes.default.svc", "namespace": "kai-fresh"}
    stack.sim.patch(
        APP_API,
        "Application",
        "kai-scheduler",
        "argocd",
        patch={"spec": {"destination": destination}},
    )
    stack.sim.clear_requests()

    reply = await stack.command("sync argocd/kai-scheduler")
    asked = json.dumps(reply.message)
    assert "CreateNamespace=true, ServerSideApply=true" in asked and "up to 3" in asked
    result = await click_confirm(stack, reply)

    assert result["text"].startswith(
        "Argo CD sync of Application argocd/kai-scheduler on sim: Succeeded"
    )
    [patch] = patches(stack)
    assert patch.body["operation"]["sync"]["syncOptions"] == [
        "CreateNamespace=true",
        "ServerSideApply=true",
    ]
    assert patch.body["operation"]["retry"] == {"limit": 3, "backoff": {"duration": "10s"}}
    state = kai_app(stack)["status"]["operationState"]
    assert (
        state["operation"]["sync"]["syncOptions"] == patch.body["operation"]["sync"]["syncOptions"]
    )
    assert stack.sim.get("v1", "Namespace", "kai-fresh") is not None


async def test_e2e_argo_sync_held_by_a_sync_window_is_reported_blocked(stack: Stack) -> None:
    stack.sim.patch(
        APP_API,
        "Application",
        "kai-scheduler",
        "argocd",
        patch={"metadata": {"annotations": {"sim.kai-chatops/sync": "blocked"}}},
    )

    result = await click_confirm(stack, await stack.command("sync argocd/kai-scheduler"))

    text = result["text"]
    assert text.startswith(
        "Argo CD sync of Application argocd/kai-scheduler on sim: blocked by a sync window"
    )
    assert "Sync operation blocked by sync window" in text
    assert "no result within" not in text
    record = (await stack.slack.wait_for_messages(DEMO_CHANNEL, count=2))[1]
    assert "blocked by a sync window" in record.text
    assert kai_app(stack)["operation"]  # Argo CD keeps it, to run when the window opens


@pytest.mark.parametrize(
    ("behaviour", "head"),
    [
        ("retry", "failed; Flux retries"),
        ("stall", "failed; Flux will not retry until the object changes"),
        ("fail", "failed; Flux tries again at its next interval"),
    ],
    ids=["retrying", "stalled", "failed"],
)
async def test_e2e_flux_failure_is_reported_at_once_saying_whether_flux_retries(
    tmp_path: Path, behaviour: str, head: str
) -> None:
    """docs/design.md §2 "Flux reconcile": not at the timeout (an hour here), at once."""
    overrides = {"gitops": {"reconcile_timeout": "25m"}}
    async with running_stack(tmp_path, config_overrides=overrides) as stack:
        stack.sim.start_controllers()
        said = f"{behaviour}:Helm rollback to previous release keda/keda.v3 succeeded"
        annotations = {"sim.kai-chatops/reconcile": said}
        stack.sim.patch(
            HR_API,
            "HelmRelease",
            "keda",
            "flux-system",
            patch={"metadata": {"annotations": annotations}},
        )

        result = await result_of(stack, await stack.command("reconcile hr flux-system/keda"))

        lines = result["text"].splitlines()
        assert lines[0] == f"Flux reconcile of HelmRelease flux-system/keda on sim: {head}"
        assert lines[1].startswith("- HelmRelease flux-system/keda: Ready False (UpgradeFailed)")
        assert "Helm rollback to previous release keda/keda.v3 succeeded" in result["text"]
        assert "no result within" not in result["text"]


async def test_e2e_reconcile_wait_done_when_last_handled_changes(stack: Stack) -> None:
    """Someone else's newer request, handled by Flux, answers ours too (as `flux reconcile`)."""
    reply, ours = await reconcile_unanswered(stack)

    newer = "2099-01-01T00:00:00.1Z"
    stack.sim.patch(
        HR_API,
        "HelmRelease",
        "keda",
        "flux-system",
        patch={"metadata": {"annotations": {REQUESTED_AT: newer}}},
    )
    stack.sim.patch_status(
        HR_API, "HelmRelease", "keda", "flux-system", {"lastHandledReconcileAt": newer}
    )
    result = await result_of(stack, reply)

    assert ours != newer
    assert result["text"].startswith(
        "Flux reconcile of HelmRelease flux-system/keda on sim: reconciled"
    )


async def test_e2e_reconcile_force_reset_write_the_same_token(stack: Stack) -> None:
    stack.sim.clear_requests()

    reply = await stack.command("reconcile hr flux-system/kai-scheduler --force --reset")
    result = await result_of(stack, reply)

    # What was asked for shows in the progress reply, the result and the Home tab's changes.
    what = "reconcile --force --reset of HelmRelease flux-system/kai-scheduler on sim"
    assert reply.text.startswith(f"Flux {what}: reconciling…")
    assert "one-off Helm install or upgrade" in json.dumps(reply.message)
    assert result["text"].splitlines()[0] == f"Flux {what}: reconciled"
    assert (await stack.driver.open_home(user_id=OPERATOR)).status == 200
    home = json.dumps(await stack.slack.wait_for_home(OPERATOR))
    assert "reconcile --force --reset HelmRelease flux-system/kai-scheduler on sim" in home
    [patch] = patches(stack)
    annotations = patch.body["metadata"]["annotations"]
    token = annotations[REQUESTED_AT]
    assert annotations["reconcile.fluxcd.io/forceAt"] == token
    assert annotations["reconcile.fluxcd.io/resetAt"] == token
    release = stack.sim.get(HR_API, "HelmRelease", "kai-scheduler", "flux-system")
    assert release is not None
    assert release["status"]["lastHandledForceAt"] == token
    assert release["status"]["lastHandledResetAt"] == token


async def test_e2e_reconcile_force_on_a_kustomization_is_refused_with_usage(stack: Stack) -> None:
    stack.sim.clear_requests()

    reply = await stack.command("reconcile ks flux-system/flux-system --force")

    assert "--force is only for helmrelease" in reply.text
    assert patches(stack) == []


async def test_e2e_reconcile_ending_with_ready_unknown_is_reported_as_flux_reports_it(
    stack: Stack,
) -> None:
    reply, token = await reconcile_unanswered(stack)

    stack.sim.set_condition(
        HR_API,
        "HelmRelease",
        "keda",
        "flux-system",
        "Ready",
        "Unknown",
        "DependencyNotReady",
        "dependency 'flux-system/kai-scheduler' is not ready",
    )
    stack.sim.patch_status(
        HR_API, "HelmRelease", "keda", "flux-system", {"lastHandledReconcileAt": token}
    )
    result = await result_of(stack, reply)

    lines = result["text"].splitlines()
    assert lines[0] == "Flux reconcile of HelmRelease flux-system/keda on sim: failed"
    assert "Ready Unknown (DependencyNotReady)" in lines[1]
    assert "dependency 'flux-system/kai-scheduler' is not ready" in result["text"]
