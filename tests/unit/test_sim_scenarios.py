"""Packaged scenarios load as realistic clusters, and the breakage actions break and heal them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from testbed.sim import Simulator, scenario_names
from testbed.sim.breakage import ACTIONS, MISSING_ENDPOINTS, describe_actions, heal
from testbed.sim.selectors import parse_selector
from testbed.sim.workload_breakage import SCHEDULER_POD

KAI = "kai.scheduler/v1"
APISERVICE = ("apiregistration.k8s.io/v1", "APIService", "v1beta1.external.metrics.k8s.io")
OPERANDS = [
    "admission",
    "binder",
    "kai-scheduler-default",
    "pod-grouper",
    "podgroup-controller",
    "queue-controller",
]
NOW = datetime(2026, 8, 24, 9, 30, tzinfo=UTC)


def conditions(obj: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    assert obj is not None
    return {c["type"]: c for c in obj["status"]["conditions"]}


def config(sim: Simulator) -> dict[str, Any] | None:
    return sim.get(KAI, "Config", "kai-config")


def deployment(sim: Simulator, name: str) -> dict[str, Any]:
    found = sim.get("apps/v1", "Deployment", name, "kai-scheduler")
    assert found is not None
    return found


def is_kai_healthy(sim: Simulator) -> bool:
    found = config(sim)
    if found is None:
        return False
    generation = found["metadata"]["generation"]
    wanted = ("Deployed", "Available", "DependenciesFulfilled")
    return all(
        conditions(found)[t]["status"] == "True"
        and conditions(found)[t]["observedGeneration"] == generation
        for t in wanted
    )


@pytest.fixture
def sim() -> Simulator:
    return Simulator(scenarios=["default"], clock=lambda: NOW)


@pytest.mark.parametrize("name", ["kai-healthy", "keda", "flux", "argocd", "default"])
def test_every_packaged_scenario_loads(name: str) -> None:
    assert name in scenario_names()
    sim = Simulator(scenarios=[name])
    crds = sim.store.list_objects(sim.store.resolve("apiextensions.k8s.io/v1", "crd"))
    assert crds["items"], f"{name} defines no CRDs"


def test_healthy_kai_has_all_conditions_true_at_its_generation(sim: Simulator) -> None:
    assert is_kai_healthy(sim)
    shard = sim.get(KAI, "SchedulingShard", "default")
    assert all(c["status"] == "True" for t, c in conditions(shard).items() if t != "Reconciling")
    selector = "app.kubernetes.io/managed-by=kai-operator"
    listed = sim.store.list_objects(
        sim.store.resolve("apps/v1", "Deployment"),
        "kai-scheduler",
        selector=parse_selector(selector),
    )
    assert [d["metadata"]["name"] for d in listed["items"]] == OPERANDS
    assert deployment(sim, "kai-operator")["metadata"]["labels"] == {"app": "kai-operator"}


def test_default_scenario_serves_keda_flux_and_argo_short_names(sim: Simulator) -> None:
    assert sim.get("keda.sh/v1alpha1", "sj", "annia-worker", "annia") is not None
    assert sim.get("keda.sh/v1alpha1", "so", "annia-api", "annia") is not None
    assert sim.get("helm.toolkit.fluxcd.io/v2", "hr", "kai-scheduler", "flux-system") is not None
    assert sim.get("source.toolkit.fluxcd.io/v1", "hc", "flux-system-keda", "flux-system")
    app = sim.get("argoproj.io/v1alpha1", "app", "kai-scheduler", "argocd")
    assert app is not None and app["status"]["health"]["status"] == "Healthy"
    assert conditions(sim.get(*APISERVICE))["Available"]["reason"] == "Passed"


def test_a_yaml_path_loads_like_a_scenario(tmp_path: Path) -> None:
    path = tmp_path / "extra.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x}\n")
    sim = Simulator(scenarios=[str(path)])
    assert sim.get("v1", "ConfigMap", "c", "x") is not None


def test_unknown_scenario_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="kai-healthy"):
        Simulator(scenarios=["no-such-scenario"])


def check_dependencies_missing(sim: Simulator) -> None:
    found = config(sim)
    assert found is not None
    condition = conditions(found)["DependenciesFulfilled"]
    assert (condition["status"], condition["reason"]) == ("False", "dependencies_missing")
    assert condition["message"] == "\nKAI-prometheus is missing prometheus operator"
    assert condition["observedGeneration"] == found["metadata"]["generation"]
    assert condition["lastTransitionTime"] == "2026-08-24T09:30:00Z"


def check_config_deleted(sim: Simulator) -> None:
    assert config(sim) is None


def check_operator_down(sim: Simulator) -> None:
    operator = deployment(sim, "kai-operator")
    assert operator["status"]["availableReplicas"] == 0
    assert conditions(operator)["Available"]["status"] == "False"


def check_scheduler_stall(sim: Simulator) -> None:
    """Running and Ready with two replicas (leader election), the Lease 10 minutes old."""
    scheduler = deployment(sim, "kai-scheduler-default")
    assert conditions(scheduler)["Available"]["status"] == "True"
    assert scheduler["spec"]["replicas"] == 2 and scheduler["status"]["readyReplicas"] == 2
    lease = sim.get("coordination.k8s.io/v1", "Lease", "kai-scheduler", "kai-scheduler")
    assert lease is not None
    spec = lease["spec"]
    assert spec["holderIdentity"].startswith(f"{SCHEDULER_POD}_")
    assert spec["leaseDurationSeconds"] == 15
    renewed = datetime.fromisoformat(spec["renewTime"])
    assert (sim.store.clock() - renewed).total_seconds() >= 600


def check_scheduler_down(sim: Simulator) -> None:
    scheduler = deployment(sim, "kai-scheduler-default")
    assert conditions(scheduler)["Available"]["status"] == "False"
    shard = conditions(sim.get(KAI, "SchedulingShard", "default"))
    assert "kai-scheduler-default" in shard["Available"]["message"]
    pod = sim.get("v1", "Pod", SCHEDULER_POD, "kai-scheduler")
    assert pod is not None
    [container] = pod["status"]["containerStatuses"]
    assert container["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert container["lastState"]["terminated"]["exitCode"] == 2
    previous = sim.logs.text("kai-scheduler", SCHEDULER_POD, "kai-scheduler-default", True)
    assert "panic: runtime error" in previous


def check_apiservice_down(sim: Simulator) -> None:
    available = conditions(sim.get(*APISERVICE))["Available"]
    assert (available["status"], available["reason"]) == ("False", "MissingEndpoints")
    assert available["message"] == MISSING_ENDPOINTS


def check_apiservice_missing(sim: Simulator) -> None:
    assert sim.get(*APISERVICE) is None


def check_stale_generation(sim: Simulator) -> None:
    found = config(sim)
    assert found is not None and found["metadata"]["generation"] == 2
    assert {c["observedGeneration"] for c in conditions(found).values()} == {1}


@pytest.mark.parametrize(
    ("action", "check"),
    [
        ("dependencies_missing", check_dependencies_missing),
        ("delete_kai_config", check_config_deleted),
        ("operator_down", check_operator_down),
        ("scheduler_down", check_scheduler_down),
        ("scheduler_stall", check_scheduler_stall),
        ("apiservice_down", check_apiservice_down),
        ("apiservice_missing", check_apiservice_missing),
        ("stale_generation", check_stale_generation),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_breakage_does_what_it_says_and_heal_restores_health(
    sim: Simulator, action: str, check: Callable[[Simulator], None]
) -> None:
    before = sim.store.resource_version
    ACTIONS[action](sim)
    assert int(sim.store.resource_version) > int(before)
    check(sim)
    heal(sim)
    assert is_kai_healthy(sim)
    assert conditions(deployment(sim, "kai-operator"))["Available"]["status"] == "True"
    assert conditions(deployment(sim, "kai-scheduler-default"))["Available"]["status"] == "True"
    assert deployment(sim, "kai-scheduler-default")["spec"]["replicas"] == 1
    assert sim.get("coordination.k8s.io/v1", "Lease", "kai-scheduler", "kai-scheduler") is None
    assert conditions(sim.get(*APISERVICE))["Available"]["status"] == "True"
    pod, original = (
        found("v1", "Pod", SCHEDULER_POD, "kai-scheduler") for found in (sim.get, sim.original)
    )
    assert pod is not None and original is not None and pod["status"] == original["status"]


def test_heal_after_several_breakages_leaves_a_healthy_cluster(sim: Simulator) -> None:
    for action in ("stale_generation", "dependencies_missing", "delete_kai_config"):
        ACTIONS[action](sim)
    heal(sim)
    assert is_kai_healthy(sim)


def test_heal_on_a_healthy_cluster_writes_nothing(sim: Simulator) -> None:
    before = sim.store.resource_version
    heal(sim)
    assert sim.store.resource_version == before


def test_every_action_has_a_one_line_description() -> None:
    described = describe_actions()
    assert set(described) == set(ACTIONS)
    assert all(text and "\n" not in text for text in described.values())
