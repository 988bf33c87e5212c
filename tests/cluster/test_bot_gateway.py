"""The bot's Kubernetes gateway against a real kube-apiserver, with the bot's own token: how the
server's answers map onto the gateway's errors (410 on an expired watch, 409 on a stale
resourceVersion, 422 on an invalid write), paged lists, and the field selectors the bot sends.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import BOT_CONTEXT
from controlplane import ControlPlane
from seeding import Seeder

from bot.config import settings as config
from bot.core import errors
from bot.kube import gateway as kube
from bot.kube import kinds
from testbed.stack import demo_config


@pytest.fixture
def gateway(
    control_plane: ControlPlane, scenario: list[dict[str, Any]]
) -> Iterator[kube.KubeGateway]:
    settings = config.parse_settings(demo_config(str(control_plane.bot_kubeconfig), BOT_CONTEXT))
    connected = kube.connect(settings.clusters[0], settings.kubernetes)
    yield connected
    connected.close()


async def test_a_watch_from_a_version_the_server_no_longer_keeps_is_expired(
    gateway: kube.KubeGateway,
) -> None:
    """Resource version 1 is older than anything the API server's watch cache holds: 410 Gone,
    which the bot's `follow` answers by polling."""
    watch = gateway.watch_object(
        kinds.SCALED_JOB, "annia-worker", "annia", resource_version="1", seconds=5
    )
    with pytest.raises(errors.KubeExpired):
        await anext(watch)
    await watch.aclose()


async def test_a_watch_from_the_objects_version_sees_the_next_change(
    gateway: kube.KubeGateway, control_plane: ControlPlane
) -> None:
    job = await gateway.get_object(kinds.SCALED_JOB, "annia-worker", "annia")
    version = job["metadata"]["resourceVersion"]
    watch = gateway.watch_object(
        kinds.SCALED_JOB, "annia-worker", "annia", resource_version=version, seconds=20
    )
    annotations = {"metadata": {"annotations": {"team": "ml"}}}
    Seeder(control_plane.admin()).patch(
        "keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia", annotations
    )
    changed = await anext(watch)
    await watch.aclose()
    assert changed is not None and changed["metadata"]["annotations"]["team"] == "ml"


async def test_a_patch_with_a_stale_resource_version_is_a_conflict(
    gateway: kube.KubeGateway,
) -> None:
    job = await gateway.get_object(kinds.SCALED_JOB, "annia-worker", "annia")
    stale = str(int(job["metadata"]["resourceVersion"]) - 1)
    body = {
        "metadata": {
            "resourceVersion": stale,
            "annotations": {"autoscaling.keda.sh/paused": "true"},
        }
    }
    with pytest.raises(errors.KubeConflict):
        await gateway.patch_object(kinds.SCALED_JOB, "annia-worker", "annia", body)
    after = await gateway.get_object(kinds.SCALED_JOB, "annia-worker", "annia")
    assert "autoscaling.keda.sh/paused" not in (after["metadata"].get("annotations") or {})


async def test_a_paged_list_returns_every_object_once(gateway: kube.KubeGateway) -> None:
    whole = await gateway.list_objects(kinds.POD, "kai-scheduler", page_size=None)
    paged = await gateway.list_objects(kinds.POD, "kai-scheduler", page_size=2)
    assert len(whole) > 2
    assert [p["metadata"]["name"] for p in paged] == [p["metadata"]["name"] for p in whole]


@pytest.mark.parametrize(
    "selector",
    ["type=Warning", "involvedObject.kind=Pod,involvedObject.name=x", "metadata.name=x"],
)
async def test_the_event_field_selectors_the_bot_sends_are_accepted(
    gateway: kube.KubeGateway, selector: str
) -> None:
    assert await gateway.list_objects(kinds.EVENT, "kai-scheduler", field_selector=selector) == []


async def test_a_field_selector_a_kind_does_not_support_is_refused(
    gateway: kube.KubeGateway,
) -> None:
    """Deployments select only by name and namespace: the server says 400, the gateway says
    the request was invalid rather than pretending nothing matched."""
    with pytest.raises(errors.KubeInvalid) as refused:
        await gateway.list_objects(
            kinds.DEPLOYMENT, "kai-scheduler", field_selector="status.replicas=1"
        )
    assert (
        '"status.replicas" is not a known field selector: only "metadata.name", '
        '"metadata.namespace"'
    ) in str(refused.value)
