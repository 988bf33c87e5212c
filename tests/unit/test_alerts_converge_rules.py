"""The bookkeeping behind a channel that converges to the alert state, pure.

An attempt's anchor (a Slack ts known before it was sent) survives later attempts and marks
where the root's copies begin; an answer that says "surely not applied" clears the attempt;
a closing incident leaves only after two sweeps in a row saw the channel agree, then is
remembered among the recently closed; a command redone after a store conflict changes nothing.
"""

from __future__ import annotations

from datetime import timedelta

from test_alerts_outbox_order import DEP, NO_HOLD, T0, deliver_all, t

from bot.alerts import machine, outbox
from bot.alerts.model import ClusterAlerts, EffectKind, NoteKind


def fired() -> ClusterAlerts:
    return machine.observe(ClusterAlerts("prod"), [DEP], T0, NO_HOLD).state


def incident(state: ClusterAlerts) -> str:
    return state.alerts[DEP.key].incident


def test_the_first_attempts_anchor_is_kept_through_later_attempts_and_on_the_incident() -> None:
    state = fired()
    root = f"{incident(state)}:0"
    once = outbox.attempted(state, incident(state), root, "a1", "r1", t(1), "1700000000.000100")
    assert once is not None
    twice = outbox.attempted(once, incident(once), root, "a2", "r2", t(2), "1700000099.000100")
    assert twice is not None
    alert = twice.alerts[DEP.key]
    # A slow copy of the first attempt is older than the second anchor: searches start earlier.
    assert (alert.outbox[0].attempt, alert.outbox[0].anchor) == ("a2", "1700000000.000100")
    assert alert.root_anchor == "1700000000.000100"


def test_a_surely_failed_attempt_is_cleared_so_the_next_try_posts_without_looking() -> None:
    state = fired()
    root = f"{incident(state)}:0"
    marked = outbox.attempted(state, incident(state), root, "a1", "r1", t(1), "1.000001")
    assert marked is not None
    cleared = outbox.unattempted(marked, incident(marked), root, "a1")
    head = outbox.head(cleared, incident(cleared))
    assert head is not None and not head.was_attempted and head.anchor == "1.000001"
    # Another replica's attempt meanwhile is not ours to clear.
    assert outbox.unattempted(marked, incident(marked), root, "a9") == marked


def closing() -> tuple[ClusterAlerts, str]:
    state = deliver_all(fired())
    resolved = machine.observe(state, [], t(10), NO_HOLD).state
    [alert] = resolved.closing
    owed = outbox.head(resolved, alert.incident)
    while owed is not None and owed.kind is not EffectKind.SWEEP:
        resolved = outbox.adopted(resolved, alert.incident, owed.effect_id, "C0ALERTS", "9.9")
        owed = outbox.head(resolved, alert.incident)
    return resolved, alert.incident


def test_a_closing_incident_leaves_only_after_two_sweeps_in_a_row_saw_the_channel_agree() -> None:
    state, where = closing()
    once = outbox.swept(state, where, agreed=True)
    assert [a.incident for a in once.closing] == [where]  # one agreeing look is not enough
    reset = outbox.swept(once, where, agreed=False)
    assert reset.closing[0].settled == 0  # a disagreeing look starts the count again
    again = outbox.swept(outbox.swept(reset, where, agreed=True), where, agreed=True)
    assert again.closing == ()
    assert [a.incident for a in again.recent] == [where]  # remembered for late answers


def test_a_sweep_only_counts_while_the_sweep_is_the_head() -> None:
    state = fired()
    assert outbox.swept(state, incident(state), agreed=True) == state


def test_a_command_redone_after_a_store_conflict_changes_nothing() -> None:
    state = deliver_all(fired())

    def silence(s: ClusterAlerts) -> machine.Transition:
        return machine.silence(
            s, DEP.key.alert_id, "U1", timedelta(hours=1), "drain", t(5), command="/kai"
        )

    first = machine.applied_once(state, DEP.key.alert_id, "cmd-1", silence)
    redone = machine.applied_once(first.state, DEP.key.alert_id, "cmd-1", silence)
    assert redone.state == first.state and redone.effects == ()
    other = machine.applied_once(first.state, DEP.key.alert_id, "cmd-2", silence)
    notes = [o.note.kind for o in other.state.alerts[DEP.key].outbox if o.note is not None]
    assert notes.count(NoteKind.SILENCED) == 2  # a second person's silence is its own
