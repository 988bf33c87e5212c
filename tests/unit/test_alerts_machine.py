"""The alert state machine against a fake clock: what is owed to Slack, when, and what is not.

Each table row is a script of checks and commands at seconds after T0, with the effects each
step must owe (`root`, `reply:<kind>`, `edit`); the script itself plays Slack, delivering every
outbox after each step (the drain's job), unless a test holds delivery back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.alerts import machine as alerts
from bot.alerts import outbox
from bot.alerts.machine import Policy, Transition
from bot.alerts.model import (
    AlertKey,
    ClusterAlerts,
    EffectKind,
    Observation,
    Owed,
    Phase,
    Severity,
)
from bot.core import errors

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
HOLD, REPEAT = 60, 4 * 3600
POLICY = Policy(
    hold=timedelta(seconds=HOLD),
    repeat=timedelta(seconds=REPEAT),
    failures_before_alert=3,
    channel="C0ALERTS",
)
DEP = Observation(
    AlertKey("prod", "Config", "kai-config", "DependenciesFulfilled"),
    Severity.CRITICAL,
    "DependenciesFulfilled is False at generation 1",
    "dependencies_missing",
    "\nKAI-prometheus is missing prometheus operator",
)
UNREACHABLE = Observation(
    AlertKey("prod", "Cluster", "prod", "Reachable"),
    Severity.CRITICAL,
    "Cannot check cluster prod",
    "KubeUnavailable",
    "connection refused",
    immediate=True,
)
FIRED = [(0, "bad", []), (HOLD, "bad", ["root", "reply:diagnosis", "reply:changes"])]


@dataclass
class Script:
    """Runs steps against the machine, then plays Slack: every outbox delivered in order."""

    state: ClusterAlerts = field(default_factory=lambda: ClusterAlerts("prod"))
    roots: list[str] = field(default_factory=list)
    posts: int = 0
    policy: Policy = POLICY

    def run(self, at: int, action: str, *, deliver: bool = True) -> list[str]:
        now = T0 + timedelta(seconds=at)
        outcome = self._step(action, now)
        self.state = outcome.state
        described = [_describe(outcome.state, e) for e in outcome.effects]
        if deliver:
            self.deliver()
        return described

    def deliver(self) -> None:
        for alert in outbox.incidents(self.state):
            while (owed := outbox.head(self.state, alert.incident)) is not None:
                if owed.awaits_evidence:  # the desk's part: gather it
                    words = ("diagnosis", [{"type": "section"}])
                    self.state = outbox.gathered(self.state, alert.incident, owed.effect_id, *words)
                    continue
                self.posts += 1
                ts = f"ts{self.posts}"
                if owed.kind is EffectKind.ROOT:
                    self.roots.append(ts)
                self.state = outbox.adopted(self.state, alert.incident, owed.effect_id, "C0", ts)

    def _step(self, action: str, now: datetime) -> Transition:
        verb, *args = action.split()
        if verb == "bad":
            return alerts.observe(self.state, [DEP], now, self.policy)
        if verb == "clear":
            return alerts.observe(self.state, [], now, self.policy)
        if verb == "fail":
            return alerts.check_failed(self.state, UNREACHABLE, now, self.policy)
        alert_id = DEP.key.alert_id
        if verb == "ack":
            return alerts.acknowledge(self.state, alert_id, args[0], now, command="/kai")
        if verb == "silence":
            hours = timedelta(hours=int(args[1].removesuffix("h")))
            return alerts.silence(
                self.state, alert_id, args[0], hours, " ".join(args[2:]), now, command="/kai"
            )
        if verb == "unsilence":
            return alerts.unsilence(self.state, alert_id, args[0], now, command="/kai")
        raise AssertionError(f"unknown action {action}")

    def phase(self) -> Phase | None:
        alert = self.state.alerts.get(DEP.key)
        return alert.phase if alert else None


def _describe(state: ClusterAlerts, owed: Owed) -> str:
    if owed.kind is EffectKind.ROOT:
        return "root"
    if owed.kind is EffectKind.REPLY and owed.note is not None:
        return f"reply:{owed.note.kind.value}"
    incident = owed.effect_id.rsplit(":", 1)[0]
    alert = outbox.find_incident(state, incident)
    return "edit:resolved" if alert is not None and alert.resolved_at else "edit"


SILENCE_START = 120
SILENCE_END = SILENCE_START + 3600

SCRIPTS = {
    "a flap inside hold posts nothing": (
        [(0, "bad", []), (30, "clear", []), (40, "bad", []), (90, "clear", []), (500, "clear", [])],
        None,
    ),
    "a condition that holds for hold fires once, with one root": (
        [*FIRED, (90, "bad", []), (600, "bad", [])],
        Phase.FIRING,
    ),
    "reminders come every repeat while neither acknowledged nor silenced": (
        [
            *FIRED,
            (HOLD + REPEAT - 1, "bad", []),
            (HOLD + REPEAT, "bad", ["reply:reminder"]),
            (HOLD + 2 * REPEAT - 1, "bad", []),
            (HOLD + 2 * REPEAT, "bad", ["reply:reminder"]),
        ],
        Phase.FIRING,
    ),
    "acknowledging says who in the thread and stops the reminders": (
        [
            *FIRED,
            (90, "ack U0ONCALL", ["reply:acknowledged", "edit"]),
            (HOLD + REPEAT, "bad", []),
            (HOLD + 3 * REPEAT, "bad", []),
        ],
        Phase.ACKNOWLEDGED,
    ),
    "a silence mutes reminders, expires by itself and the alert fires again in its thread": (
        [
            *FIRED,
            (SILENCE_START, "silence U0ONCALL 1h node drain", ["reply:silenced", "edit"]),
            (SILENCE_END - 1, "bad", []),
            (SILENCE_END, "bad", ["reply:silence expired", "edit"]),
            (SILENCE_END + REPEAT - 1, "bad", []),
            (SILENCE_END + REPEAT, "bad", ["reply:reminder"]),
        ],
        Phase.FIRING,
    ),
    "a silence lifted by hand fires again at once": (
        [
            *FIRED,
            (SILENCE_START, "silence U0ONCALL 4h", ["reply:silenced", "edit"]),
            (SILENCE_START + 60, "unsilence U0ONCALL", ["reply:unsilenced", "edit"]),
        ],
        Phase.FIRING,
    ),
    "an alert resolves while silenced, in its thread, and the root is edited": (
        [
            *FIRED,
            (SILENCE_START, "silence U0ONCALL 1h", ["reply:silenced", "edit"]),
            (200, "clear", []),
            (200 + HOLD - 1, "clear", []),
            (200 + HOLD, "clear", ["reply:resolved", "edit:resolved"]),
        ],
        None,
    ),
    "an alert resolves while acknowledged": (
        [
            *FIRED,
            (90, "ack U0ONCALL", ["reply:acknowledged", "edit"]),
            (200, "clear", []),
            (200 + HOLD, "clear", ["reply:resolved", "edit:resolved"]),
        ],
        None,
    ),
    "a flap while firing neither resolves nor posts": (
        [*FIRED, (100, "clear", []), (130, "bad", []), (170, "clear", []), (229, "clear", [])],
        Phase.FIRING,
    ),
    "a silence ending while the condition is clear says so and the alert still resolves": (
        [
            *FIRED,
            (SILENCE_START, "silence U0ONCALL 1h", ["reply:silenced", "edit"]),
            (SILENCE_END - 30, "clear", []),
            (SILENCE_END, "clear", ["reply:silence expired", "edit"]),
            (SILENCE_END + 30, "clear", ["reply:resolved", "edit:resolved"]),
        ],
        None,
    ),
    "a firing after a resolution is a new incident with a new root": (
        [
            *FIRED,
            (100, "clear", []),
            (160, "clear", ["reply:resolved", "edit:resolved"]),
            (300, "bad", []),
            (300 + HOLD, "bad", ["root", "reply:diagnosis", "reply:changes"]),
        ],
        Phase.FIRING,
    ),
    "check failures post one cannot-check alert after three, resolved when checks succeed": (
        [
            *FIRED,
            (100, "fail", []),
            (130, "fail", []),
            (160, "fail", ["root"]),
            (190, "fail", []),
            (HOLD + REPEAT, "fail", []),  # the real alert's reminder waits for a real check
            (160 + REPEAT, "fail", ["reply:reminder"]),  # the cannot-check alert's own
            (160 + REPEAT + 30, "bad", ["reply:reminder"]),  # checks work: the cool-down starts
            (160 + REPEAT + 30 + HOLD, "bad", ["reply:resolved", "edit:resolved"]),
        ],
        Phase.FIRING,
    ),
    "intermittent check failures (3 in 4 failing) are one cannot-check incident": (
        [
            (0, "fail", []),
            (30, "fail", []),
            (60, "fail", ["root"]),
            (90, "clear", []),
            (120, "fail", []),
            (150, "fail", []),
            (180, "fail", []),
            (210, "clear", []),
            (240, "fail", []),
            (270, "clear", []),
            (300, "clear", []),
            (330, "clear", ["reply:resolved", "edit:resolved"]),
        ],
        None,
    ),
    "a gap in the checks never resolves a real alert: its clear run starts again after": (
        [
            *FIRED,
            (100, "clear", []),
            (130, "fail", []),
            (170, "clear", []),
            (229, "clear", []),
            (230, "clear", ["reply:resolved", "edit:resolved"]),
        ],
        None,
    ),
    "a pending alert neither fires nor vanishes during a gap": (
        [
            (0, "bad", []),
            (30, "fail", []),
            (HOLD, "bad", ["root", "reply:diagnosis", "reply:changes"]),
        ],
        Phase.FIRING,
    ),
}


@pytest.mark.parametrize(("steps", "final"), list(SCRIPTS.values()), ids=list(SCRIPTS))
def test_alert_scripts(steps: list[tuple[int, str, list[str]]], final: Phase | None) -> None:
    script = Script()
    for at, action, expected in steps:
        assert script.run(at, action) == expected, f"at {at}s: {action}"
    assert script.phase() == final


def test_a_refiring_alert_gets_a_second_root_and_the_first_stays_resolved() -> None:
    script = Script()
    for at, action, _ in SCRIPTS["a firing after a resolution is a new incident with a new root"][
        0
    ]:
        script.run(at, action)
    first, second = script.roots
    assert first != second
    assert script.state.alerts[DEP.key].root_ts == second


def test_the_cannot_check_alert_resolves_after_a_cool_down_and_the_counter_restarts() -> None:
    script = Script()
    for at in (0, 30, 60):
        script.run(at, "fail")
    assert script.state.failures == 3
    assert script.state.alerts[UNREACHABLE.key].phase is Phase.FIRING
    assert script.run(90, "clear") == []
    assert script.state.failures == 0
    assert script.run(90 + HOLD, "clear") == ["reply:resolved", "edit:resolved"]
    assert script.state.alerts == {}
    assert script.state.closing == ()  # delivered: the incident left the state


def test_who_silenced_until_when_and_why_is_kept_on_the_alert() -> None:
    script = Script()
    for at, action, _ in FIRED:
        script.run(at, action)
    script.run(SILENCE_START, "silence U0ONCALL 1h node drain")
    alert = script.state.alerts[DEP.key]
    assert alert.silenced_by == "U0ONCALL"
    assert alert.silence_reason == "node drain"
    assert alert.silenced_until == T0 + timedelta(seconds=SILENCE_END)


def test_a_root_stays_owed_until_slack_confirms_it_and_is_owed_once() -> None:
    script = Script()
    script.run(0, "bad", deliver=False)
    assert script.run(HOLD, "bad", deliver=False) == ["root", "reply:diagnosis", "reply:changes"]
    assert script.run(HOLD + 30, "bad", deliver=False) == []  # not owed a second time
    [alert] = script.state.alerts.values()
    assert [o.kind for o in alert.outbox] == [EffectKind.ROOT, EffectKind.REPLY, EffectKind.REPLY]
    script.deliver()
    assert script.roots == ["ts1"]
    assert script.state.alerts[DEP.key].root_ts == "ts1"


def test_what_is_said_before_the_root_is_posted_waits_behind_it_in_the_outbox() -> None:
    script = Script()
    script.run(0, "bad", deliver=False)
    script.run(HOLD, "bad", deliver=False)
    assert script.run(90, "ack U0ONCALL", deliver=False) == ["reply:acknowledged", "edit"]
    [alert] = script.state.alerts.values()
    kinds = [o.kind for o in alert.outbox]
    assert kinds == [EffectKind.ROOT, *[EffectKind.REPLY] * 3, EffectKind.EDIT]
    assert [o.effect_id.rsplit(":", 1)[1] for o in alert.outbox] == ["0", "1", "2", "3", "edit"]
    assert alert.outbox[1].awaits_evidence  # the diagnosis, first in the thread
    assert alert.outbox[2].awaits_evidence  # then what changed before it


def test_a_resolved_incident_stays_until_its_resolution_is_delivered() -> None:
    script = Script()
    for at, action, _ in FIRED:
        script.run(at, action)
    script.run(100, "clear", deliver=False)
    script.run(100 + HOLD, "clear", deliver=False)
    assert script.state.alerts == {}
    [closing] = script.state.closing
    kinds = [o.kind for o in closing.outbox]
    assert kinds == [EffectKind.REPLY, EffectKind.EDIT, EffectKind.SWEEP]
    assert script.run(300, "bad", deliver=False) == []  # a new incident, pending: no mix-up
    script.deliver()
    assert script.state.closing == ()
    assert set(script.state.alerts) == {DEP.key}


@pytest.mark.parametrize(
    ("setup", "command", "expected"),
    [
        ([], "ack", "No active alert"),
        ([(0, "bad")], "ack", "has not fired yet"),
        ([(0, "bad"), (HOLD, "bad"), (90, "ack U1")], "ack", "already acknowledged by .*@U1"),
        ([(0, "bad"), (HOLD, "bad")], "unsilence", "is not silenced"),
    ],
    ids=["unknown", "pending", "acknowledged twice", "unsilence without a silence"],
)
def test_refused_commands_say_why_and_change_nothing(
    setup: list[tuple[int, str]], command: str, expected: str
) -> None:
    script = Script()
    for at, action in setup:
        script.run(at, action)
    before = script.state
    with pytest.raises(errors.UserError, match=expected):
        script.run(100, f"{command} U2")
    assert script.state == before


def test_alert_ids_are_short_stable_and_differ_per_cluster() -> None:
    same = AlertKey("prod", "Config", "kai-config", "DependenciesFulfilled")
    other = AlertKey("staging", "Config", "kai-config", "DependenciesFulfilled")
    assert DEP.key.alert_id == same.alert_id
    assert len(DEP.key.alert_id) == 6
    assert other.alert_id != DEP.key.alert_id


def _no_hold() -> Policy:
    return Policy(timedelta(0), POLICY.repeat, 3, "C0ALERTS")


def test_every_effect_of_an_incident_has_its_own_stable_id_in_order() -> None:
    script = Script()
    for at, action, _ in FIRED:
        script.run(at, action)
    outcome = alerts.acknowledge(
        script.state, DEP.key.alert_id, "U1", T0 + timedelta(seconds=90), command="/kai"
    )
    reply, edit = outcome.effects
    alert = outcome.state.alerts[DEP.key]
    assert alert.acked_by == "U1"
    assert reply.effect_id == f"{alert.incident}:3"  # after the root, diagnosis, what changed
    assert edit.effect_id == f"{alert.incident}:edit"
    assert alert.outbox == (reply, edit)


ESCALATE = 15 * 60
ESCALATING = replace(POLICY, escalate_after=timedelta(seconds=ESCALATE))
DUE = HOLD + ESCALATE  # `escalate_after` after the alert fired (at HOLD)
ESCALATION_SCRIPTS = {
    "unanswered: one escalation once it is due, never again": [
        *FIRED,
        (DUE - 1, "bad", []),
        (DUE, "bad", ["reply:escalated"]),
        (DUE + 30, "bad", []),
        (DUE + REPEAT - 1, "bad", []),  # it also counted as the reminder
        (DUE + REPEAT, "bad", ["reply:reminder"]),
        (DUE + 3 * REPEAT, "bad", ["reply:reminder"]),
    ],
    "acknowledged in time: never": [
        *FIRED,
        (DUE - 60, "ack U0ONCALL", ["reply:acknowledged", "edit"]),
        (DUE, "bad", []),
        (DUE + REPEAT, "bad", []),
    ],
    "silenced in time: never, not even once the silence ended": [
        *FIRED,
        (DUE - 60, "silence U0ONCALL 1h", ["reply:silenced", "edit"]),
        (DUE, "bad", []),
        (DUE - 60 + 3600, "bad", ["reply:silence expired", "edit"]),
        (DUE + 2 * 3600, "bad", []),
    ],
    "a silence lifted before it was due does not spare it": [
        *FIRED,
        (120, "silence U0ONCALL 1h", ["reply:silenced", "edit"]),
        (180, "unsilence U0ONCALL", ["reply:unsilenced", "edit"]),
        (DUE, "bad", ["reply:escalated"]),
    ],
    "acknowledged after the escalation: nothing more": [
        *FIRED,
        (DUE, "bad", ["reply:escalated"]),
        (DUE + 60, "ack U0ONCALL", ["reply:acknowledged", "edit"]),
        (DUE + REPEAT, "bad", []),
    ],
    "resolved before it was due: never": [
        *FIRED,
        (100, "clear", []),
        (100 + HOLD, "clear", ["reply:resolved", "edit:resolved"]),
        (DUE, "clear", []),
    ],
    "clearing when it comes due: not yet; bad again: escalated late": [
        *FIRED,
        (DUE - 10, "clear", []),
        (DUE, "clear", []),
        (DUE + 20, "bad", ["reply:escalated"]),
    ],
    "a gap in the checks when it comes due: decided at the next real check": [
        *FIRED,
        (DUE, "fail", []),
        (DUE + 30, "bad", ["reply:escalated"]),
    ],
    "the cannot-check alert escalates too": [
        (0, "fail", []),
        (30, "fail", []),
        (60, "fail", ["root"]),
        (60 + ESCALATE, "fail", ["reply:escalated"]),
    ],
}


@pytest.mark.parametrize("steps", list(ESCALATION_SCRIPTS.values()), ids=list(ESCALATION_SCRIPTS))
def test_escalation_scripts(steps: list[tuple[int, str, list[str]]]) -> None:
    script = Script(policy=ESCALATING)
    for at, action, expected in steps:
        assert script.run(at, action) == expected, f"at {at}s: {action}"


def test_without_escalate_after_nothing_escalates() -> None:
    script = Script()
    for at, action, _ in FIRED:
        script.run(at, action)
    assert script.run(DUE + 10 * REPEAT, "bad") == ["reply:reminder"]


def test_the_escalation_is_owed_with_when_so_the_reply_says_how_long_it_waited() -> None:
    script = Script(policy=ESCALATING)
    for at, action, _ in FIRED:
        script.run(at, action)
    script.run(DUE + 7, "bad", deliver=False)
    alert = script.state.alerts[DEP.key]
    [escalation] = alert.outbox
    assert escalation.note is not None
    assert escalation.note.at - (alert.firing_since or T0) == timedelta(seconds=ESCALATE + 7)
    assert alert.escalation.value == "owed"
