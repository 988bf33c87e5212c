"""Issue 23, upstream exactness, end to end: the Argo CD refresh timestamp, sync windows, Flux
failures reported at once, the OCI HelmRepository.

The simulator's Argo CD controller removes `refresh` with its `refresh-timestamp` as argo-cd
controller/appcontroller.go does; its Flux controller fails, retries or stalls on request.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from gitops_e2e import (
    APP_API,
    annotate_app,
    app_of,
    click_confirm,
    controlled_stack,
    result_of,
)
from stack_steps import patches
from waiting import wait_until

from testbed.stack import Stack, running_stack

REFRESH = "argocd.argoproj.io/refresh"
REFRESH_TIMESTAMP = "argocd.argoproj.io/refresh-timestamp"
# Go's time.RFC3339Nano in UTC: trailing zeros of the fraction dropped, no fraction when zero
GO_RFC3339_NANO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z")


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    async with controlled_stack(tmp_path) as running:
        yield running


async def test_a_refresh_writes_the_timestamp_with_the_annotation_and_both_are_removed(
    stack: Stack,
) -> None:
    stack.sim.clear_requests()

    result = await result_of(stack, await stack.command("reconcile app argocd/kai-scheduler"))

    assert result["text"].startswith(
        "Argo CD refresh of Application argocd/kai-scheduler on sim: done"
    )
    [patch] = patches(stack)
    written = patch.body["metadata"]["annotations"]
    assert written[REFRESH] == "normal"
    assert GO_RFC3339_NANO.fullmatch(written[REFRESH_TIMESTAMP])
    left = app_of(stack)["metadata"]["annotations"]
    assert REFRESH not in left and REFRESH_TIMESTAMP not in left


async def test_a_refresh_made_while_another_pass_runs_is_answered_by_a_pass_of_its_own(
    stack: Stack,
) -> None:
    """Without the timestamp the running pass would remove our request, and the reply would
    report the Application as that earlier pass left it."""
    controllers = stack.sim.controllers
    assert controllers is not None
    annotate_app(stack, **{"sim.kai-chatops/reconcile": "slow:0.5s"})
    annotate_app(stack, **{REFRESH: "normal", REFRESH_TIMESTAMP: "2026-12-02T00:59:00Z"})
    await wait_until(
        lambda: controllers.is_refreshing("argocd", "kai-scheduler"), 5, "a pass running"
    )
    stack.sim.clear_requests()

    result = await result_of(stack, await stack.command("reconcile app argocd/kai-scheduler"))

    assert ": done" in result["text"].splitlines()[0]
    ours = patches(stack)[0].body["metadata"]["annotations"][REFRESH_TIMESTAMP]
    served = [stamp for _, name, stamp in controllers.refreshed if name == "kai-scheduler"]
    assert served == ["2026-12-02T00:59:00Z", ours]


def set_windows(stack: Stack, *windows: dict[str, object]) -> None:
    patch = {"spec": {"syncWindows": list(windows)}}
    stack.sim.patch(APP_API, "AppProject", "default", "argocd", patch=patch)


FREEZE = {
    "kind": "deny",
    "schedule": "* * * * *",
    "duration": "1h",
    "applications": ["kai-*"],
    "description": "GPU driver rollout freeze",
}


async def test_a_sync_a_deny_window_forbids_is_refused_before_anything_is_written(
    stack: Stack,
) -> None:
    set_windows(stack, FREEZE)
    stack.sim.clear_requests()

    reply = await stack.command("sync argocd/kai-scheduler")

    assert "cannot sync: blocked by sync window" in reply.text
    assert 'deny "* * * * *" for 1h: GPU driver rollout freeze' in reply.text
    assert "Confirm" not in str(reply.message)
    assert patches(stack) == []
    assert "operation" not in app_of(stack)


async def test_a_window_that_closed_after_the_confirmation_refuses_the_click(stack: Stack) -> None:
    reply = await stack.command("sync argocd/kai-scheduler")
    set_windows(stack, FREEZE)
    stack.sim.clear_requests()

    result = await click_confirm(stack, reply)

    assert "cannot sync: blocked by sync window" in result["text"]
    assert patches(stack) == []
    assert "operation" not in app_of(stack)


async def test_a_deny_window_with_manual_sync_lets_the_sync_run(stack: Stack) -> None:
    set_windows(stack, {**FREEZE, "manualSync": True})

    result = await click_confirm(stack, await stack.command("sync argocd/kai-scheduler"))

    assert result["text"].startswith("Argo CD sync of Application argocd/kai-scheduler on sim: ")
    assert "blocked" not in result["text"].splitlines()[0]


async def test_allow_windows_none_of_them_open_refuse_the_sync_naming_them(tmp_path: Path) -> None:
    noon = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    async with running_stack(tmp_path, clock=lambda: noon) as stack:
        night = {"kind": "allow", "schedule": "0 22 * * *", "duration": "2h", "namespaces": ["*"]}
        set_windows(stack, night)

        reply = await stack.command("sync argocd/kai-scheduler")

        assert 'cannot sync: blocked by sync window (allow "0 22 * * *" for 2h)' in reply.text


async def test_an_oci_helm_repository_is_listed_healthy_static_and_not_reconciled_on_demand(
    stack: Stack,
) -> None:
    listed = await stack.command("list helmrepo")
    stack.sim.clear_requests()
    refused = await stack.command("reconcile helmrepo flux-system/kai")

    assert "flux-system/kai: Healthy — static: Flux does not reconcile" in listed.text
    assert "cannot be reconciled on demand" in refused.text
    assert patches(stack) == []
