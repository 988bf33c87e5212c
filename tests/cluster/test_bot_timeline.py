"""`/kai timeline` on the real API server with the bot's own token (issue 37): deploy/'s RBAC lets
every read of the timeline through (HelmReleases, Argo CD Applications, ReplicaSets and
ControllerRevisions in KAI's namespace, KAI's Evict Events by field selector, `kai-config`, the
APIService), and the upstream CRDs take the history the timeline reads, shaped as the e2e tier
writes it to the simulator (helm-controller's `Snapshot`, Argo CD's `RevisionHistory`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from controlplane import ControlPlane
from seeding import Seeder

from testbed.sim import evictions
from testbed.sim.objects import timestamp
from testbed.stack import ServiceStack

pytestmark = pytest.mark.clock_from_now  # the API server stamps with the real time
KAI_NS = "kai-scheduler"


def made(at: datetime) -> list[dict[str, Any]]:
    """A Helm upgrade, an Argo CD sync, a DaemonSet revision and a KAI eviction, at `at`."""
    snapshot = {
        "name": "timeline-team", "namespace": "apps", "version": 2, "status": "deployed",
        "action": "upgrade", "chartName": "team", "chartVersion": "1.4.0",
        "configDigest": "sha256:4c1d9e0f7a2b3c4d", "digest": "sha256:0a1b2c3d4e5f",
        "firstDeployed": timestamp(at - timedelta(days=1)), "lastDeployed": timestamp(at),
    }  # fmt: skip
    release = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "timeline-team", "namespace": "flux-system"},
        "spec": {"interval": "10m", "chart": {"spec": {"chart": "team", "sourceRef": {
            "kind": "HelmRepository", "name": "kedacore"}}}},
        "status": {"history": [snapshot]},
    }  # fmt: skip
    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "timeline-app", "namespace": "argocd"},
        "spec": {"project": "default", "destination": {"server": "https://kubernetes.default.svc"},
                 "source": {"repoURL": "https://example.com/git", "path": "."}},
        "status": {"history": [{"id": 1, "revision": "4f2a9c1e7b3d5f60",
                                "deployedAt": timestamp(at),
                                "initiatedBy": {"username": "alice@example.com"}}]},
    }  # fmt: skip
    revision = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "timeline-exporter-5d8c7b", "namespace": KAI_NS},
        "revision": 3,
        "data": {},
    }
    group = {"metadata": {"name": "timeline-pg", "namespace": KAI_NS, "uid": "0e1f",
                          "resourceVersion": "1"}}  # fmt: skip
    event = evictions.evict_event(group, "preempted", evictions.kai_annotations("preempt", 1), at)
    return [release, app, revision, event]


@pytest.fixture
def objects(control_plane: ControlPlane) -> Iterator[list[dict[str, Any]]]:
    seeder = Seeder(control_plane.admin())
    docs = made(datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5))
    for doc in docs:
        seeder.replace(doc)
    yield docs
    for doc in docs:
        seeder.remove(doc)


async def test_the_timeline_reads_every_source_with_the_bots_token(
    stack: ServiceStack, objects: list[dict[str, Any]]
) -> None:
    reply = await stack.command("timeline --since 1h")
    assert reply.message is not None, reply.text
    said = str(reply.message["blocks"])
    assert "cannot be read" not in said  # every read granted
    assert "*HelmRelease flux-system/timeline-team* upgrade to v2: chart team@1.4.0" in said
    assert "*Application argocd/timeline-app* synced 4f2a9c1e7b3d — by alice@example.com" in said
    assert "rolled out revision 3 (ControllerRevision timeline-exporter-5d8c7b)" in said
    assert f"*PodGroup {KAI_NS}/timeline-pg* 1 pod(s) preempted by KAI" in said
