"""`/kai health` against a real kube-apiserver: the bot's own token, upstream CRDs, the real
aggregator's verdict on KEDA's metrics APIService.

Signed Slack requests in (the emulator), the service reading the cluster through the official
client as its ServiceAccount, the reply out: the e2e tier's health tests, on a real server.
"""

from __future__ import annotations

from typing import Any

from conftest import BOT_CONTEXT
from controlplane import ControlPlane, poll
from seeding import Seeder, find

from testbed.stack import ServiceStack

# As KAI's operator writes it, a newline first (test_upstream_differential_kai.py holds the
# imitation to the real operator's words).
DEPENDENCIES = "\nKAI-prometheus is missing prometheus operator"
SERVED_SLICE = {"name": "keda-operator-metrics-apiserver-served", "namespace": "keda"}


def config_with_dependencies_missing(scenario: list[dict[str, Any]]) -> dict[str, Any]:
    """kai-config's status as the KAI operator writes it when Prometheus' operator is absent."""
    config = find(scenario, "Config", "kai-config")
    for condition in config["status"]["conditions"]:
        if condition["type"] == "DependenciesFulfilled":
            condition.update(status="False", reason="dependencies_missing", message=DEPENDENCIES)
    return config


async def test_the_bot_reads_kai_through_its_own_token_and_names_each_operand(
    stack: ServiceStack, control_plane: ControlPlane
) -> None:
    reply = await stack.command("health")
    assert reply.message is not None and reply.message["response_type"] == "in_channel"
    assert "Config kai-config: Healthy" in reply.text
    assert "SchedulingShard default: Healthy" in reply.text
    assert "Deployment kai-scheduler/kai-operator: Healthy" in reply.text
    assert "KAI CRDs: Healthy: all 6 present" in reply.text  # served by the upstream CRDs
    assert "APIService v1beta1.external.metrics.k8s.io: Healthy" in reply.text
    assert reply.text.startswith("KAI health on sim: Healthy")
    assert stack.slack.violations == []
    assert stack.kubeconfig == str(control_plane.bot_kubeconfig)
    assert stack.settings.clusters[0].context == BOT_CONTEXT


async def test_dependencies_not_fulfilled_are_degraded_in_the_operators_words(
    stack: ServiceStack, control_plane: ControlPlane, scenario: list[dict[str, Any]]
) -> None:
    broken = config_with_dependencies_missing(scenario)
    Seeder(control_plane.admin()).write_status(broken, broken["status"])
    reply = await stack.command("health")
    assert reply.text.startswith("KAI health on sim: Degraded")
    degraded = "Config kai-config: Degraded: DependenciesFulfilled is False at generation 1"
    assert degraded in reply.text
    assert DEPENDENCIES.strip() in reply.text


async def test_a_deleted_kai_config_is_missing(
    stack: ServiceStack, control_plane: ControlPlane, scenario: list[dict[str, Any]]
) -> None:
    Seeder(control_plane.admin()).remove(find(scenario, "Config", "kai-config"))
    reply = await stack.command("health")
    assert reply.text.startswith("KAI health on sim: Missing")
    assert "kai-config" in reply.text


async def test_the_real_aggregator_marks_the_metrics_api_unavailable_with_its_reason(
    stack: ServiceStack, control_plane: ControlPlane
) -> None:
    """Nothing backs KEDA's metrics Service: the aggregator itself says MissingEndpoints."""
    Seeder(control_plane.admin()).remove(
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": SERVED_SLICE}
    )

    def aggregator_has_spoken() -> bool | None:
        status, body = control_plane.raw_get(
            "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.external.metrics.k8s.io"
        )
        return True if status == 200 and b"MissingEndpoints" in body else None

    poll("the aggregator's verdict", aggregator_has_spoken, 30)
    reply = await stack.command("health")
    assert "APIService v1beta1.external.metrics.k8s.io: Degraded" in reply.text
    assert "MissingEndpoints" in reply.text
    assert "Service keda/keda-operator-metrics-apiserver" in reply.text
