"""kwok plays the kubelets of fake GPU nodes: they turn Ready, and a pod bound to one runs."""

from __future__ import annotations

from typing import Any

import pytest
from controlplane import ControlPlane, poll
from kubernetes import client
from kubernetes.client.exceptions import ApiException

NAMESPACE = "annia"


@pytest.fixture(scope="module")
def gpu_node(control_plane: ControlPlane) -> str:
    if control_plane.kwok_bin is None:
        pytest.skip("kwok is not built (tests/cluster/cluster_build.py builds it)")
    control_plane.add_gpu_node("gpu-node-0", gpus=8)
    return "gpu-node-0"


def test_a_fake_gpu_node_turns_ready_with_its_gpus(
    control_plane: ControlPlane, gpu_node: str
) -> None:
    core = client.CoreV1Api(control_plane.admin())

    def ready() -> Any:
        node = core.read_node(gpu_node)
        conditions = (node.status.conditions if node.status else None) or []
        return node if any(c.type == "Ready" and c.status == "True" for c in conditions) else None

    node = poll("kwok's node Ready", ready, 45)
    assert node.status.allocatable["nvidia.com/gpu"] == "8"


@pytest.mark.timeout(120)  # two polls: the pod created, then Running
def test_a_pod_bound_to_a_fake_node_runs(control_plane: ControlPlane, gpu_node: str) -> None:
    core = client.CoreV1Api(control_plane.admin())
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train-0", "namespace": NAMESPACE},
        "spec": {
            # No scheduler here: the pod is bound by name, as a scheduler's binding would.
            "nodeName": gpu_node,
            "containers": [
                {
                    "name": "train",
                    "image": "busybox",
                    "resources": {"limits": {"nvidia.com/gpu": "1"}},
                }
            ],
        },
    }

    def created() -> bool | None:
        # The ServiceAccount admission plugin refuses pods until the serviceaccount controller
        # has made the namespace's `default` ServiceAccount.
        try:
            control_plane.apply(pod)
        except ApiException as e:
            if e.status == 403 and "serviceaccount" in str(e.body):
                return None
            raise
        return True

    poll("pod created", created, 45)

    def running() -> Any:
        got = core.read_namespaced_pod("train-0", NAMESPACE)
        return got if got.status and got.status.phase == "Running" else None

    assert poll("pod Running", running, 45).status.phase == "Running"
