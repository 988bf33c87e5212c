"""APIService verdicts from the Available condition, naming the backing Service from the spec."""

from __future__ import annotations

import pytest
from objects import apiservice

from bot.core.models import Health
from bot.rules import apiservice as rule

MISSING_ENDPOINTS = (
    'endpointslices for service/keda-operator-metrics-apiserver in "keda" '
    'have no addresses with port name "https"'
)


@pytest.mark.parametrize(
    ("obj", "health", "fragments"),
    [
        pytest.param(
            apiservice(),
            Health.HEALTHY,
            ["Available is True (Passed)", "all checks passed"],
            id="available",
        ),
        pytest.param(
            apiservice("False", "MissingEndpoints", MISSING_ENDPOINTS),
            Health.DEGRADED,
            [
                "Available is False (MissingEndpoints)",
                "Service keda/keda-operator-metrics-apiserver",
                MISSING_ENDPOINTS,
            ],
            id="missing-endpoints",
        ),
        pytest.param(
            apiservice(
                "False",
                "ServiceNotFound",
                'service/keda-metrics-apiserver in "keda" is not present',
                service={"name": "keda-metrics-apiserver", "namespace": "keda"},
            ),
            Health.DEGRADED,
            ["ServiceNotFound", "Service keda/keda-metrics-apiserver", "is not present"],
            id="raw-manifest-service-name-read-from-spec",
        ),
        pytest.param(
            apiservice(
                "Unknown",
                "ServiceAccessError",
                'service/keda-operator-metrics-apiserver in "keda" cannot be checked due to: x',
            ),
            Health.UNKNOWN,
            ["the availability check itself failed", "ServiceAccessError"],
            id="unknown",
        ),
        pytest.param(
            apiservice(None),
            Health.PROGRESSING,
            ["no Available condition yet"],
            id="no-condition",
        ),
    ],
)
def test_apiservice_verdict_follows_the_available_condition(
    obj: dict[str, object], health: Health, fragments: list[str]
) -> None:
    verdict = rule.evaluate_apiservice(obj)

    assert verdict.health is health
    for fragment in fragments:
        assert fragment in verdict.message


def test_failed_discovery_check_message_is_reported_verbatim() -> None:
    message = (
        "failing or missing response from https://10.42.3.17:6443/apis/external.metrics.k8s.io"
        '/v1beta1: Get "https://10.42.3.17:6443/apis/external.metrics.k8s.io/v1beta1": '
        "dial tcp 10.42.3.17:6443: connect: connection refused"
    )

    assessment = rule.assess_apiservice(apiservice("False", "FailedDiscoveryCheck", message))

    assert assessment.health is Health.DEGRADED
    assert assessment.detail == message


def test_a_local_apiservice_is_described_as_served_by_kube_apiserver() -> None:
    obj = apiservice("True", "Local", "Local APIServices are always available")
    del obj["spec"]["service"]

    assert "served locally" in rule.describe_backing_service(obj)
