"""Flux HelmRelease, Kustomization and source verdicts (docs/design.md §2 "Flux objects'
health")."""

from __future__ import annotations

from typing import Any

import pytest
from objects import condition, flux_object

from bot.core.models import Health
from bot.rules import flux

UPGRADED = "Helm upgrade succeeded for release apps/podinfo.v5 with chart podinfo@6.7.1"
READY_TRUE = condition("Ready", "True", reason="UpgradeSucceeded", message=UPGRADED)
RELEASED_TRUE = condition("Released", "True", reason="UpgradeSucceeded", message=UPGRADED)
FAILED = "Helm upgrade failed for release apps/podinfo with chart podinfo@6.7.2: timed out"


@pytest.mark.parametrize(
    ("fields", "health", "fragment"),
    [
        pytest.param(
            {"suspend": True, "conditions": [READY_TRUE]},
            Health.SUSPENDED,
            "suspended (spec.suspend: true)",
            id="suspended",
        ),
        pytest.param(
            {
                "conditions": [
                    condition("Reconciling", "True", reason="Progressing", message="running"),
                    condition("Ready", "Unknown", reason="Progressing", message="running"),
                    RELEASED_TRUE,
                ]
            },
            Health.PROGRESSING,
            "Reconciling is True (Progressing): running",
            id="reconciling",
        ),
        pytest.param(
            {"generation": 5, "observed": 4, "conditions": [READY_TRUE, RELEASED_TRUE]},
            Health.PROGRESSING,
            "status is from generation 4, object is at generation 5",
            id="stale-observed-generation",
        ),
        pytest.param(
            {"conditions": [condition("Ready", "Unknown", reason="Progressing", message="x")]},
            Health.PROGRESSING,
            "Ready is Unknown (Progressing)",
            id="ready-unknown",
        ),
        pytest.param(
            {
                "conditions": [
                    condition("Stalled", "True", reason="InvalidChartReference", message="bad ref")
                ]
            },
            Health.DEGRADED,
            "Stalled is True (InvalidChartReference): bad ref",
            id="stalled-without-ready",
        ),
        pytest.param(
            {
                "conditions": [
                    condition("Stalled", "True", reason="RetriesExceeded", message="gave up"),
                    condition("Ready", "False", reason="UpgradeFailed", message=FAILED),
                ]
            },
            Health.DEGRADED,
            f"Ready is False (UpgradeFailed): {FAILED}",
            id="stalled-uses-ready-message",
        ),
        pytest.param(
            {
                "conditions": [
                    condition("Stalled", "True", reason="InvalidChartReference", message="bad"),
                    condition("Ready", "Unknown", reason="Progressing", message="fetching chart"),
                ]
            },
            Health.DEGRADED,
            "Stalled is True (InvalidChartReference), Ready is Unknown (Progressing): "
            "fetching chart",
            id="stalled-with-ready-unknown-uses-ready-message",
        ),
        pytest.param(
            {
                "conditions": [
                    condition("Stalled", "True", reason="InvalidChartReference", message="bad"),
                    condition("Ready", "Unknown", reason="Progressing", message=""),
                ]
            },
            Health.DEGRADED,
            "Stalled is True (InvalidChartReference): bad",
            id="stalled-with-a-silent-ready-uses-stalled-message",
        ),
        pytest.param(
            {"conditions": [condition("Ready", "False", reason="UpgradeFailed", message=FAILED)]},
            Health.DEGRADED,
            FAILED,
            id="ready-false",
        ),
        pytest.param(
            {"conditions": [READY_TRUE, RELEASED_TRUE]},
            Health.HEALTHY,
            f"Ready is True (UpgradeSucceeded): {UPGRADED}",
            id="ready-true",
        ),
        pytest.param({"conditions": []}, Health.PROGRESSING, "no status.conditions", id="no-cond"),
        pytest.param(
            {"observed": None}, Health.PROGRESSING, "no status.conditions", id="no-status"
        ),
        pytest.param(
            {"conditions": [RELEASED_TRUE]},
            Health.PROGRESSING,
            "no Ready condition yet",
            id="no-ready-condition",
        ),
    ],
)
def test_helmrelease_verdict_follows_design_rules(
    fields: dict[str, Any], health: Health, fragment: str
) -> None:
    verdict = flux.evaluate_flux_object(flux_object("HelmRelease", **fields))

    assert verdict.health is health
    assert fragment in verdict.message


def test_healthy_kustomization_mentions_the_applied_revision() -> None:
    revision = "main@sha1:3f2c8a1e"
    obj = flux_object(
        "Kustomization",
        conditions=[
            condition(
                "Ready",
                "True",
                reason="ReconciliationSucceeded",
                message=f"Applied revision: {revision}",
            )
        ],
        status_extra={"lastAppliedRevision": revision},
    )

    verdict = flux.evaluate_flux_object(obj)

    assert verdict.health is Health.HEALTHY
    assert verdict.message.startswith(
        f"Ready is True (ReconciliationSucceeded), applied revision {revision}"
    )


