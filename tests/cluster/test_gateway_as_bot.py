"""The bot's own Kubernetes gateway (bot/kube/gateway.py) against the real API server, with the
kubeconfig that holds its ServiceAccount's token: the reads it makes, a pause, and the errors it
turns a real refusal into."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from controlplane import ControlPlane

from bot.config.settings import ClusterSettings, KubernetesSettings
from bot.core import errors
from bot.kube import gateway as kube
from bot.kube import kinds
from bot.kube.gateway import KubeGateway

KEDA_NS = "annia"
JOB = "gateway-job"


@pytest.fixture(scope="module")
def objects(control_plane: ControlPlane) -> ControlPlane:
    control_plane.apply(
        {
            "apiVersion": "keda.sh/v1alpha1",
            "kind": "ScaledJob",
            "metadata": {"name": JOB, "namespace": KEDA_NS},
            "spec": {
                "jobTargetRef": {
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": "train", "image": "busybox"}],
                        }
                    }
                },
                "triggers": [{"type": "cpu", "metadata": {"value": "50"}}],
            },
        }
    )
    control_plane.apply(
        {
            "apiVersion": "kai.scheduler/v1",
            "kind": "Config",
            "metadata": {"name": "kai-config"},
            "spec": {},
        }
    )
    return control_plane


@pytest.fixture
def gateway(objects: ControlPlane) -> Iterator[KubeGateway]:
    cluster = ClusterSettings(name="cluster-tier", kubeconfig=str(objects.bot_kubeconfig))
    connected = kube.connect(cluster, KubernetesSettings(timedelta(seconds=10), retries=0))
    yield connected
    connected.close()


async def test_the_gateway_reads_as_the_bot(gateway: KubeGateway) -> None:
    assert (await gateway.server_version()).startswith("v1.37")
    config = await gateway.get_object(kinds.KAI_CONFIG, "kai-config")
    assert config is not None and config["metadata"]["name"] == "kai-config"
    jobs = await gateway.list_objects(kinds.SCALED_JOB, KEDA_NS)
    assert JOB in [j["metadata"]["name"] for j in jobs]
    # A missing object is None, as the bot expects, not an error.
    assert await gateway.get_object(kinds.SCALED_JOB, "no-such-job", KEDA_NS) is None


async def test_the_gateway_pauses_and_meets_the_policy(gateway: KubeGateway) -> None:
    paused = await gateway.patch_object(
        kinds.SCALED_JOB,
        JOB,
        KEDA_NS,
        {"metadata": {"annotations": {"autoscaling.keda.sh/paused": "true"}}},
    )
    assert paused["metadata"]["annotations"]["autoscaling.keda.sh/paused"] == "true"
    with pytest.raises(errors.KubeForbidden) as refused:
        await gateway.patch_object(kinds.SCALED_JOB, JOB, KEDA_NS, {"spec": {"pollingInterval": 1}})
    assert "kai-chatops may not change spec.pollingInterval" in str(refused.value)


async def test_the_gateway_is_refused_what_rbac_does_not_grant(gateway: KubeGateway) -> None:
    with pytest.raises(errors.KubeForbidden):
        await gateway.list_objects(kinds.CONFIG_MAP, "kube-system")
