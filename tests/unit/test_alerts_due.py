"""When a cluster's alert state asks for its next check (`bot.alerts.due.next_look`): a pending
alert when its hold runs out, a clearing one when its cool-down does; nothing otherwise. The
states come from the machine itself, so the moments are the ones it acts at."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.alerts import machine as alerts
from bot.alerts.due import next_look
from bot.alerts.machine import Policy
from bot.alerts.model import AlertKey, ClusterAlerts, Observation, Severity

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
HOLD = timedelta(seconds=60)
POLICY = Policy(hold=HOLD, repeat=timedelta(hours=4), failures_before_alert=3, channel="C0")


def seen(name: str, *, immediate: bool = False) -> Observation:
    key = AlertKey("prod", "Deployment", name, "Available")
    return Observation(key, Severity.CRITICAL, f"{name} is not Available", immediate=immediate)


def after(script: list[tuple[int, list[Observation]]]) -> ClusterAlerts:
    """The state after checks at those seconds past T0 that saw those alerts."""
    state = ClusterAlerts("prod")
    for second, observed in script:
        state = alerts.observe(state, observed, T0 + timedelta(seconds=second), POLICY).state
    return state


A, B = seen("a"), seen("b")
CASES = [
    ("nothing seen", [(0, [])], None),
    ("pending: when its hold runs out", [(0, [A])], 60),
    ("the soonest of two pending", [(0, [A]), (10, [A, B])], 60),
    ("fired and still bad: nothing to wait for", [(0, [A]), (60, [A])], None),
    ("fired, then clear: when its cool-down runs out", [(0, [A]), (60, [A]), (90, [])], 150),
    ("immediate: fired at once, nothing to wait for", [(0, [seen("c", immediate=True)])], None),
    ("a flap inside the hold: forgotten", [(0, [A]), (30, [])], None),
]


@pytest.mark.parametrize(("name", "script", "expected"), CASES, ids=[c[0] for c in CASES])
def test_next_look(name: str, script: list[tuple[int, list[Observation]]], expected: int) -> None:
    want = None if expected is None else T0 + timedelta(seconds=expected)
    assert next_look(after(script), HOLD) == want
