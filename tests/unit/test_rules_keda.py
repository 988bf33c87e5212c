"""KEDA pause state (Go ParseBool on the annotations) and ScaledJob/ScaledObject verdicts."""

from __future__ import annotations

from typing import Any

import pytest
from objects import keda_conditions, keda_object

from bot.core.models import Health
from bot.rules import keda

PAUSED = "autoscaling.keda.sh/paused"
REPLICAS = "autoscaling.keda.sh/paused-replicas"


def build(
    kind: str, annotations: dict[str, str] | None = None, paused_condition: str | None = "False"
) -> dict[str, Any]:
    name, namespace = ("annia-worker", "annia") if kind == "ScaledJob" else ("checkout-api", "shop")
    return keda_object(
        kind,
        name,
        namespace,
        annotations=annotations,
        conditions=keda_conditions(kind, paused=paused_condition),
    )


NOT_GO_BOOL = "which is not a Go boolean: KEDA counts it as paused"

# annotations -> (ScaledJob paused, its note), (ScaledObject paused, its note)
PAUSE_TABLE = [
    pytest.param(None, (False, None), (False, None), id="no-annotations"),
    pytest.param({PAUSED: "true"}, (True, None), (True, None), id="true"),
    pytest.param({PAUSED: "True"}, (True, None), (True, None), id="True"),
    pytest.param({PAUSED: "1"}, (True, None), (True, None), id="1"),
    pytest.param({PAUSED: "false"}, (False, None), (False, None), id="false"),
    pytest.param(
        {PAUSED: "yes"},
        (True, f'{PAUSED} is "yes", {NOT_GO_BOOL}'),
        (True, f'{PAUSED} is "yes", {NOT_GO_BOOL}'),
        id="yes",
    ),
    pytest.param(
        {PAUSED: ""},
        (True, f"{PAUSED} is empty, {NOT_GO_BOOL}"),
        (True, f"{PAUSED} is empty, {NOT_GO_BOOL}"),
        id="empty-string",
    ),
    pytest.param(
        {REPLICAS: "0"},
        (False, f"{REPLICAS} is set, but a ScaledJob ignores it"),
        (True, None),
        id="paused-replicas-alone",
    ),
    pytest.param(
        {PAUSED: "false", REPLICAS: "5"},
        (False, f"{REPLICAS} is set, but a ScaledJob ignores it"),
        (True, f'{REPLICAS} pauses it although {PAUSED} is "false"'),
        id="paused-replicas-with-paused-false",
    ),
]


@pytest.mark.parametrize(("annotations", "job", "scaled_object"), PAUSE_TABLE)
@pytest.mark.parametrize("kind", ["ScaledJob", "ScaledObject"])
def test_pause_is_read_from_annotations_with_go_parsebool(
    kind: str,
    annotations: dict[str, str] | None,
    job: tuple[bool, str | None],
    scaled_object: tuple[bool, str | None],
) -> None:
    paused, note = job if kind == "ScaledJob" else scaled_object
    # The Paused condition agrees here; disagreement has its own tests below.
    obj = build(kind, annotations, paused_condition="True" if paused else "False")

    state = keda.read_pause_state(obj)
    verdict = keda.evaluate_keda_object(obj)

    assert state.paused is paused
    assert state.disagreement == note
    assert verdict.health is (Health.SUSPENDED if paused else Health.HEALTHY)
    assert note is None or note in verdict.message


def test_pause_state_keeps_annotation_values_as_written() -> None:
    state = keda.read_pause_state(build("ScaledObject", {PAUSED: "TRUE", REPLICAS: "0"}))

    assert (state.paused_value, state.paused_replicas) == ("TRUE", "0")


@pytest.mark.parametrize("kind", ["ScaledJob", "ScaledObject"])
def test_paused_annotation_with_condition_still_false_notes_keda_lagging(kind: str) -> None:
    obj = build(kind, {PAUSED: "true"}, paused_condition="False")

    state = keda.read_pause_state(obj)
    verdict = keda.evaluate_keda_object(obj)

    assert (state.paused, state.condition_paused) == (True, False)
    assert verdict.health is Health.SUSPENDED
    assert "Paused condition is still False" in verdict.message
    assert "KEDA has not caught up" in verdict.message


@pytest.mark.parametrize("kind", ["ScaledJob", "ScaledObject"])
def test_removed_annotation_with_condition_still_true_is_not_paused_and_says_so(kind: str) -> None:
    obj = build(kind, None, paused_condition="True")

    state = keda.read_pause_state(obj)
    verdict = keda.evaluate_keda_object(obj)

    assert (state.paused, state.condition_paused) == (False, True)
    assert verdict.health is Health.HEALTHY
    assert "Paused condition is still True" in verdict.message


def test_matching_annotation_and_condition_give_no_note() -> None:
    state = keda.read_pause_state(build("ScaledJob", {PAUSED: "true"}, paused_condition="True"))

    assert state.disagreement is None


def test_missing_paused_condition_reads_as_none_and_never_disagrees() -> None:
    state = keda.read_pause_state(build("ScaledJob", {PAUSED: "true"}, paused_condition=None))

    assert (state.condition_paused, state.disagreement) == (None, None)