@pytest.mark.parametrize(
    "kind", ["GitRepository", "HelmRepository", "OCIRepository", "HelmChart", "Bucket"]
)
def test_healthy_source_mentions_the_fetched_revision(kind: str) -> None:
    obj = flux_object(
        kind,
        conditions=[
            condition("Ready", "True", reason="Succeeded", message="stored artifact for revision"),
            condition("ArtifactInStorage", "True", reason="Succeeded"),
        ],
        status_extra={"artifact": {"revision": "sha256:5caf9e1d"}},
    )

    verdict = flux.evaluate_flux_object(obj)

    assert verdict.health is Health.HEALTHY
    assert "fetched revision sha256:5caf9e1d" in verdict.message


@pytest.mark.parametrize("kind", ["Kustomization", "GitRepository"])
def test_suspend_wins_over_a_failing_ready(kind: str) -> None:
    obj = flux_object(
        kind,
        suspend=True,
        conditions=[condition("Ready", "False", reason="ArtifactFailed", message="x")],
    )

    assert flux.evaluate_flux_object(obj).health is Health.SUSPENDED


def test_suspend_false_is_not_suspended() -> None:
    obj = flux_object("HelmRelease", suspend=False, conditions=[READY_TRUE])

    assert flux.evaluate_flux_object(obj).health is Health.HEALTHY


@pytest.mark.parametrize(
    "conditions",
    [[], [condition("Ready", "False", reason="FetchFailed", message="from before the migration")]],
    ids=["no-status", "stale-conditions"],
)
def test_an_oci_helmrepository_is_healthy_static_as_argo_cd_and_flux_say(
    conditions: list[dict[str, Any]],
) -> None:
    """docs/design.md §2 "Flux objects' health": Flux never reconciles it (static)."""
    obj = flux_object(
        "HelmRepository",
        observed=None,
        conditions=conditions,
        spec_extra={"type": "oci", "url": "oci://ghcr.io/x"},
    )

    verdict = flux.evaluate_flux_object(obj)

    assert verdict.health is Health.HEALTHY
    assert verdict.message.startswith(
        "static: Flux does not reconcile a HelmRepository of type oci"
    )


def test_a_suspended_oci_helmrepository_is_suspended() -> None:
    obj = flux_object("HelmRepository", suspend=True, spec_extra={"type": "oci"})

    assert flux.evaluate_flux_object(obj).health is Health.SUSPENDED


ROLLED_BACK = (
    "Helm rollback to previous release apps/podinfo.v24 with chart podinfo@6.5.4 succeeded"
)
RETRYING = condition("Reconciling", "True", reason="ProgressingWithRetry", message=ROLLED_BACK)
_ALL_FLUX_KINDS = [
    "HelmRelease",
    "Kustomization",
    "GitRepository",
    "HelmRepository",
    "OCIRepository",
    "HelmChart",
    "Bucket",
]


@pytest.mark.parametrize(
    ("kind", "conditions", "fragment"),
    [
        *(
            pytest.param(
                kind,
                [RETRYING, condition("Ready", "False", reason="RollbackSucceeded", message="x")],
                "retrying: Ready is False (RollbackSucceeded): x",
                id=f"{kind}-ready-false",
            )
            for kind in _ALL_FLUX_KINDS
        ),
        pytest.param(
            "Kustomization",
            [RETRYING, condition("Stalled", "True", reason="BuildFailed", message="bad")],
            "retrying: Stalled is True (BuildFailed): bad",
            id="stalled-true-without-ready",
        ),
        pytest.param(
            "Kustomization",
            [
                RETRYING,
                condition("Stalled", "True", reason="BuildFailed", message="bad"),
                condition("Ready", "Unknown", reason="Progressing", message="building"),
            ],
            "retrying: Stalled is True (BuildFailed), Ready is Unknown (Progressing): building",
            id="stalled-true-with-ready-unknown",
        ),
        pytest.param(
            "HelmRelease",
            [
                condition("Reconciling", "True", reason="Progressing", message="upgrading"),
                condition("Ready", "False", reason="UpgradeFailed", message=FAILED),
            ],
            f"Ready is False (UpgradeFailed): {FAILED}",
            id="ready-false-while-reconciling-is-still-degraded",
        ),
    ],
)
def test_ready_false_while_retrying_is_degraded_retrying(
    kind: str, conditions: list[dict[str, Any]], fragment: str
) -> None:
    verdict = flux.evaluate_flux_object(flux_object(kind, conditions=conditions))

    assert verdict.health is Health.DEGRADED
    assert verdict.message.startswith(fragment)


def test_upstream_degraded_helmrelease_fixture_is_degraded_retrying() -> None:
    """argo-cd resource_customizations/helm.toolkit.fluxcd.io/HelmRelease/testdata/degraded.yaml:
    an upgrade failed, was rolled back, and is being retried."""
    conditions = [
        RETRYING,
        condition("Ready", "False", reason="RollbackSucceeded", message=ROLLED_BACK),
        condition("Released", "False", reason="UpgradeFailed", message=FAILED),
        condition("Remediated", "True", reason="RollbackSucceeded", message=ROLLED_BACK),
    ]

    verdict = flux.evaluate_flux_object(flux_object("HelmRelease", conditions=conditions))

    assert verdict.health is Health.DEGRADED
    assert verdict.message == f"retrying: Ready is False (RollbackSucceeded): {ROLLED_BACK}"
