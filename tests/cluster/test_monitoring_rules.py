"""deploy/components/monitoring/ held to the real tools: promtool checks the PrometheusRule and
runs its unit tests (tests/cluster/monitoring/rules_test.yaml, one or more per alert); every
metric its rules, its dashboard and those tests name is one a running service serves on
`/metrics` (read with Prometheus's own parser, promql-names); the ServiceMonitor and the
PrometheusRule are accepted by a real API server holding the Prometheus Operator's CRDs."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cluster_build as build
import crds
import pytest
import yaml
from controlplane import ControlPlane, poll
from metrics_scrape import scrape, series_names

from testbed.stack import running_stack

HERE = Path(__file__).resolve().parent
COMPONENT = HERE.parent.parent / "deploy" / "components" / "monitoring"
RULES_TEST = HERE / "monitoring" / "rules_test.yaml"
# The CRDs as the Prometheus Operator ships them (example/prometheus-operator-crd/): v0.85.0 is
# the newest release whose root module the Go module proxy serves.
OPERATOR = crds.Shipped(
    "github.com/prometheus-operator/prometheus-operator",
    "v0.85.0",
    tuple(
        f"example/prometheus-operator-crd/monitoring.coreos.com_{kind}.yaml"
        for kind in ("servicemonitors", "prometheusrules")
    ),
)


@pytest.fixture(scope="module")
def tools() -> dict[str, Path]:
    """promtool and promql-names, built into the cache when missing."""
    names = [b.name for b in build.MONITORING_BINARIES]
    if build.missing(build.MONITORING_BINARIES) and shutil.which("go") is None:
        pytest.skip("Go is not installed: promtool is built with it")
    build.build(names)
    return {b.name: b.path() for b in build.MONITORING_BINARIES}


def rule_spec() -> dict[str, Any]:
    """The PrometheusRule's spec: a Prometheus rule file as it stands."""
    rule = yaml.safe_load((COMPONENT / "prometheusrule.yaml").read_text())
    spec: dict[str, Any] = rule["spec"]
    return spec


def alert_names() -> set[str]:
    return {r["alert"] for g in rule_spec()["groups"] for r in g["rules"] if "alert" in r}


@pytest.fixture
def rules_dir(tmp_path: Path) -> Path:
    """The rule file and its unit tests side by side, as promtool reads them."""
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rule_spec()))
    shutil.copy(RULES_TEST, tmp_path / RULES_TEST.name)
    return tmp_path


def promtool(tools: dict[str, Path], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(tools["promtool"]), *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def test_promtool_accepts_every_rule(tools: dict[str, Path], rules_dir: Path) -> None:
    done = promtool(tools, "check", "rules", "rules.yaml", cwd=rules_dir)

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(alert_names())} rules found" in done.stdout


def test_each_alert_fires_and_stays_quiet_as_its_unit_tests_say(
    tools: dict[str, Path], rules_dir: Path
) -> None:
    done = promtool(tools, "test", "rules", RULES_TEST.name, cwd=rules_dir)

    assert done.returncode == 0, done.stdout + done.stderr
    cases = [
        c for t in yaml.safe_load(RULES_TEST.read_text())["tests"] for c in t["alert_rule_test"]
    ]
    assert {c["alertname"] for c in cases if c.get("exp_alerts")} == alert_names()
    assert {c["alertname"] for c in cases if not c.get("exp_alerts")} == alert_names()


def exprs_named() -> list[str]:
    """Every PromQL expression of the component, and every series its rules' tests feed in."""
    rules = [r["expr"] for g in rule_spec()["groups"] for r in g["rules"]]
    dashboard = json.loads((COMPONENT / "dashboard.json").read_text())
    panels = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    variables = [
        v["query"]["query"] for v in dashboard["templating"]["list"] if v["type"] == "query"
    ]
    tests = yaml.safe_load(RULES_TEST.read_text())["tests"]
    series = [s["series"] for t in tests for s in t["input_series"]]
    assert rules and panels and series
    # label_values(METRIC, LABEL) is Grafana's, not PromQL: its first argument is a selector.
    return rules + panels + series + [v.split("(", 1)[1].rsplit(",", 1)[0] for v in variables]


def metric_names(tools: dict[str, Path], exprs: list[str]) -> dict[str, list[str]]:
    """The metric names each expression's selectors name, by Prometheus's own parser."""
    done = subprocess.run(
        [str(tools["promql-names"])],
        input=json.dumps(exprs),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    parsed = json.loads(done.stdout)
    errors = {p["expr"]: p["error"] for p in parsed if p["error"]}
    assert not errors, errors
    return {p["expr"]: p["names"] for p in parsed}


async def test_every_metric_the_rules_and_the_dashboard_name_is_one_the_service_serves(
    tools: dict[str, Path], tmp_path: Path
) -> None:
    async with running_stack(tmp_path) as stack:
        served = series_names(await scrape(stack.service.port))

    named = metric_names(tools, exprs_named())
    unknown = {e: sorted(set(n) - served) for e, n in named.items() if set(n) - served}
    assert not unknown, f"names the service does not serve: {unknown}"
    assert all(named.values())  # every expression names some metric


@pytest.fixture
def operator_crds(control_plane: ControlPlane) -> Iterator[list[str]]:
    """The Prometheus Operator's two CRDs installed and Established, then removed (with what
    the test made of them) so the session's later tests see the control plane as before."""
    from kubernetes import client

    folder = crds.fetch_all(build.cache_dir() / "crds-monitoring", (OPERATOR,), ())
    ext = client.ApiextensionsV1Api(control_plane.admin())
    names = []
    for path in sorted(folder.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        control_plane.apply(crd)
        names.append(crd["metadata"]["name"])

    def established() -> bool:
        conditions = [ext.read_custom_resource_definition(n).status.conditions for n in names]
        return all(
            any(c.type == "Established" and c.status == "True" for c in found or [])
            for found in conditions
        )

    poll("monitoring.coreos.com CRDs Established", established, 30)
    try:
        yield names
    finally:
        for name in names:
            ext.delete_custom_resource_definition(name)
        core = client.CoreV1Api(control_plane.admin())
        core.delete_namespaced_service("kai-chatops-metrics", "kai-chatops")
        core.delete_namespaced_config_map("kai-chatops-dashboard", "kai-chatops")


def test_the_component_is_accepted_by_a_real_api_server_with_the_operators_crds(
    control_plane: ControlPlane, operator_crds: list[str]
) -> None:
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    for obj in control_plane.render(COMPONENT):
        control_plane.apply(obj)
    custom = client.CustomObjectsApi(control_plane.admin())
    rule = custom.get_namespaced_custom_object(
        "monitoring.coreos.com", "v1", "kai-chatops", "prometheusrules", "kai-chatops"
    )
    monitor = custom.get_namespaced_custom_object(
        "monitoring.coreos.com", "v1", "kai-chatops", "servicemonitors", "kai-chatops"
    )
    assert {r["alert"] for r in rule["spec"]["groups"][0]["rules"]} == alert_names()
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics"

    broken = yaml.safe_load((COMPONENT / "prometheusrule.yaml").read_text())
    broken["metadata"]["name"] = "kai-chatops-broken"
    del broken["spec"]["groups"][0]["rules"][0]["expr"]
    with pytest.raises(ApiException) as refused:
        control_plane.apply(broken)
    assert refused.value.status == 422 and "expr" in str(refused.value.body)
