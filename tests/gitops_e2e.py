"""Helpers for the GitOps end-to-end tests: the in-place result, a Confirm click, and an
OCIRepository to act on."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bot.slack import blocks as render
from testbed.stack import DEMO_CHANNEL, OPERATOR, Reply, Stack, running_stack

APP_API = "argoproj.io/v1alpha1"
# An OCIRepository for the Flux commands to act on: the simulator's Flux scenario has none.
OCI_REPOSITORY = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "OCIRepository",
    "metadata": {"name": "podinfo", "namespace": "flux-system"},
    "spec": {"interval": "10m", "url": "oci://ghcr.io/stefanprodan/manifests/podinfo"},
}


@asynccontextmanager
async def controlled_stack(tmp_path: Path) -> AsyncIterator[Stack]:
    """The stack with the simulator's Flux and Argo CD controllers running, waits of 20 s."""
    overrides = {"gitops": {"reconcile_timeout": "20s"}}
    async with running_stack(tmp_path, config_overrides=overrides) as running:
        running.sim.start_controllers()
        yield running


async def result_of(stack: Stack, reply: Reply) -> Mapping[str, Any]:
    """The message that replaced the "reconciling…" reply."""
    post = await stack.slack.wait_for_response(reply.delivery.hook_id, count=2, timeout=15)
    return post.body


async def click_confirm(stack: Stack, reply: Reply) -> Mapping[str, Any]:
    """Click Confirm on `reply` as the operator; the reply to the click."""
    assert reply.message is not None
    delivery = await stack.driver.click_button(
        render.CONFIRM_ACTION, user_id=OPERATOR, channel_id=DEMO_CHANNEL, message=reply.message
    )
    post = await stack.slack.wait_for_response(delivery.hook_id, timeout=15)
    return post.body


def annotate_app(stack: Stack, name: str = "kai-scheduler", **values: str | None) -> None:
    patch = {"metadata": {"annotations": values}}
    stack.sim.patch(APP_API, "Application", name, "argocd", patch=patch)


def app_of(stack: Stack, name: str = "kai-scheduler") -> dict[str, Any]:
    app = stack.sim.get(APP_API, "Application", name, "argocd")
    assert app is not None
    return app
