"""Reminders of forgotten pauses and suspends: when one is owed, when again, when it ends.

Pure tables over `bot.alerts.reminders` at a fake `now`: the root is the first reminder (at
`remind_after` exactly, not a second before), later ones are thread replies every
`remind_after`, a timed pause is never reminded of, 0 turns it off, a pause made by hand counts
from when it was first seen, and a pause no longer seen in a place listed in full ends.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.alerts import document, reminders
from bot.alerts import render_reminders as render
from bot.alerts.model import ClusterAlerts, EffectKind, NoteKind, Owed
from bot.alerts.reminders import ReminderPolicy, is_due, key_of, remind
from bot.rules.held import HeldObject

T0 = datetime(2026, 8, 24, 8, 0, tzinfo=UTC)
DAY = timedelta(hours=24)
POLICY = ReminderPolicy(DAY, "C0ALERTS")
KEDA_PLACES = [("ScaledJob", "annia"), ("ScaledObject", "annia")]
OURS = HeldObject(
    "paused", "ScaledJob", "annia", "annia-worker", "sim", "U0OPERATOR", "2026-08-24T08:00:00Z",
    "node drain",
)  # fmt: skip
BY_HAND = HeldObject("paused", "ScaledJob", "annia", "by-hand", "sim")
TIMED = replace(OURS, name="timed", until="2026-08-24T10:00:00Z")


@pytest.mark.parametrize(
    ("age", "after", "due"),
    [
        (DAY, DAY, True),
        (DAY - timedelta(seconds=1), DAY, False),
        (DAY * 3, DAY, True),
        (DAY * 3, timedelta(0), False),
    ],
    ids=["at-remind-after", "just-under", "long-past", "off"],
)
def test_a_reminder_is_due_at_remind_after_and_never_when_off(
    age: timedelta, after: timedelta, due: bool
) -> None:
    assert is_due(T0, T0 + age, after) is due


def kinds(owed: tuple[Owed, ...]) -> list[str]:
    return [o.kind.value + (f":{o.note.kind.value}" if o.note else "") for o in owed]


def sweep(
    state: ClusterAlerts, held: list[HeldObject], at: datetime, policy: ReminderPolicy = POLICY
) -> tuple[ClusterAlerts, list[str]]:
    """One sweep, then Slack takes every root (so the thread can go on)."""
    outcome = remind(state, held, KEDA_PLACES, at, policy)
    delivered = outcome.state
    for alert in outcome.state.reminders.values():
        if any(o.kind is EffectKind.ROOT for o in alert.outbox):
            delivered = delivered.with_alert(replace(alert, root_ts="1.000", outbox=()))
    return delivered, kinds(outcome.effects)


@pytest.mark.parametrize(
    ("held", "first", "owed"),
    [
        (OURS, T0 + DAY, ["root"]),
        (OURS, T0 + DAY - timedelta(seconds=1), []),
        (TIMED, T0 + DAY * 7, []),
        (replace(OURS, until="whenever"), T0 + DAY, ["root"]),
    ],
    ids=["our-pause-at-remind-after", "just-under", "timed-never", "until-not-a-time-is-no-end"],
)
def test_the_first_reminder_is_the_root_once_the_pause_is_remind_after_old(
    held: HeldObject, first: datetime, owed: list[str]
) -> None:
    _, effects = sweep(ClusterAlerts("sim"), [held], first)

    assert effects == owed


def test_remind_after_zero_reminds_of_nothing() -> None:
    _, effects = sweep(
        ClusterAlerts("sim"), [OURS], T0 + DAY * 30, ReminderPolicy(timedelta(0), "C")
    )

    assert effects == []


def test_a_pause_by_hand_counts_from_when_it_was_first_seen() -> None:
    seen_at = T0 + timedelta(hours=5)
    state, first = sweep(ClusterAlerts("sim"), [BY_HAND], seen_at)
    state, early = sweep(state, [BY_HAND], seen_at + DAY - timedelta(seconds=1))
    state, due = sweep(state, [BY_HAND], seen_at + DAY)

    assert (first, early, due) == ([], [], ["root"])
    assert reminders.since_of(state.reminders[key_of(BY_HAND)]) == seen_at


def test_again_every_remind_after_as_a_reply_in_the_thread() -> None:
    state, _ = sweep(ClusterAlerts("sim"), [OURS], T0 + DAY)
    state, early = sweep(state, [OURS], T0 + DAY * 2 - timedelta(seconds=1))
    state, again = sweep(state, [OURS], T0 + DAY * 2)
    state, third = sweep(state, [OURS], T0 + DAY * 3)

    assert (early, again, third) == ([], ["reply:reminder"], ["reply:reminder"])


def test_a_pause_no_longer_seen_ends_with_a_reply_and_an_edit_of_its_root() -> None:
    state, _ = sweep(ClusterAlerts("sim"), [OURS], T0 + DAY)

    state, effects = sweep(state, [], T0 + DAY + timedelta(hours=1))

    assert effects == ["reply:resolved", "edit"]
    assert state.reminders == {}
    (closing,) = state.closing
    assert [o.kind for o in closing.outbox][-1] is EffectKind.SWEEP


def test_a_pause_in_a_place_that_could_not_be_listed_does_not_end() -> None:
    state, _ = sweep(ClusterAlerts("sim"), [OURS], T0 + DAY)

    outcome = remind(state, [], [("ScaledObject", "annia")], T0 + DAY * 2, POLICY)

    assert outcome.effects == () and key_of(OURS) in outcome.state.reminders


def test_a_pause_never_reminded_of_ends_without_a_word() -> None:
    state, _ = sweep(ClusterAlerts("sim"), [BY_HAND], T0)

    state, effects = sweep(state, [], T0 + timedelta(hours=1))

    assert effects == [] and state.reminders == {} and state.closing == ()


def test_paused_again_by_someone_else_is_another_change_with_its_own_root() -> None:
    state, _ = sweep(ClusterAlerts("sim"), [OURS], T0 + DAY)
    again = replace(OURS, by="U0OTHER", at="2026-08-25T09:00:00Z")

    state, effects = sweep(state, [again], T0 + DAY + timedelta(hours=1))
    state, later = sweep(state, [again], T0 + DAY * 2 + timedelta(hours=1))

    assert (effects, later) == (["reply:resolved", "edit"], ["root"])
    assert state.reminders[key_of(again)].observation.by == "U0OTHER"


def test_reminders_survive_the_state_document_as_they_were() -> None:
    state, _ = sweep(ClusterAlerts("sim"), [OURS, BY_HAND], T0 + DAY)

    loaded = document.load_cluster("sim", document.dump_cluster(state))

    assert loaded.reminders == state.reminders
    assert loaded.alerts == {}


def test_the_root_names_who_why_and_since_and_has_no_buttons() -> None:
    state, _ = sweep(ClusterAlerts("sim"), [OURS], T0 + DAY + timedelta(minutes=5))
    alert = state.reminders[key_of(OURS)]

    root = render.root_message(alert, command="/kai")

    shown = str(root["blocks"])
    assert "Still paused, with no end" in shown and "ScaledJob annia/annia-worker" in shown
    assert "<@U0OPERATOR>" in shown and "node drain" in shown
    assert "*Since:* 2026-08-24 08:00:00 UTC" in shown
    assert "`/kai resume annia/annia-worker --cluster sim` ends it" in shown
    assert all(b["type"] != "actions" for b in root["blocks"])


def test_a_pause_by_hand_says_so_and_its_end_is_said_in_the_thread() -> None:
    state, _ = sweep(ClusterAlerts("sim"), [BY_HAND], T0)
    state, _ = sweep(state, [BY_HAND], T0 + DAY)
    alert = state.reminders[key_of(BY_HAND)]
    state, _ = sweep(state, [], T0 + DAY * 2)
    (ended,) = state.closing
    note = next(o.note for o in ended.outbox if o.note and o.note.kind is NoteKind.RESOLVED)

    assert "by hand, no record" in render.root_message(alert, command="/kai")["text"]
    assert "ended by 2026-08-26 08:00:00 UTC, after 2d" in render.reply_message(ended, note)["text"]
    assert "*Ended*" in str(render.root_message(ended, command="/kai")["blocks"])


def test_only_a_pause_by_hand_is_kept_before_it_is_due_to_remember_when_it_was_seen() -> None:
    state, _ = sweep(ClusterAlerts("sim"), [OURS, BY_HAND], T0 + timedelta(minutes=5))

    assert list(state.reminders) == [key_of(BY_HAND)]
    assert reminders.first_seen_by_hand([state]) == {
        ("sim", "ScaledJob", "annia", "by-hand"): T0 + timedelta(minutes=5)
    }


def test_the_next_reminder_is_due_at_its_own_time_not_at_the_next_sweep() -> None:
    """The sweep comes back when the soonest reminder falls due: ours `remind_after` after our
    record's time, one by hand `remind_after` after it was first seen, a later one
    `remind_after` after the last; a timed pause never; nothing when off."""
    hour = timedelta(hours=1)
    state, _ = sweep(ClusterAlerts("sim"), [OURS, BY_HAND, TIMED], T0 + hour)
    due = reminders.next_due(state, [OURS, BY_HAND, TIMED], KEDA_PLACES, DAY)
    assert due == T0 + DAY  # ours, recorded at T0; by hand first seen an hour later
    assert reminders.next_due(state, [BY_HAND], KEDA_PLACES, DAY) == T0 + hour + DAY
    assert reminders.next_due(state, [TIMED], KEDA_PLACES, DAY) is None
    assert reminders.next_due(state, [OURS], KEDA_PLACES, timedelta(0)) is None
    assert reminders.next_due(state, [OURS], [("ScaledObject", "annia")], DAY) is None

    reminded, _ = sweep(state, [OURS, BY_HAND], T0 + DAY)  # ours: its root, in Slack
    assert reminders.next_due(reminded, [OURS], KEDA_PLACES, DAY) == T0 + DAY * 2


def test_a_reminder_whose_root_is_not_in_slack_yet_names_no_reply_as_due() -> None:
    """Its root is what it owes (the drain sends it); the sweep need not come back for it."""
    fired = remind(ClusterAlerts("sim"), [OURS], KEDA_PLACES, T0 + DAY, POLICY).state
    assert reminders.next_due(fired, [OURS], KEDA_PLACES, DAY) is None
