"""What is owed to Slack, in which order, and what a poster learns: the outbox and trouble, pure.

The outbox keeps each incident's effects in order until Slack confirmed them, numbers them so
every one has its own ID, records where the root landed, remembers the latest replies to fence
late posters, drains resolved incidents oldest first, and keeps channel notices apart. Trouble
decides when a fault outside any alert is said, said again, and said to be over.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.alerts import machine, outbox, trouble
from bot.alerts.model import (
    AlertKey,
    AlertState,
    ClusterAlerts,
    EffectKind,
    Note,
    NoteKind,
    Observation,
    Owed,
    Severity,
)
from bot.alerts.outbox import NOTICES, Confirmation

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
DEP = Observation(
    AlertKey("prod", "Config", "kai-config", "DependenciesFulfilled"), Severity.CRITICAL, "bad"
)
OTHER = Observation(
    AlertKey("prod", "APIService", "v1beta1.external.metrics.k8s.io", "Available"),
    Severity.CRITICAL,
    "also bad",
)
NO_HOLD = machine.Policy(timedelta(0), timedelta(hours=4), 3, "C0ALERTS")


def t(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def owing_root_reply_and_edit() -> tuple[ClusterAlerts, AlertState]:
    """Fired (root not yet posted) and acknowledged: root, diagnosis, what changed, reply, edit
    owed in that order."""
    state = machine.observe(ClusterAlerts("prod"), [DEP], T0, NO_HOLD).state
    state = machine.acknowledge(state, DEP.key.alert_id, "U1", t(5), command="/kai").state
    return state, state.alerts[DEP.key]


def deliver_all(state: ClusterAlerts) -> ClusterAlerts:
    for alert in outbox.incidents(state):
        while (owed := outbox.head(state, alert.incident)) is not None:
            state = outbox.adopted(state, alert.incident, owed.effect_id, "C0ALERTS", "9.9")
    return state


def test_delivering_the_head_leaves_the_rest_owed_in_order() -> None:
    state, alert = owing_root_reply_and_edit()
    root, diagnosis, changes, reply, edit = alert.outbox
    after = outbox.adopted(state, alert.incident, root.effect_id, "C0ALERTS", "1.1")
    assert after.alerts[DEP.key].outbox == (diagnosis, changes, reply, edit)
    after = outbox.adopted(after, alert.incident, diagnosis.effect_id, "C0ALERTS", "1.2")
    after = outbox.adopted(after, alert.incident, changes.effect_id, "C0ALERTS", "1.25")
    after = outbox.adopted(after, alert.incident, reply.effect_id, "C0ALERTS", "1.3")
    assert after.alerts[DEP.key].outbox == (edit,)


def test_marking_an_attempt_records_who_and_since_when_and_keeps_the_rest_owed() -> None:
    state, alert = owing_root_reply_and_edit()
    root, *after_root = alert.outbox
    marked = outbox.attempted(state, alert.incident, root.effect_id, "a1", "replica-a", t(7))
    assert marked is not None
    head, *rest = marked.alerts[DEP.key].outbox
    assert (head.attempt, head.attempted_by, head.attempted_at) == ("a1", "replica-a", t(7))
    assert rest == after_root


@pytest.mark.parametrize("record", ["adopted", "confirmed"])
def test_the_root_is_recorded_where_slack_says_it_landed(record: str) -> None:
    state, alert = owing_root_reply_and_edit()
    root = alert.outbox[0]
    if record == "adopted":
        state = outbox.adopted(state, alert.incident, root.effect_id, "C0REAL", "1.1")
    else:
        marked = outbox.attempted(state, alert.incident, root.effect_id, "a1", "replica-a", T0)
        assert marked is not None
        state, verdict = outbox.confirmed(
            marked, alert.incident, root.effect_id, "a1", "C0REAL", "1.1"
        )
        assert verdict is Confirmation.RECORDED
    assert (state.alerts[DEP.key].root_channel, state.alerts[DEP.key].root_ts) == ("C0REAL", "1.1")


def test_a_copy_found_of_something_that_is_not_the_head_changes_nothing() -> None:
    state, alert = owing_root_reply_and_edit()
    root, _, _, reply, _ = alert.outbox
    assert outbox.adopted(state, alert.incident, reply.effect_id, "C0ALERTS", "1.2") == state
    done = outbox.adopted(state, alert.incident, root.effect_id, "C0ALERTS", "1.1")
    assert outbox.adopted(done, alert.incident, root.effect_id, "C0ALERTS", "1.5") == done
    last = deliver_all(done)
    assert outbox.adopted(last, alert.incident, reply.effect_id, "C0ALERTS", "1.6") == last


def test_dropping_gives_up_only_the_head_and_a_resolved_incident_then_leaves() -> None:
    state, alert = owing_root_reply_and_edit()
    root, *after_root = alert.outbox
    assert outbox.dropped(state, alert.incident, after_root[2].effect_id) == state  # not the head
    state = outbox.dropped(state, alert.incident, root.effect_id)
    assert state.alerts[DEP.key].outbox == tuple(after_root)

    fired = deliver_all(machine.observe(ClusterAlerts("prod"), [DEP], T0, NO_HOLD).state)
    resolved = machine.observe(fired, [], t(10), NO_HOLD).state
    [closing] = resolved.closing
    for owed in closing.outbox:  # the reply, the edit of a root someone deleted, the sweep
        resolved = outbox.dropped(resolved, closing.incident, owed.effect_id)
    assert resolved.closing == ()
    assert outbox.dropped(resolved, closing.incident, "gone") == resolved


def test_every_reply_of_an_incident_gets_the_next_number() -> None:
    _, alert = owing_root_reply_and_edit()
    for second in (10, 20):
        alert = outbox.owe(alert, EffectKind.REPLY, Note(NoteKind.REMINDER, t(second)))
    numbers = [o.effect_id.rsplit(":", 1)[1] for o in alert.outbox]
    assert numbers == ["0", "1", "2", "3", "edit", "4", "5"]
    assert alert.owed_count == 6


def test_the_latest_replies_are_remembered_to_fence_late_posters_and_no_more() -> None:
    state = deliver_all(machine.observe(ClusterAlerts("prod"), [DEP], T0, NO_HOLD).state)
    ids = []
    for n in range(outbox.DELIVERED_KEPT + 10):
        alert = outbox.owe(state.alerts[DEP.key], EffectKind.REPLY, Note(NoteKind.REMINDER, T0))
        state = state.with_alert(alert)
        ids.append(alert.outbox[-1].effect_id)
        state = outbox.adopted(state, alert.incident, ids[-1], "C0ALERTS", f"2.{n}")
    alert = state.alerts[DEP.key]
    assert list(alert.delivered) == ids[-outbox.DELIVERED_KEPT :]

    def late(effect_id: str) -> Confirmation:
        return outbox.confirmed(state, alert.incident, effect_id, "old", "C0ALERTS", "3.0")[1]

    assert late(ids[-1]) is Confirmation.SUPERSEDED  # another copy is kept: delete this one
    assert late(ids[-outbox.DELIVERED_KEPT]) is Confirmation.SUPERSEDED
    assert late(ids[0]) is Confirmation.RECORDED  # forgotten: never delete what may be the only
    assert late(f"{alert.incident}:0") is Confirmation.SUPERSEDED  # the root is always known


def test_a_late_poster_whose_incident_closed_meanwhile_deletes_its_copy() -> None:
    # A deposed replica's reply answered after the new holder delivered it and closed the
    # incident: the closed incident is remembered, so the late copy is known to be extra.
    fired = deliver_all(machine.observe(ClusterAlerts("prod"), [DEP], T0, NO_HOLD).state)
    incident = fired.alerts[DEP.key].incident
    gone = deliver_all(machine.observe(fired, [], t(10), NO_HOLD).state)
    assert gone.closing == () and gone.alerts == {}
    assert [a.incident for a in gone.recent] == [incident]
    after, verdict = outbox.confirmed(gone, incident, f"{incident}:1", "a1", "C0ALERTS", "3.0")
    assert (after, verdict) == (gone, Confirmation.SUPERSEDED)
    kept = outbox.confirmed(gone, incident, f"{incident}:1", "a1", "C0ALERTS", "9.9")[1]
    assert kept is Confirmation.RECORDED  # its copy is the one the new holder adopted


def test_a_late_poster_whose_incident_is_forgotten_keeps_its_copy() -> None:
    state = deliver_all(machine.observe(ClusterAlerts("prod"), [DEP], T0, NO_HOLD).state)
    first = state.alerts[DEP.key].incident
    for n in range(outbox.RECENT_KEPT + 1):  # fire and resolve until the first is forgotten
        state = deliver_all(machine.observe(state, [], t(10 + 20 * n), NO_HOLD).state)
        state = deliver_all(machine.observe(state, [DEP], t(20 + 20 * n), NO_HOLD).state)
    assert len(state.recent) == outbox.RECENT_KEPT
    assert first not in [a.incident for a in state.recent]
    verdict = outbox.confirmed(state, first, f"{first}:1", "a1", "C0ALERTS", "3.0")[1]
    assert verdict is Confirmation.RECORDED  # never delete what may be the only copy


def test_resolved_incidents_are_drained_oldest_first_whatever_was_delivered_last() -> None:
    state = machine.observe(ClusterAlerts("prod"), [DEP], T0, NO_HOLD).state
    state = deliver_all(machine.observe(state, [DEP, OTHER], t(10), NO_HOLD).state)
    state = machine.observe(state, [], t(20), NO_HOLD).state
    first, second = outbox.incidents(state)
    assert (first.key, second.key) == (DEP.key, OTHER.key)
    reply = outbox.head(state, first.incident)
    assert reply is not None
    state = outbox.adopted(state, first.incident, reply.effect_id, "C0ALERTS", "4.0")
    assert [a.key for a in outbox.incidents(state)] == [DEP.key, OTHER.key]
    assert [a.key for a in state.closing] == [DEP.key, OTHER.key]


def test_channel_notices_are_owed_once_each_in_order_and_delivered_apart_from_alerts() -> None:
    state, _ = owing_root_reply_and_edit()
    state = outbox.owe_notice(state, "prod:damaged:1", "State was damaged; kept aside.")
    state = outbox.owe_notice(state, "prod:damaged:1", "said twice")
    state = outbox.owe_notice(state, "prod:damaged:2", "Damaged again.")
    assert state.notices == (
        Owed("prod:damaged:1", EffectKind.NOTICE, text="State was damaged; kept aside."),
        Owed("prod:damaged:2", EffectKind.NOTICE, text="Damaged again."),
    )
    marked = outbox.attempted(state, NOTICES, "prod:damaged:1", "a1", "replica-a", T0)
    assert marked is not None
    after, verdict = outbox.confirmed(marked, NOTICES, "prod:damaged:1", "a1", "C0ALERTS", "5.0")
    assert verdict is Confirmation.RECORDED
    assert after.notices == state.notices[1:]
    after = outbox.adopted(after, NOTICES, "prod:damaged:2", "C0ALERTS", "5.1")
    assert after.notices == ()
    assert after.alerts == state.alerts  # the alert still owes its own, untouched


# --- trouble: a fault outside any alert ---------------------------------------------------------

POLICY = trouble.TroublePolicy(failures=2, cool_down=timedelta(minutes=5))
Event = tuple[float, str, bool]  # minute, what happened, whether something is due to be said

TROUBLES: dict[str, list[Event]] = {
    "a lasting fault is said again once an hour, not at every failure": [
        (0, "fail", False),
        (1, "fail", True),
        (1, "said warning", False),
        (2, "fail", False),
        (60.9, "fail", False),
        (61, "fail", True),
    ],
    "a failure during the cool-down starts it again": [
        (0, "fail", False),
        (1, "fail", True),
        (1, "said warning", False),
        (2, "ok", False),
        (4, "fail", False),
        (6, "ok", False),
        (8, "ok", False),
        (11, "ok", True),
    ],
    "a new fault right after the all-clear is said at its threshold": [
        (0, "fail", False),
        (1, "fail", True),
        (1, "said warning", False),
        (2, "ok", False),
        (7, "ok", True),
        (7, "said recovery", False),
        (8, "fail", False),
        (9, "fail", True),
    ],
    "after an all-clear Slack did not take, one failure is not a new warning": [
        (0, "fail", False),
        (1, "fail", True),
        (1, "said warning", False),
        (70, "ok", False),
        (75, "ok", True),
        (80, "fail", False),
        (81, "fail", True),
    ],
}


@pytest.mark.parametrize("events", list(TROUBLES.values()), ids=list(TROUBLES))
def test_when_trouble_is_said_again_and_when_its_end_is_said(events: list[Event]) -> None:
    seen = trouble.Trouble()
    for minute, what, due in events:
        now = T0 + timedelta(minutes=minute)
        said = False
        if what == "fail":
            seen, said = trouble.failed(seen, now, POLICY)
        elif what == "ok":
            seen, said = trouble.succeeded(seen, now, POLICY)
        else:
            seen = trouble.said(seen, now, warning=what == "said warning")
        assert said is due, f"at minute {minute}: {what}"
