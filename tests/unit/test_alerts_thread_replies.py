"""What each thread reply of an alert says, and when: the state machine against a fake clock.

Each reply carries a note (what happened, when, who, why, until when, whether the condition still
holds); the reply in Slack is rendered from it. These scripts pin every field of every note, the
channel a root goes to, the observation an alert shows, the reminder clock after a silence and
the "cannot check" error, so a wrong word or time in the thread cannot slip through.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from test_alerts_machine import DEP, HOLD, POLICY, REPEAT, T0, UNREACHABLE, Script

from bot.alerts import machine, outbox
from bot.alerts.model import AlertState, ClusterAlerts, EffectKind, Note, NoteKind
from bot.core import errors

SILENCE_AT = 120
HOUR = 3600


def t(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def play(steps: list[tuple[float, str]]) -> tuple[Script, list[Note]]:
    """Every step delivered but the last; the notes of the replies the last step owes."""
    script = Script()
    *before, (at, action) = steps
    for earlier, done in before:
        script.run(int(earlier), done)
    script.run(int(at), action, deliver=False)
    return script, owed_notes(script.state)


def owed_notes(state: ClusterAlerts) -> list[Note]:
    return [
        o.note
        for alert in outbox.incidents(state)
        for o in alert.outbox
        if o.kind is EffectKind.REPLY and o.note is not None
    ]


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
    assert play(steps)[1] == expected


def test_the_root_names_when_and_by_whom_the_alert_was_acknowledged() -> None:
    script, _ = play([*FIRED, (90, "ack U1")])
    alert = script.state.alerts[DEP.key]
    assert (alert.acked_by, alert.acked_at) == ("U1", t(90))


@pytest.mark.parametrize(
    "duration", [timedelta(0), timedelta(seconds=-1)], ids=["zero", "negative"]
)
def test_a_silence_without_a_positive_duration_is_refused_with_an_example(
    duration: timedelta,
) -> None:
    script, _ = play(FIRED)
    with pytest.raises(errors.UserError) as refused:
        machine.silence(
            script.state, DEP.key.alert_id, "U2", duration, "why", t(90), command="/kai"
        )
    assert str(refused.value) == "A silence needs a duration longer than zero, like 1h."


@pytest.mark.parametrize(
    "end",
    [[(3 * HOUR, "unsilence U3")], [(3 * HOUR, "bad")]],
    ids=["lifted", "expired"],
)
def test_once_a_silence_ends_the_alert_names_no_silencer_and_reminders_count_from_then(
    end: list[tuple[float, str]],
) -> None:
    script, _ = play([*FIRED, (SILENCE_AT, "silence U2 2h node drain"), *end])
    script.deliver()
    alert = script.state.alerts[DEP.key]
    assert (alert.silenced_by, alert.silenced_until, alert.silence_reason) == ("", None, "")
    # A reminder a repeat after firing would come 40 minutes after the silence ended: no.
    assert script.run(HOLD + REPEAT + 1, "bad") == []
    assert script.run(3 * HOUR + REPEAT, "bad", deliver=False) == ["reply:reminder"]
    assert owed_notes(script.state) == [Note(NoteKind.REMINDER, t(3 * HOUR + REPEAT))]


def test_no_reminder_while_the_condition_is_clear_and_waits_out_its_hold() -> None:
    script, _ = play([*FIRED, (HOLD + REPEAT - 20, "clear")])
    assert script.run(HOLD + REPEAT + 10, "clear") == []  # clear for 30 s of the 60 s hold
    assert DEP.key in script.state.alerts


def test_a_firing_root_goes_to_the_alert_channel() -> None:
    script, _ = play(FIRED)
    alert = script.state.alerts[DEP.key]
    assert alert.root_channel == "C0ALERTS"
    # The root, then the diagnosis and what-changed replies the holder fills in once the root
    # is out.
    assert [o.kind for o in alert.outbox] == [EffectKind.ROOT, EffectKind.REPLY, EffectKind.REPLY]


def test_an_alert_shows_what_the_latest_check_saw() -> None:
    worse = replace(DEP, title="DependenciesFulfilled is False at generation 2", message="new")
    script, _ = play(FIRED)
    state = machine.observe(script.state, [worse], t(90), POLICY).state
    assert state.alerts[DEP.key].observation == worse
    pending = machine.observe(ClusterAlerts("prod"), [DEP], t(0), POLICY).state
    pending = machine.observe(pending, [worse], t(10), POLICY).state
    assert pending.alerts[DEP.key].observation == worse


def test_the_last_check_error_is_kept_while_checks_fail_and_forgotten_once_one_succeeds() -> None:
    script = Script()
    script.run(0, "fail")
    assert (script.state.failures, script.state.last_error) == (1, "connection refused")
    script.run(30, "clear")
    assert (script.state.failures, script.state.last_error) == (0, "")


def test_a_pending_cannot_check_alert_from_an_older_state_is_kept_below_the_threshold() -> None:
    pending = AlertState(UNREACHABLE, first_seen=t(0))
    state = ClusterAlerts("prod", {UNREACHABLE.key: pending})
    script = Script(state)
    assert script.run(10, "fail") == []
    assert script.state.alerts == {UNREACHABLE.key: pending}
    assert script.state.failures == 1
