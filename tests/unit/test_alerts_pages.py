"""What incidents owe PagerDuty (`bot.alerts.pages`), pure: which severities page, each event
once and in order, the trigger's wait for its thread, and what leaves the state when."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.alerts import document, pages
from bot.alerts import machine as alerts
from bot.alerts.model import (
    AlertKey,
    AlertState,
    ClusterAlerts,
    Observation,
    PageAction,
    Severity,
)

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
KEY = AlertKey("prod", "Config", "kai-config", "DependenciesFulfilled")
POLICY = alerts.Policy(timedelta(0), timedelta(hours=4), 3, "C0ALERTS")
CRITICAL = ("critical",)
TRIGGER, ACK, RESOLVE = PageAction.TRIGGER, PageAction.ACKNOWLEDGE, PageAction.RESOLVE


def fired(severity: Severity = Severity.CRITICAL, key: AlertKey = KEY) -> ClusterAlerts:
    """A state whose one incident fired (it owes its root)."""
    seen = Observation(key, severity, "DependenciesFulfilled is False")
    return alerts.observe(ClusterAlerts("prod"), [seen], T0, POLICY).state


def the_alert(state: ClusterAlerts) -> AlertState:
    (alert,) = [*state.alerts.values(), *state.closing]
    return alert


def acked(state: ClusterAlerts) -> ClusterAlerts:
    return alerts.acknowledge(state, the_alert(state).alert_id, "U1", T0, command="c1").state


def resolved(state: ClusterAlerts) -> ClusterAlerts:
    return alerts.observe(state, [], T0 + timedelta(minutes=5), POLICY).state


@pytest.mark.parametrize(
    ("severity", "listed", "owed"),
    [
        (Severity.CRITICAL, ("critical",), (TRIGGER,)),
        (Severity.WARNING, ("critical",), ()),
        (Severity.WARNING, ("critical", "warning"), (TRIGGER,)),
    ],
    ids=["critical listed: trigger", "warning not listed: nothing", "warning listed: trigger"],
)
def test_a_fired_incident_of_a_listed_severity_owes_a_trigger(
    severity: Severity, listed: tuple[str, ...], owed: tuple[PageAction, ...]
) -> None:
    assert the_alert(pages.owe_pages(fired(severity), listed)).pages == owed


def test_each_event_is_owed_once_and_in_the_order_of_the_incidents_life() -> None:
    state = pages.owe_pages(fired(), CRITICAL)
    assert pages.owe_pages(state, CRITICAL) == state  # a later save owes nothing again
    state = pages.owe_pages(acked(state), CRITICAL)
    state = pages.owe_pages(resolved(state), CRITICAL)
    alert = the_alert(state)
    assert alert.pages == (TRIGGER, ACK, RESOLVE) and alert.paged_to is RESOLVE


def test_an_incident_acknowledged_before_a_save_owes_its_trigger_first() -> None:
    state = pages.owe_pages(acked(fired()), CRITICAL)
    assert the_alert(state).pages == (TRIGGER, ACK)


def test_what_was_sent_is_not_owed_again_and_the_rest_follows() -> None:
    state = pages.owe_pages(fired(), CRITICAL)
    incident = the_alert(state).incident
    state = pages.sent(state, incident, TRIGGER)
    assert the_alert(state).pages == ()
    state = pages.owe_pages(acked(state), CRITICAL)
    assert the_alert(state).pages == (ACK,)


def test_a_record_of_an_event_that_is_not_the_head_changes_nothing() -> None:
    state = pages.owe_pages(acked(fired()), CRITICAL)
    assert pages.sent(state, the_alert(state).incident, ACK) == state


def test_an_incident_that_only_started_paging_after_it_resolved_pages_nothing() -> None:
    assert pages.owe_pages(resolved(fired()), CRITICAL) == resolved(fired())


def test_a_resolved_incident_stays_until_pagerduty_took_its_resolve_then_leaves() -> None:
    state = pages.owe_pages(resolved(pages.owe_pages(fired(), CRITICAL)), CRITICAL)
    closing = the_alert(state)
    state = replace(state, closing=(replace(closing, outbox=()),))  # Slack has had everything
    state = pages.sent(state, closing.incident, TRIGGER)
    assert state.closing and state.recent == ()
    state = pages.sent(state, closing.incident, RESOLVE)
    assert state.closing == () and [a.incident for a in state.recent] == [closing.incident]


def test_an_incident_a_fleet_incident_took_over_before_its_trigger_went_out_pages_not() -> None:
    state = pages.owe_pages(fired(), CRITICAL)
    taken = replace(the_alert(state), fleet="abc123", outbox=(), root_channel="")
    state = pages.owe_pages(state.with_alert(taken), CRITICAL)
    assert the_alert(state).pages == () and the_alert(state).paged_to is None


def test_a_reminder_of_a_forgotten_pause_is_no_page() -> None:
    reminder = AlertKey("prod", "ScaledJob", "annia/w", "paused without an end")
    state = fired(key=reminder)
    assert pages.owe_pages(state, CRITICAL) == state


@pytest.mark.parametrize(
    ("root_ts", "after", "due"),
    [("", 59, False), ("", 60, True), ("1.1", 0, True)],
    ids=["no thread yet: waits", "no thread after ROOT_WAIT: pages", "thread posted: pages"],
)
def test_a_trigger_waits_for_its_thread_only_root_wait(root_ts: str, after: int, due: bool) -> None:
    alert = replace(the_alert(pages.owe_pages(fired(), CRITICAL)), root_ts=root_ts)
    fired_at = alert.firing_since or alert.first_seen
    assert pages.is_due(alert, fired_at + timedelta(seconds=after)) is due


def test_what_is_owed_to_pagerduty_survives_the_store_document() -> None:
    state = pages.sent(pages.owe_pages(acked(fired()), CRITICAL), "unknown", TRIGGER)
    loaded = document.load_cluster("prod", document.dump_cluster(state))
    assert the_alert(loaded).pages == (TRIGGER, ACK) and the_alert(loaded).paged_to is ACK
