"""Argo CD Application verdicts: its own health word, with the sync status in the message."""

from __future__ import annotations

import pytest
from objects import application

from bot.core.models import Health
from bot.rules import argocd


@pytest.mark.parametrize(
    ("word", "health"),
    [
        pytest.param("Healthy", Health.HEALTHY, id="Healthy"),
        pytest.param("Progressing", Health.PROGRESSING, id="Progressing"),
        pytest.param("Degraded", Health.DEGRADED, id="Degraded"),
        pytest.param("Suspended", Health.SUSPENDED, id="Suspended"),
        pytest.param("Missing", Health.DEGRADED, id="Missing-is-degraded-in-design-words"),
        pytest.param("Unknown", Health.UNKNOWN, id="Unknown"),
    ],
)
def test_application_health_is_taken_as_argo_cd_reports_it(word: str, health: Health) -> None:
    verdict = argocd.evaluate_application(application(word, "OutOfSync"))

    assert verdict.health is health
    assert verdict.message == f"Argo CD health {word}, sync OutOfSync"
    assert (verdict.namespace, verdict.name) == ("argocd", "checkout")


def test_health_message_follows_the_headline() -> None:
    verdict = argocd.evaluate_application(
        application("Degraded", "Synced", "Deployment checkout has timed out progressing.")
    )

    assert verdict.message == (
        "Argo CD health Degraded, sync Synced: Deployment checkout has timed out progressing."
    )


@pytest.mark.parametrize(
    ("word", "fragment"),
    [
        pytest.param(None, "Argo CD reports no health yet", id="absent"),
        pytest.param("Exploded", 'health "Exploded", which kai-chatops does not know', id="odd"),
    ],
)
def test_absent_or_unfamiliar_health_is_unknown(word: str | None, fragment: str) -> None:
    verdict = argocd.evaluate_application(application(word, None))

    assert verdict.health is Health.UNKNOWN
    assert fragment in verdict.message
    assert "sync not reported" in verdict.message
