"""`/kai reconcile ks` answered by Flux's own kustomize-controller v1.9.6 (the upstream tier,
upstream/flux.py): the request the bot writes is handled (`status.lastHandledReconcileAt` is the
bot's token) and the result reported; a Kustomization whose build fails is reported in Flux's
words, as Flux wrote them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from upstream import flux
from upstream.cluster import Upstream
from upstream.service import serving

from testbed.stack import CLUSTER, ServiceStack

REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"


@pytest.fixture
async def stack(upstream: Upstream, tmp_path: Path) -> AsyncIterator[ServiceStack]:
    async with serving(upstream, tmp_path) as served:
        yield served


def kustomization(upstream: Upstream, name: str) -> dict[str, Any]:
    found: dict[str, Any] = upstream.seeder.read(
        flux.KUSTOMIZE_API, "Kustomization", name, flux.NAMESPACE
    )
    return found


def condition(obj: Mapping[str, Any], type_: str) -> dict[str, Any]:
    items = (obj.get("status") or {}).get("conditions") or []
    return next((dict(c) for c in items if c["type"] == type_), {})


async def test_a_reconcile_is_handled_by_kustomize_controller_and_reported_ready(
    stack: ServiceStack, upstream: Upstream
) -> None:
    before = kustomization(upstream, flux.APPS)["status"].get("lastHandledReconcileAt")
    reply = await stack.command(f"reconcile ks {flux.NAMESPACE}/{flux.APPS}", to_the_end=True)
    lines = reply.text.splitlines()
    assert lines[0] == (
        f"Flux reconcile of Kustomization {flux.NAMESPACE}/{flux.APPS} on {CLUSTER}: reconciled"
    ), reply.text
    now = kustomization(upstream, flux.APPS)
    token = now["metadata"]["annotations"][REQUESTED_AT]
    assert now["status"]["lastHandledReconcileAt"] == token != before
    ready = condition(now, "Ready")
    assert ready["reason"] == "ReconciliationSucceeded"
    assert f"Ready True ({ready['reason']})" in reply.text
    assert ready["message"] in reply.text  # "Applied revision: main@sha1:..."


async def test_a_failing_kustomization_is_reported_in_fluxs_words(
    stack: ServiceStack, upstream: Upstream
) -> None:
    reply = await stack.command(f"reconcile ks {flux.NAMESPACE}/{flux.BROKEN}", to_the_end=True)
    now = kustomization(upstream, flux.BROKEN)
    token = now["metadata"]["annotations"][REQUESTED_AT]
    assert now["status"]["lastHandledReconcileAt"] == token
    ready = condition(now, "Ready")
    assert ready["status"] == "False"
    assert "kustomize build failed" in ready["message"]
    first = reply.text.splitlines()[0]
    assert first.startswith(
        f"Flux reconcile of Kustomization {flux.NAMESPACE}/{flux.BROKEN} on {CLUSTER}: failed"
    ), reply.text
    assert ready["message"].splitlines()[0] in reply.text
