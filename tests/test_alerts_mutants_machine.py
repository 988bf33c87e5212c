"""What each thread reply of an alert says, and when: the state machine against a fake clock.

Each reply carries a note (what happened, when, who, why, until when, whether the condition still
holds); the reply in Slack is rendered from it. These scripts pin every field of every note, the
channel a root goes to, the observation an alert shows, the reminder clock after a silence and
the "cannot check" error, so a wrong word or time in the thread cannot slip through.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.alerts import machine, outbox
from bot.alerts.machine import Outcome, Policy
from bot.alerts.model import (
    AlertKey,
    AlertState,
    ClusterAlerts,
    EffectKind,
    Note,
    NoteKind,
    Observation,
    Severity,
)
from bot.core import errors

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
HOLD, REPEAT = 60, 4 * 3600
POLICY = Policy(timedelta(seconds=HOLD), timedelta(seconds=REPEAT), 3, "C0ALERTS")
DEP = Observation(
    AlertKey("prod", "Config", "kai-config", "DependenciesFulfilled"),
    Severity.CRITICAL,
    "DependenciesFulfilled is False at generation 1",
    "dependencies_missing",
    "KAI-prometheus is missing prometheus operator",
)
UNREACHABLE = Observation(
    AlertKey("prod", "Cluster", "prod", "Reachable"),
    Severity.CRITICAL,
    "Cannot check cluster prod",
    "KubeUnavailable",
    "connection refused",
    immediate=True,
)
SILENCE_AT = 120
HOUR = 3600


def t(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def delivered(state: ClusterAlerts) -> ClusterAlerts:
    """Slack took everything owed (the drain's job), each message at a new ts."""
    posts = 0
    for alert in outbox.incidents(state):
        while (owed := outbox.head(state, alert.incident)) is not None:
            posts += 1
            state = outbox.adopted(state, alert.incident, owed.effect_id, "C0ALERTS", f"{posts}.0")
    return state


def step(state: ClusterAlerts, at: float, action: str) -> Outcome:
    verb, *args = action.split()
    now, alert_id = t(at), DEP.key.alert_id
    if verb == "bad":
        return machine.observe(state, [DEP], now, POLICY)
    if verb == "clear":
        return machine.observe(state, [], now, POLICY)
    if verb == "fail":
        return machine.check_failed(state, UNREACHABLE, now, POLICY)
    if verb == "ack":
        return machine.acknowledge(state, alert_id, args[0], now)
    if verb == "silence":
        hours = timedelta(hours=int(args[1].removesuffix("h")))
        return machine.silence(state, alert_id, args[0], hours, " ".join(args[2:]), now)
    if verb == "unsilence":
        return machine.unsilence(state, alert_id, args[0], now)
    raise AssertionError(f"unknown action {action}")


def play(steps: list[tuple[float, str]]) -> tuple[ClusterAlerts, Outcome]:
    """The state after every step delivered, and the last step's outcome."""
    state, outcome = ClusterAlerts("prod"), None
    for at, action in steps:
        outcome = step(state, at, action)
        state = delivered(outcome.state)
    assert outcome is not None
    return state, outcome


def notes(outcome: Outcome) -> list[Note]:
    return [o.note for o in outcome.effects if o.kind is EffectKind.REPLY and o.note is not None]


FIRED = [(0.0, "bad"), (HOLD, "bad")]
SILENCED = [*FIRED, (SILENCE_AT, "silence U2 1h node drain")]
EXPIRY = SILENCE_AT + HOUR

REPLIES = {
    "acknowledged: who and when": (
        [*FIRED, (90, "ack U1")],
        [Note(NoteKind.ACKNOWLEDGED, t(90), "U1")],
    ),
    "silenced: who, when, why and until when": (
        [*FIRED, (SILENCE_AT, "silence U2 2h node drain")],
        [Note(NoteKind.SILENCED, t(SILENCE_AT), "U2", "node drain", t(SILENCE_AT + 2 * HOUR))],
    ),
    "silence lifted while still bad": (
        [*SILENCED, (200, "unsilence U3")],
        [Note(NoteKind.UNSILENCED, t(200), "U3", still_bad=True)],
    ),
    "silence lifted once clear": (
        [*SILENCED, (150, "clear"), (200, "unsilence U3")],
        [Note(NoteKind.UNSILENCED, t(200), "U3", still_bad=False)],
    ),
    "silence expired while still bad: when it ended, whose it was": (
        [*SILENCED, (EXPIRY + 5, "bad")],
        [Note(NoteKind.SILENCE_EXPIRED, t(EXPIRY), "U2", still_bad=True)],
    ),
    "silence expired once clear": (
        [*SILENCED, (EXPIRY - 10, "clear"), (EXPIRY + 5, "clear")],
        [Note(NoteKind.SILENCE_EXPIRED, t(EXPIRY), "U2", still_bad=False)],
    ),
    "reminder: when": (
        [*FIRED, (HOLD + REPEAT, "bad")],
        [Note(NoteKind.REMINDER, t(HOLD + REPEAT))],
    ),
    "resolved: when": (
        [*FIRED, (100, "clear"), (100 + HOLD, "clear")],
        [Note(NoteKind.RESOLVED, t(100 + HOLD))],
    ),
}


@pytest.mark.parametrize(("steps", "expected"), list(REPLIES.values()), ids=list(REPLIES))
def test_each_thread_reply_says_what_happened_when_who_why_and_until_when(
    steps: list[tuple[float, str]], expected: list[Note]
) -> None:
    _, outcome = play(steps)
    assert notes(outcome) == expected


def test_the_root_names_when_and_by_whom_the_alert_was_acknowledged() -> None:
    state, _ = play([*FIRED, (90, "ack U1")])
    alert = state.alerts[DEP.key]
    assert (alert.acked_by, alert.acked_at) == ("U1", t(90))


@pytest.mark.parametrize(
    "duration", [timedelta(0), timedelta(seconds=-1)], ids=["zero", "negative"]
)
def test_a_silence_without_a_positive_duration_is_refused_with_an_example(
    duration: timedelta,
) -> None:
    state, _ = play(FIRED)
    with pytest.raises(errors.UserError) as refused:
        machine.silence(state, DEP.key.alert_id, "U2", duration, "why", t(90))
    assert str(refused.value) == "A silence needs a duration longer than zero, like 1h."


@pytest.mark.parametrize(
    "end",
    [[(3 * HOUR, "unsilence U3")], [(3 * HOUR, "bad")]],
    ids=["lifted", "expired"],
)
def test_once_a_silence_ends_the_alert_names_no_silencer_and_reminders_count_from_then(
    end: list[tuple[float, str]],
) -> None:
    state, _ = play([*FIRED, (SILENCE_AT, "silence U2 2h node drain"), *end])
    alert = state.alerts[DEP.key]
    assert (alert.silenced_by, alert.silenced_until, alert.silence_reason) == ("", None, "")
    # A reminder a repeat after firing would come 40 minutes after the silence ended: no.
    assert notes(step(state, HOLD + REPEAT + 1, "bad")) == []
    assert notes(step(state, 3 * HOUR + REPEAT, "bad")) == [
        Note(NoteKind.REMINDER, t(3 * HOUR + REPEAT))
    ]


def test_no_reminder_while_the_condition_is_clear_and_waits_out_its_hold() -> None:
    state, _ = play([*FIRED, (HOLD + REPEAT - 20, "clear")])
    outcome = step(state, HOLD + REPEAT + 10, "clear")  # clear for 30 s of the 60 s hold
    assert outcome.effects == ()
    assert DEP.key in outcome.state.alerts


def test_a_firing_root_goes_to_the_alert_channel() -> None:
    state = step(step(ClusterAlerts("prod"), 0, "bad").state, HOLD, "bad").state
    alert = state.alerts[DEP.key]
    assert alert.root_channel == "C0ALERTS"
    assert [o.kind for o in alert.outbox] == [EffectKind.ROOT]


def test_an_alert_shows_what_the_latest_check_saw() -> None:
    worse = replace(DEP, title="DependenciesFulfilled is False at generation 2", message="new")
    state, _ = play(FIRED)
    state = machine.observe(state, [worse], t(90), POLICY).state
    assert state.alerts[DEP.key].observation == worse
    pending = machine.observe(ClusterAlerts("prod"), [DEP], t(0), POLICY).state
    pending = machine.observe(pending, [worse], t(10), POLICY).state
    assert pending.alerts[DEP.key].observation == worse


def test_the_last_check_error_is_kept_while_checks_fail_and_forgotten_once_one_succeeds() -> None:
    state = step(ClusterAlerts("prod"), 0, "fail").state
    assert (state.failures, state.last_error) == (1, "connection refused")
    state = step(state, 30, "clear").state
    assert (state.failures, state.last_error) == (0, "")


def test_a_pending_cannot_check_alert_from_an_older_state_is_kept_below_the_threshold() -> None:
    pending = AlertState(UNREACHABLE, first_seen=t(0))
    state = ClusterAlerts("prod", {UNREACHABLE.key: pending})
    after = step(state, 10, "fail").state
    assert after.alerts == {UNREACHABLE.key: pending}
    assert after.failures == 1
