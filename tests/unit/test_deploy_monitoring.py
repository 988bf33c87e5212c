"""deploy/components/monitoring/ in an overlay: its Service reaches the pods' /metrics, its
ServiceMonitor selects that Service, the dashboard ships as Grafana's sidecar reads it, and the
NetworkPolicy lets the scrapes in. (promtool and a real API server judge the rules and the
custom resources: tests/cluster/test_monitoring_rules.py.)"""

from __future__ import annotations

import json
import os
from typing import Any

import kubernetes_validate
import pytest
from deploy_render import DEPLOY, by_kind, render

COMPONENT = DEPLOY / "components" / "monitoring"
K8S_VERSION = "1.33.0"  # the schemas tests/unit/test_deploy_manifests.py validates against


@pytest.fixture(scope="module")
def objects(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """socket-mode's install with the component added, as the component's comment says."""
    overlay = tmp_path_factory.mktemp("overlay")
    relative = os.path.relpath(DEPLOY, overlay)
    (overlay / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"resources: [{relative}/overlays/socket-mode]\n"
        f"components: [{relative}/components/monitoring]\n"
    )
    return render(overlay)


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    [found] = by_kind(objects, kind)
    return found


def test_the_metrics_service_selects_the_pods_and_their_http_port(
    objects: list[dict[str, Any]],
) -> None:
    service = one(objects, "Service")
    pod = one(objects, "Deployment")["spec"]["template"]
    kubernetes_validate.validate(service, K8S_VERSION, strict=True)

    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    ports = {p["name"]: p["containerPort"] for c in pod["spec"]["containers"] for p in c["ports"]}
    [port] = service["spec"]["ports"]
    assert ports[port["targetPort"]] == 3000


def test_the_service_monitor_scrapes_that_service_at_slash_metrics(
    objects: list[dict[str, Any]],
) -> None:
    service, monitor = one(objects, "Service"), one(objects, "ServiceMonitor")

    wanted = monitor["spec"]["selector"]["matchLabels"]
    assert wanted.items() <= service["metadata"]["labels"].items()
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    assert endpoint["path"] == "/metrics"
    assert monitor["metadata"]["namespace"] == service["metadata"]["namespace"]


def test_the_dashboard_ships_whole_for_grafanas_sidecar(objects: list[dict[str, Any]]) -> None:
    [dashboard] = [c for c in by_kind(objects, "ConfigMap") if "kai-chatops.json" in c["data"]]
    kubernetes_validate.validate(dashboard, K8S_VERSION, strict=True)

    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    shipped = json.loads(dashboard["data"]["kai-chatops.json"])
    assert shipped == json.loads((COMPONENT / "dashboard.json").read_text())


def test_the_network_policy_lets_the_scrapes_in(objects: list[dict[str, Any]]) -> None:
    policy = one(objects, "NetworkPolicy")
    allowed = {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]}

    assert 3000 in allowed
