"""`evaluate_object` picks the rule by API group and kind, and never raises on odd input."""

from __future__ import annotations

from typing import Any

import pytest
from objects import (
    apiservice,
    application,
    flux_object,
    kai_conditions,
    kai_config,
    keda_conditions,
    scaled_job,
    scaled_object,
    shard,
)

from bot import rules
from bot.core.models import Health


@pytest.mark.parametrize(
    ("obj", "kind", "health"),
    [
        pytest.param(kai_config(conditions=kai_conditions(3)), "Config", Health.HEALTHY, id="kai"),
        pytest.param(shard(), "SchedulingShard", Health.PROGRESSING, id="shard"),
        pytest.param(apiservice(), "APIService", Health.HEALTHY, id="apiservice"),
        pytest.param(
            scaled_job(annotations={"autoscaling.keda.sh/paused": "true"}),
            "ScaledJob",
            Health.SUSPENDED,
            id="scaledjob",
        ),
        pytest.param(
            scaled_object(conditions=keda_conditions("ScaledObject", fallback="True")),
            "ScaledObject",
            Health.DEGRADED,
            id="scaledobject",
        ),
        pytest.param(flux_object("HelmRelease", suspend=True), "HelmRelease", Health.SUSPENDED),
        pytest.param(flux_object("Kustomization", suspend=True), "Kustomization", Health.SUSPENDED),
        pytest.param(flux_object("OCIRepository", suspend=True), "OCIRepository", Health.SUSPENDED),
        pytest.param(application("Degraded"), "Application", Health.DEGRADED, id="argocd"),
    ],
)
def test_each_supported_kind_gets_its_own_rule(
    obj: dict[str, Any], kind: str, health: Health
) -> None:
    verdict = rules.evaluate_object(obj)

    assert (verdict.kind, verdict.health) == (kind, health)


def test_old_api_versions_of_the_same_group_are_evaluated() -> None:
    obj = flux_object("HelmRelease", suspend=True)
    obj["apiVersion"] = "helm.toolkit.fluxcd.io/v2beta1"

    assert rules.evaluate_object(obj).health is Health.SUSPENDED


def test_an_unknown_kind_is_unknown_and_says_so() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "shop"}}

    verdict = rules.evaluate_object(pod)

    assert verdict.health is Health.UNKNOWN
    assert verdict.message == "kind Pod (v1) is not one kai-chatops evaluates"
    assert (verdict.kind, verdict.namespace, verdict.name) == ("Pod", "shop", "web-0")


def test_a_known_kind_in_another_group_is_not_mistaken_for_ours() -> None:
    config = {"apiVersion": "config.openshift.io/v1", "kind": "Config", "metadata": {"name": "x"}}

    verdict = rules.evaluate_object(config)

    assert verdict.health is Health.UNKNOWN
    assert "kind Config (config.openshift.io/v1) is not one" in verdict.message


@pytest.mark.parametrize(
    ("obj", "fragment"),
    [
        pytest.param(["not", "a", "mapping"], "a list, not a mapping", id="list"),
        pytest.param("kind: Config", "a str, not a mapping", id="string"),
        pytest.param(None, "a NoneType, not a mapping", id="none"),
        pytest.param({"metadata": {"name": "x"}}, "it has no kind", id="no-kind"),
        pytest.param({"kind": 7, "metadata": {"name": "x"}}, "it has no kind", id="kind-not-text"),
        pytest.param(
            {"apiVersion": "kai.scheduler/v1", "kind": "Config"},
            "this Config has no metadata.name",
            id="no-metadata",
        ),
        pytest.param(
            {"apiVersion": "kai.scheduler/v1", "kind": "Config", "metadata": "kai-config"},
            "no metadata.name",
            id="metadata-not-mapping",
        ),
        pytest.param(
            {"kind": "Config", "metadata": {"name": "kai-config"}},
            "Config kai-config has no apiVersion",
            id="no-api-version",
        ),
    ],
)
def test_a_malformed_object_is_unknown_with_a_clear_message(obj: Any, fragment: str) -> None:
    verdict = rules.evaluate_object(obj)

    assert verdict.health is Health.UNKNOWN
    assert fragment in verdict.message


ODD_SHAPES = [
    pytest.param({"status": []}, id="status-list"),
    pytest.param({"status": {"conditions": [None, 3, "x", {"type": "Ready"}]}}, id="odd-entries"),
    pytest.param({"status": {"conditions": {"type": "Ready"}}}, id="conditions-mapping"),
    pytest.param(
        {"status": {"health": "Healthy", "sync": [], "observedGeneration": "4"}}, id="odd-status"
    ),
    pytest.param(
        {"spec": "nope", "metadata": {"name": "x", "annotations": ["a"], "generation": "2"}},
        id="odd-spec-and-metadata",
    ),
    pytest.param({"spec": {"service": "svc", "suspend": "true"}}, id="odd-spec-fields"),
    pytest.param(
        {"metadata": {"name": "x", "annotations": {"autoscaling.keda.sh/paused": True}}},
        id="annotation-not-text",
    ),
]


@pytest.mark.parametrize("qualified_kind", rules.SUPPORTED_KINDS)
@pytest.mark.parametrize("shape", ODD_SHAPES)
def test_every_rule_survives_odd_shapes(qualified_kind: str, shape: dict[str, Any]) -> None:
    name, group = qualified_kind.split(".", 1)
    obj = {"apiVersion": f"{group}/v1", "kind": name, "metadata": {"name": "x"}, **shape}

    verdict = rules.evaluate_object(obj)

    assert verdict.kind == name
    assert isinstance(verdict.health, Health)


def test_supported_kinds_list_every_kind_the_design_names() -> None:
    assert set(rules.SUPPORTED_KINDS) == {
        "Config.kai.scheduler",
        "SchedulingShard.kai.scheduler",
        "APIService.apiregistration.k8s.io",
        "ScaledJob.keda.sh",
        "ScaledObject.keda.sh",
        "HelmRelease.helm.toolkit.fluxcd.io",
        "Kustomization.kustomize.toolkit.fluxcd.io",
        "GitRepository.source.toolkit.fluxcd.io",
        "HelmRepository.source.toolkit.fluxcd.io",
        "OCIRepository.source.toolkit.fluxcd.io",
        "HelmChart.source.toolkit.fluxcd.io",
        "Bucket.source.toolkit.fluxcd.io",
        "Application.argoproj.io",
    }
