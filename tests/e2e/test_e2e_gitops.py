"""Flux reconcile and Argo CD refresh and sync end to end: Slack emulator in, simulator out.

The simulator runs its Flux and Argo CD controllers (`testbed.sim.controllers`); an object's
`sim.kai-chatops/reconcile` (or `/sync`) annotation makes them fail, take their time, or never
answer. A reconcile's reply is one message: "reconciling…", then replaced by the result.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from gitops_e2e import result_of
from stack_steps import patches

from bot.slack import blocks as render
from testbed.stack import DEMO_CHANNEL, OPERATOR, VIEWER, Reply, Stack, running_stack

HR_API = "helm.toolkit.fluxcd.io/v2"
SRC_API = "source.toolkit.fluxcd.io/v1"
APP_API = "argoproj.io/v1alpha1"
REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
BEHAVIOUR = "sim.kai-chatops/reconcile"
SHORTCUTS = {
    "kai": {"kind": "helmrelease", "name": "flux-system/kai-scheduler"},
    "keda": {"kind": "hr", "name": "flux-system/keda"},
}


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    async with running_stack(tmp_path, config_overrides={"gitops": SHORTCUTS}) as running:
        running.sim.start_controllers()
        yield running


def annotate(stack: Stack, api: str, kind: str, name: str, namespace: str, **values: str) -> None:
    stack.sim.patch(api, kind, name, namespace, patch={"metadata": {"annotations": values}})


def behave(stack: Stack, kind: str, name: str, behaviour: str, api: str = HR_API) -> None:
    annotate(stack, api, kind, name, "flux-system", **{BEHAVIOUR: behaviour})


def annotations(stack: Stack, api: str, kind: str, name: str, namespace: str) -> dict[str, str]:
    obj = stack.sim.get(api, kind, name, namespace)
    assert obj is not None
    return dict(obj["metadata"].get("annotations") or {})


async def test_a_reconcile_is_one_message_saying_reconciling_then_ready_and_the_revision(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    annotate(stack, HR_API, "HelmRelease", "kai-scheduler", "flux-system", team="platform")
    stack.sim.clear_requests()

    reply = await stack.command("reconcile hr flux-system/kai-scheduler")

    assert reply.delivery.latency < 1.0 and reply.message is not None
    assert reply.message["response_type"] == "in_channel"
    assert (
        reply.text == "Flux reconcile of HelmRelease flux-system/kai-scheduler on sim: reconciling…"
    )
    result = await result_of(stack, reply)
    assert result["replace_original"] is True and "response_type" not in result
    assert result["text"].splitlines() == [
        "Flux reconcile of HelmRelease flux-system/kai-scheduler on sim: reconciled",
        "- HelmRelease flux-system/kai-scheduler: Ready True (InstallSucceeded), "
        "revision kai-scheduler@v0.17.0",
        "    Helm install succeeded for release kai-scheduler/kai-scheduler.v1 "
        "with chart kai-scheduler@v0.17.0",
    ]
    assert len(stack.slack.responses(reply.delivery.hook_id)) == 2
    assert len(stack.slack.messages(DEMO_CHANNEL)) == 1  # not a stream of messages
    token = annotations(stack, HR_API, "HelmRelease", "kai-scheduler", "flux-system")[REQUESTED_AT]
    assert f"requestedAt `{token}`" in json.dumps(result["blocks"])
    [patch] = patches(stack)
    assert patch.content_type.startswith("application/merge-patch+json")
    assert patch.body == {
        "metadata": {
            "annotations": {
                REQUESTED_AT: token,
                "kai-chatops/requested-by": f"slack:{OPERATOR}",
                "kai-chatops/requested-at": token,
            }
        }
    }
    assert annotations(stack, HR_API, "HelmRelease", "kai-scheduler", "flux-system")["team"] == (
        "platform"
    )
    logged = [json.loads(r.getMessage()) for r in caplog.records if r.name == "kai_chatops.audit"]
    # One audit line per action (docs/design.md §2), at its end.
    assert [(r["outcome"], r["note"], r["details"].get("requestedAt")) for r in logged] == [
        ("ok", "succeeded", token),
    ]
    assert stack.slack.violations == []


async def test_a_failed_reconcile_shows_the_controllers_message(stack: Stack) -> None:
    message = "Helm upgrade failed for release keda/keda with chart keda@2.20.2: timed out"
    behave(stack, "HelmRelease", "keda", f"fail:{message}")

    result = await result_of(stack, await stack.command("reconcile helmrelease flux-system/keda"))

    assert result["text"].startswith(
        "Flux reconcile of HelmRelease flux-system/keda on sim: failed"
    )
    assert "Ready False (UpgradeFailed)" in result["text"]
    assert f"```{message}```" in json.dumps(result["blocks"])
    assert ":red_circle:" in json.dumps(result["blocks"])


async def test_a_reconcile_flux_never_answers_times_out_saying_what_the_object_says(
    tmp_path: Path,
) -> None:
    overrides = {"gitops": {"reconcile_timeout": "1s"}}
    async with running_stack(tmp_path, config_overrides=overrides) as stack:
        stack.sim.start_controllers()
        behave(stack, "HelmRelease", "keda", "never")
        started = time.monotonic()

        result = await result_of(stack, await stack.command("reconcile hr flux-system/keda"))

        assert 1.0 <= time.monotonic() - started < 3.0
        text = result["text"]
        assert text.startswith("Flux reconcile of HelmRelease flux-system/keda on sim: no result")
        assert "no result within 1s: Flux has not handled the request" in text
        assert "lastHandledReconcileAt: 2026-08-24T07:55:12.482913Z" in text
        assert "It says now: Healthy, Ready is True (UpgradeSucceeded)" in text


async def test_a_suspended_object_is_refused_with_who_can_resume_it_and_nothing_is_patched(
    stack: Stack,
) -> None:
    stack.sim.patch(HR_API, "HelmRelease", "keda", "flux-system", patch={"spec": {"suspend": True}})
    stack.sim.clear_requests()

    reply = await stack.command("reconcile hr flux-system/keda")

    assert reply.message is not None and reply.message["response_type"] == "ephemeral"
    assert "HelmRelease flux-system/keda on sim is suspended" in reply.text
    assert "To resume it: `/kai resume hr flux-system/keda`" in reply.text
    assert patches(stack) == []
    assert len(stack.slack.responses(reply.delivery.hook_id)) == 1


async def test_with_source_reconciles_the_repository_then_the_chart_then_the_release(
    stack: Stack,
) -> None:
    stack.sim.clear_requests()

    result = await result_of(
        stack, await stack.command("reconcile hr flux-system/keda --with-source")
    )

    assert [r.path.rsplit("/", 2)[-2:] for r in patches(stack)] == [
        ["helmrepositories", "kedacore"],
        ["helmcharts", "flux-system-keda"],
        ["helmreleases", "keda"],
    ]
    steps = [line for line in result["text"].splitlines() if line.startswith("- ")]
    assert [s.split(":")[0] for s in steps] == [
        "- HelmRepository flux-system/kedacore",
        "- HelmChart flux-system/flux-system-keda",
        "- HelmRelease flux-system/keda",
    ]
    assert all("Ready True" in s for s in steps)


async def test_with_source_passes_over_an_oci_repository_and_says_so(stack: Stack) -> None:
    stack.sim.clear_requests()

    result = await result_of(stack, await stack.command("reconcile kai --with-source"))

    assert [r.path.rsplit("/", 1)[-1] for r in patches(stack)] == [
        "flux-system-kai-scheduler",
        "kai-scheduler",
    ]
    assert "- HelmRepository flux-system/kai: is a HelmRepository of type oci" in result["text"]
    assert result["text"].splitlines()[0].endswith(": reconciled")


async def test_a_failed_source_stops_the_chain_before_the_release(stack: Stack) -> None:
    behave(stack, "HelmRepository", "kedacore", "fail", api=SRC_API)
    stack.sim.clear_requests()

    result = await result_of(
        stack, await stack.command("reconcile hr flux-system/keda --with-source")
    )

    assert [r.path.rsplit("/", 1)[-1] for r in patches(stack)] == ["kedacore"]
    assert (
        result["text"].splitlines()[0].endswith(": failed; Flux tries again at its next interval")
    )
    assert "- HelmRelease flux-system/keda: not requested" in result["text"]


async def test_an_oci_helm_repository_is_refused_as_not_reconcilable_on_demand(
    stack: Stack,
) -> None:
    stack.sim.clear_requests()

    reply = await stack.command("reconcile helmrepo flux-system/kai")

    assert "cannot be reconciled on demand" in reply.text
    assert reply.message is not None and reply.message["response_type"] == "ephemeral"
    assert patches(stack) == []


@pytest.mark.parametrize(("flag", "value"), [("", "normal"), (" --hard", "hard")])
async def test_an_argo_cd_refresh_waits_for_the_controller_and_reports_sync_and_health(
    stack: Stack, flag: str, value: str
) -> None:
    stack.sim.clear_requests()

    reply = await stack.command(f"reconcile app argocd/kai-scheduler{flag}")

    action = "hard refresh" if flag else "refresh"
    assert reply.text.endswith("refreshing…")
    result = await result_of(stack, reply)
    assert result["text"].splitlines()[:2] == [
        f"Argo CD {action} of Application argocd/kai-scheduler on sim: done",
        "Now: sync Synced, health Healthy, revision v0.17.0",
    ]
    [patch] = patches(stack)
    assert patch.body["metadata"]["annotations"]["argocd.argoproj.io/refresh"] == value
    assert "argocd.argoproj.io/refresh" not in annotations(
        stack, APP_API, "Application", "kai-scheduler", "argocd"
    )


async def click_confirm(stack: Stack, reply: Reply, user: str = OPERATOR) -> Mapping[str, Any]:
    assert reply.message is not None
    delivery = await stack.driver.click_button(
        render.CONFIRM_ACTION, user_id=user, channel_id=DEMO_CHANNEL, message=reply.message
    )
    post = await stack.slack.wait_for_response(delivery.hook_id, timeout=15)
    return post.body


async def test_a_confirmed_sync_writes_the_operation_as_the_slack_user_and_reports_it(
    stack: Stack,
) -> None:
    stack.sim.clear_requests()
    reply = await stack.command("sync argocd/kai-scheduler")

    assert "Sync Application argocd/kai-scheduler on sim?" in json.dumps(reply.message)
    assert patches(stack) == []
    result = await click_confirm(stack, reply)

    assert result["text"].splitlines()[:2] == [
        "Argo CD sync of Application argocd/kai-scheduler on sim: Succeeded, revision v0.17.0",
        "Now: sync Synced, health Healthy, revision v0.17.0",
    ]
    assert "successfully synced (all tasks run)" in result["text"]
    [patch] = patches(stack)
    assert patch.body["operation"]["initiatedBy"] == {"username": f"slack:{OPERATOR}"}
    assert patch.body["metadata"]["resourceVersion"]
    app = stack.sim.get(APP_API, "Application", "kai-scheduler", "argocd")
    assert app is not None and "operation" not in app
    started, record = await stack.slack.wait_for_messages(DEMO_CHANNEL, count=2)
    assert started.text.startswith(f"<@{OPERATOR}> started an Argo CD sync of Application")
    assert record.text == (
        f"<@{OPERATOR}> synced Argo CD Application argocd/kai-scheduler on sim: "
        "Succeeded, revision v0.17.0"
    )


@pytest.mark.parametrize(
    ("patch", "refusal"),
    [
        ({"status": {"operationState": {"phase": "Running"}}}, "has an operation Running"),
        (
            {
                "operation": {"initiatedBy": {"username": "admin"}, "sync": {}},
                "metadata": {"annotations": {"sim.kai-chatops/sync": "never"}},
            },
            "already has an operation in progress (started by admin)",
        ),
    ],
    ids=["operation-running", "operation-set"],
)
async def test_a_sync_is_refused_while_an_operation_runs(
    stack: Stack, patch: dict[str, Any], refusal: str
) -> None:
    stack.sim.patch(APP_API, "Application", "kai-scheduler", "argocd", patch=patch)
    stack.sim.clear_requests()

    reply = await stack.command("sync argocd/kai-scheduler")

    assert refusal in reply.text and "nothing was changed" in reply.text
    assert patches(stack) == []


async def test_a_sync_that_became_busy_before_the_click_is_refused_at_the_click(
    stack: Stack,
) -> None:
    reply = await stack.command("sync argocd/kai-scheduler")
    busy = {"status": {"operationState": {"phase": "Running", "message": "waiting for hooks"}}}
    stack.sim.patch(APP_API, "Application", "kai-scheduler", "argocd", patch=busy)
    stack.sim.clear_requests()

    result = await click_confirm(stack, reply)

    assert "has an operation Running (waiting for hooks)" in result["text"]
    assert patches(stack) == []


@pytest.mark.parametrize(
    "text", ["reconcile hr flux-system/keda", "reconcile keda", "sync argocd/kai-scheduler"]
)
async def test_a_viewer_is_refused_before_any_cluster_call(stack: Stack, text: str) -> None:
    stack.sim.clear_requests()

    reply = await stack.command(text, user_id=VIEWER)

    assert reply.text.startswith("You are not allowed to ")
    assert reply.message is not None and reply.message["response_type"] == "ephemeral"
    assert stack.sim.requests == []


async def test_two_reconciles_of_different_objects_run_side_by_side(stack: Stack) -> None:
    behave(stack, "HelmRelease", "keda", "slow:800ms")
    behave(stack, "HelmRelease", "kai-scheduler", "slow:800ms")
    started = time.monotonic()

    replies = await asyncio.gather(
        stack.command("reconcile hr flux-system/keda"),
        stack.command("reconcile hr flux-system/kai-scheduler"),
    )
    results = await asyncio.gather(*(result_of(stack, reply) for reply in replies))

    assert time.monotonic() - started < 1.5  # one after the other would take 1.6 s at least
    assert [r["text"].splitlines()[0] for r in results] == [
        "Flux reconcile of HelmRelease flux-system/keda on sim: reconciled",
        "Flux reconcile of HelmRelease flux-system/kai-scheduler on sim: reconciled",
    ]


async def test_a_second_request_for_the_same_object_while_one_runs_is_refused(
    stack: Stack,
) -> None:
    behave(stack, "HelmRelease", "keda", "slow:300ms")
    first = await stack.command("reconcile hr flux-system/keda")

    second = await stack.command("reconcile keda")

    assert second.message is not None and second.message["response_type"] == "ephemeral"
    assert "already has a reconcile, refresh or sync under way" in second.text
    assert f"(asked by <@{OPERATOR}>)" in second.text
    assert (await result_of(stack, first))["text"].splitlines()[0].endswith(": reconciled")
    third = await stack.command("reconcile keda")
    assert third.text.endswith("reconciling…")
    await result_of(stack, third)


async def test_an_unconfigured_shortcut_says_how_to_configure_it(tmp_path: Path) -> None:
    async with running_stack(tmp_path, config_overrides={"gitops": {}}) as stack:
        reply = await stack.command("reconcile kai")

    assert "`reconcile kai` is not configured: set gitops.kai in the configuration" in reply.text


async def test_an_application_shortcut_takes_a_hard_refresh(tmp_path: Path) -> None:
    shortcut = {"kai": {"kind": "app", "name": "argocd/kai-scheduler"}}
    async with running_stack(tmp_path, config_overrides={"gitops": shortcut}) as stack:
        stack.sim.start_controllers()
        result = await result_of(stack, await stack.command("reconcile kai --hard"))

    assert result["text"].startswith(
        "Argo CD hard refresh of Application argocd/kai-scheduler on sim: done"
    )


async def test_a_missing_object_is_named_and_nothing_is_patched(stack: Stack) -> None:
    stack.sim.clear_requests()

    reply = await stack.command("reconcile ks flux-system/nowhere")

    assert reply.text == "Kustomization flux-system/nowhere was not found on sim."
    assert patches(stack) == []


async def test_a_reconcile_over_socket_mode_is_answered_in_place_too(tmp_path: Path) -> None:
    async with running_stack(tmp_path, socket_mode=True) as stack:
        stack.sim.start_controllers()
        reply = await stack.command("reconcile hr flux-system/keda")
        result = await result_of(stack, reply)

    assert reply.delivery.mode == "socket" and reply.text.endswith("reconciling…")
    assert result["text"].splitlines()[0].endswith(": reconciled")


async def test_a_patch_the_cluster_forbids_replaces_the_progress_reply_with_the_reason(
    stack: Stack,
) -> None:
    stack.sim.faults.add(403, verb="patch", resource="helmreleases")

    reply = await stack.command("reconcile hr flux-system/keda")
    result = await result_of(stack, reply)

    assert result["replace_original"] is True
    assert "patch" in result["text"] and "helmreleases" in result["text"]
    assert "reconciling" not in result["text"]


async def test_a_conflicting_write_is_retried_with_a_fresh_token(stack: Stack) -> None:
    stack.sim.faults.add(409, verb="patch", resource="helmreleases")
    stack.sim.clear_requests()

    result = await result_of(stack, await stack.command("reconcile hr flux-system/keda"))

    assert [r.status for r in patches(stack)] == [409, 200]
    assert result["text"].splitlines()[0].endswith(": reconciled")
