"""The outbox bookkeeping, pure: attempts are fenced by their ID, and what a late poster learns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.alerts import machine as alerts
from bot.alerts import outbox, trouble
from bot.alerts.model import AlertKey, ClusterAlerts, Observation, Severity
from bot.alerts.outbox import Confirmation

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
DEP = Observation(
    AlertKey("prod", "Config", "kai-config", "DependenciesFulfilled"), Severity.CRITICAL, "bad"
)
POLICY = alerts.Policy(timedelta(0), timedelta(hours=4), 3, "C0ALERTS")


def fired() -> tuple[ClusterAlerts, str, str]:
    """A state owing a root, its incident and the root's effect ID."""
    state = alerts.observe(ClusterAlerts("prod"), [DEP], T0, POLICY).state
    [alert] = state.alerts.values()
    return state, alert.incident, alert.outbox[0].effect_id


def attempted(state: ClusterAlerts, incident: str, effect: str, attempt: str) -> ClusterAlerts:
    marked = outbox.attempted(state, incident, effect, attempt, f"replica-{attempt}", T0)
    assert marked is not None
    return marked


def test_the_attempt_named_by_the_entry_records_its_message() -> None:
    state, incident, root = fired()
    state = attempted(state, incident, root, "a")
    state, verdict = outbox.confirmed(state, incident, root, "a", "C0ALERTS", "1.1")
    assert verdict is Confirmation.RECORDED
    assert state.alerts[DEP.key].root_ts == "1.1"
    # next: the first replies (the diagnosis, what changed), still to be gathered
    diagnosis, changes = state.alerts[DEP.key].outbox
    assert diagnosis.effect_id == f"{incident}:1" and diagnosis.awaits_evidence
    assert changes.effect_id == f"{incident}:2" and changes.awaits_evidence


def test_a_poster_whose_attempt_was_replaced_records_nothing_while_the_other_is_under_way() -> None:
    state, incident, root = fired()
    state = attempted(attempted(state, incident, root, "a"), incident, root, "b")
    after, verdict = outbox.confirmed(state, incident, root, "a", "C0ALERTS", "1.1")
    assert verdict is Confirmation.CONTESTED
    assert after == state


@pytest.mark.parametrize(
    ("kept", "mine", "verdict"),
    [("1.2", "1.1", Confirmation.SUPERSEDED), ("1.1", "1.1", Confirmation.RECORDED)],
    ids=["another copy is kept: delete mine", "mine was found and adopted: keep it"],
)
def test_a_late_poster_learns_whether_its_copy_is_the_one_kept(
    kept: str, mine: str, verdict: Confirmation
) -> None:
    state, incident, root = fired()
    state = attempted(attempted(state, incident, root, "a"), incident, root, "b")
    state = outbox.adopted(state, incident, root, "C0ALERTS", kept)
    assert outbox.confirmed(state, incident, root, "a", "C0ALERTS", mine)[1] is verdict


def test_a_marked_attempt_on_an_entry_already_delivered_is_refused() -> None:
    state, incident, root = fired()
    state = outbox.adopted(state, incident, root, "C0ALERTS", "1.1")
    assert outbox.attempted(state, incident, root, "b", "replica-b", T0) is None


def test_the_sweep_deletes_every_copy_but_the_kept_ones_and_never_an_unknown_one() -> None:
    state, incident, root = fired()
    state = outbox.adopted(state, incident, root, "C0ALERTS", "1.1")
    acked = alerts.acknowledge(state, DEP.key.alert_id, "U1", T0, command="/kai").state
    reply = acked.alerts[DEP.key].outbox[0].effect_id
    acked = outbox.adopted(acked, incident, reply, "C0ALERTS", "1.5")
    found = {root: ["1.1", "1.3"], reply: ["1.5", "1.6"], f"{incident}:9": ["1.9"]}
    assert outbox.extra_copies(acked.alerts[DEP.key], found) == ["1.3", "1.6"]


def test_trouble_is_said_after_a_few_failures_and_its_end_after_a_cool_down() -> None:
    policy = trouble.TroublePolicy(failures=2, cool_down=timedelta(minutes=1))
    seen = trouble.Trouble()
    seen, due = trouble.failed(seen, T0, policy)
    assert not due
    seen, due = trouble.failed(seen, T0, policy)
    assert due
    seen, due = trouble.failed(seen, T0 + timedelta(minutes=1), policy)
    assert due  # the warning's post failed: not said yet, so still due
    seen = trouble.said(seen, T0 + timedelta(minutes=1), warning=True)
    seen, due = trouble.succeeded(seen, T0 + timedelta(minutes=2), policy)
    assert not due
    seen, due = trouble.failed(seen, T0 + timedelta(minutes=2, seconds=30), policy)
    assert not due  # an intermittent failure: the same trouble, said once an hour at most
    seen, due = trouble.succeeded(seen, T0 + timedelta(minutes=3), policy)
    seen, due = trouble.succeeded(seen, T0 + timedelta(minutes=4), policy)
    assert due