def test_who_paused_and_until_when_are_read_and_shown() -> None:
    obj = build(
        "ScaledJob",
        {
            PAUSED: "true",
            "kai-chatops/paused-by": "U0123ABCD",
            "kai-chatops/paused-at": "2026-08-24T08:00:00Z",
            "kai-chatops/pause-reason": "node drain",
            "kai-chatops/pause-until": "2026-08-24T10:00:00Z",
        },
        paused_condition="True",
    )

    state = keda.read_pause_state(obj)
    message = keda.evaluate_keda_object(obj).message

    assert (state.paused_by, state.paused_at, state.reason, state.until) == (
        "U0123ABCD",
        "2026-08-24T08:00:00Z",
        "node drain",
        "2026-08-24T10:00:00Z",
    )
    assert message == (
        f'paused ({PAUSED}: "true") by U0123ABCD at 2026-08-24T08:00:00Z, '
        "resumes at 2026-08-24T10:00:00Z; reason: node drain"
    )


def test_one_direction_pause_keeps_autoscaling_and_explains_the_paused_condition() -> None:
    obj = build("ScaledObject", {"autoscaling.keda.sh/paused-scale-in": "true"}, "True")

    state = keda.read_pause_state(obj)
    verdict = keda.evaluate_keda_object(obj)

    assert state.paused is False and state.disagreement is None
    assert verdict.health is Health.HEALTHY
    assert "scale-in paused by annotation" in verdict.message


@pytest.mark.parametrize(
    ("kind", "conditions", "health", "fragment"),
    [
        pytest.param(
            "ScaledJob",
            keda_conditions("ScaledJob", ready="False"),
            Health.DEGRADED,
            "Ready is False (TriggerError): Triggers defined in ScaledJob",
            id="job-ready-false",
        ),
        pytest.param(
            "ScaledObject",
            keda_conditions(
                "ScaledObject",
                ready="False",
                ready_reason="ScaledObjectCheckFailed",
                ready_message="ScaledObject doesn't have correct triggers specification",
            ),
            Health.DEGRADED,
            "ScaledObject doesn't have correct triggers specification",
            id="object-ready-false",
        ),
        pytest.param(
            "ScaledJob",
            keda_conditions("ScaledJob", ready="Unknown"),
            Health.DEGRADED,
            "Ready is Unknown (PartialTriggerError)",
            id="job-ready-unknown-is-degraded",
        ),
        pytest.param(
            "ScaledObject",
            keda_conditions("ScaledObject", ready="Unknown"),
            Health.PROGRESSING,
            "Ready is Unknown",
            id="object-ready-unknown-is-progressing",
        ),
        pytest.param(
            "ScaledObject",
            keda_conditions("ScaledObject", fallback="True"),
            Health.DEGRADED,
            "Fallback is True",
            id="object-fallback-true",
        ),
        pytest.param(
            "ScaledJob",
            keda_conditions("ScaledJob", ready=None),
            Health.PROGRESSING,
            "no Ready condition yet",
            id="job-no-ready-yet",
        ),
        pytest.param(
            "ScaledObject",
            [],
            Health.PROGRESSING,
            "no Ready condition yet",
            id="object-no-conditions",
        ),
        pytest.param(
            "ScaledObject",
            keda_conditions("ScaledObject"),
            Health.HEALTHY,
            "Ready is True (ScaledObjectReady)",
            id="object-ready-true",
        ),
        pytest.param(
            "ScaledJob",
            keda_conditions("ScaledJob"),
            Health.HEALTHY,
            "Ready is True (ScaledJobReady)",
            id="job-ready-true",
        ),
    ],
)
def test_unpaused_verdict_follows_ready_and_fallback(
    kind: str, conditions: list[dict[str, Any]], health: Health, fragment: str
) -> None:
    verdict = keda.evaluate_keda_object(keda_object(kind, "w", "annia", conditions=conditions))

    assert verdict.health is health
    assert fragment in verdict.message


def test_a_paused_object_is_suspended_even_though_ready_is_true() -> None:
    obj = keda_object(
        "ScaledJob",
        "invoice-renderer",
        "billing",
        annotations={PAUSED: "true"},
        conditions=keda_conditions(
            "ScaledJob",
            paused="True",
            ready_message="ScaledJob is paused, skipping reconcile loop",
        ),
    )

    verdict = keda.evaluate_keda_object(obj)

    assert (verdict.namespace, verdict.name, verdict.health) == (
        "billing",
        "invoice-renderer",
        Health.SUSPENDED,
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        *[(value, True) for value in ("1", "t", "T", "TRUE", "true", "True")],
        *[(value, False) for value in ("0", "f", "F", "FALSE", "false", "False")],
        *[(value, None) for value in ("tRUE", "on", "yes", "", " true", "2")],
    ],
    ids=repr,
)
def test_parse_go_bool_matches_go_strconv(value: str, expected: bool | None) -> None:
    assert keda.parse_go_bool(value) is expected
