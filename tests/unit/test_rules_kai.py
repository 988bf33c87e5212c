"""KAI Config and SchedulingShard verdicts (docs/design.md §2), for both kinds, table-driven."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from objects import (
    DEPS_MISSING_MESSAGE,
    ROLLOUT_MESSAGE,
    condition,
    kai_conditions,
    kai_config,
    shard,
)

from bot.core.models import Health
from bot.rules import kai

KINDS: list[Callable[..., dict[str, Any]]] = [kai_config, shard]

CASES = [
    pytest.param(
        {"generation": 3, "conditions": kai_conditions(3)},
        Health.HEALTHY,
        "Deployed, Available and DependenciesFulfilled are True at generation 3",
        id="healthy",
    ),
    pytest.param({"generation": 1}, Health.PROGRESSING, "no status.conditions yet", id="no-status"),
    pytest.param(
        {"generation": 1, "status": {}},
        Health.PROGRESSING,
        "no status.conditions",
        id="empty-status",
    ),
    pytest.param(
        {"generation": 1, "conditions": []},
        Health.PROGRESSING,
        "no status.conditions",
        id="empty-conditions",
    ),
    pytest.param(
        {
            "generation": 3,
            "conditions": kai_conditions(
                3, Available=("False", ROLLOUT_MESSAGE), Ready=("False", "System not ready")
            ),
        },
        Health.PROGRESSING,
        f"Available is False at generation 3:\n{ROLLOUT_MESSAGE}",
        id="rollout-deployed-true-available-false",
    ),
    pytest.param(
        {
            "generation": 2,
            "conditions": kai_conditions(2, DependenciesFulfilled=("False", DEPS_MISSING_MESSAGE)),
        },
        Health.DEGRADED,
        f"DependenciesFulfilled is False at generation 2:{DEPS_MISSING_MESSAGE}",
        id="dependencies-missing",
    ),
    pytest.param(
        {"generation": 5, "conditions": kai_conditions(4)},
        Health.PROGRESSING,
        "conditions are from generation 4, object is at generation 5: "
        "the operator has not reconciled the change yet",
        id="stale-generation",
    ),
    pytest.param(
        {"generation": 3, "conditions": kai_conditions(3, Deployed=None)},
        Health.PROGRESSING,
        "no Deployed condition: the operator has not written it yet",
        id="missing-deployed",
    ),
    pytest.param(
        {
            "generation": 3,
            "conditions": kai_conditions(3, Available=("Unknown", "probe pending")),
        },
        Health.PROGRESSING,
        "Available is Unknown at generation 3: probe pending",
        id="available-unknown",
    ),
    pytest.param(
        {
            "generation": 3,
            "conditions": kai_conditions(
                3,
                Ready=None,
                Reconciling=condition(
                    "Reconciling",
                    "True",
                    3,
                    reason="reconciled",
                    message="Reconciliation completed successfully",
                ),
            ),
        },
        Health.HEALTHY,
        "are True at generation 3",
        id="old-version-no-ready-reconciling-stuck-true",
    ),
    pytest.param(
        {
            "generation": 5,
            "conditions": kai_conditions(
                5,
                DependenciesFulfilled=condition(
                    "DependenciesFulfilled",
                    "False",
                    4,
                    reason="dependencies_missing",
                    message=DEPS_MISSING_MESSAGE,
                ),
            ),
        },
        Health.PROGRESSING,
        "DependenciesFulfilled is from generation 4, object is at generation 5",
        id="dependencies-false-at-older-generation",
    ),
    pytest.param(
        {
            "generation": 3,
            "conditions": kai_conditions(
                3, Ready=("False", "System not ready"), Reconciling=("True", "in progress")
            ),
        },
        Health.HEALTHY,
        "are True at generation 3",
        id="ready-false-and-reconciling-true-are-ignored",
    ),
]


@pytest.mark.parametrize("build", KINDS, ids=["Config", "SchedulingShard"])
@pytest.mark.parametrize(("fields", "health", "message"), CASES)
def test_kai_object_verdict_follows_design_rules(
    build: Callable[..., dict[str, Any]], fields: dict[str, Any], health: Health, message: str
) -> None:
    verdict = kai.evaluate_kai_object(build(**fields))

    assert verdict.health is health
    assert message in verdict.message


def test_dependencies_false_message_is_kept_verbatim_with_its_leading_newline() -> None:
    config = kai_config(
        generation=2,
        conditions=kai_conditions(2, DependenciesFulfilled=("False", DEPS_MISSING_MESSAGE)),
    )

    verdict = kai.evaluate_kai_object(config)

    assert verdict.message.endswith(DEPS_MISSING_MESSAGE)
    assert verdict.message.splitlines()[1] == "KAI-prometheus is missing prometheus operator"
    assert kai.assess_kai_object(config).detail == DEPS_MISSING_MESSAGE


def test_verdict_names_the_object_without_a_namespace() -> None:
    verdict = kai.evaluate_kai_object(shard("gpu-a100", conditions=kai_conditions(3)))

    assert (verdict.kind, verdict.namespace, verdict.name) == ("SchedulingShard", None, "gpu-a100")


def test_several_conditions_not_true_are_all_named_with_their_messages() -> None:
    config = kai_config(
        generation=1,
        conditions=kai_conditions(
            1,
            Deployed=("False", "PodGrouper: not deployed\nBinder: not deployed"),
            Available=("False", ROLLOUT_MESSAGE),
        ),
    )

    verdict = kai.evaluate_kai_object(config)

    assert verdict.health is Health.PROGRESSING
    assert "Deployed is False, Available is False at generation 1" in verdict.message
    assert "PodGrouper: not deployed\nBinder: not deployed" in verdict.message
    assert ROLLOUT_MESSAGE in verdict.message


def test_a_reason_that_disagrees_with_the_status_is_not_trusted() -> None:
    # Deployed=False keeps reason "deployed": only the status counts.
    config = kai_config(
        generation=3,
        conditions=kai_conditions(
            3,
            Deployed=condition("Deployed", "False", 3, reason="deployed", message="Binder: no"),
        ),
    )

    assert kai.evaluate_kai_object(config).health is Health.PROGRESSING


def test_malformed_conditions_read_as_no_status_rather_than_crashing() -> None:
    config = kai_config(status={"conditions": "not-a-list"})

    assert kai.evaluate_kai_object(config).health is Health.PROGRESSING
