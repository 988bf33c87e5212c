"""Health and pause state of KEDA `ScaledJob` and `ScaledObject` objects (`keda.sh`).

Whether an object is paused is read from its annotations with Go `strconv.ParseBool` semantics,
as KEDA (v2.13+) reads them, not from the `Paused` condition, which lags; when the two disagree,
the verdict says so. A paused object still shows `Ready=True`, so the pause is checked first.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from bot.core import conditions as c
from bot.core.models import Health, RawObject, Verdict

GROUP = "keda.sh"
KINDS = ("ScaledJob", "ScaledObject")

PAUSED = "autoscaling.keda.sh/paused"
PAUSED_REPLICAS = "autoscaling.keda.sh/paused-replicas"
PAUSED_SCALE_IN = "autoscaling.keda.sh/paused-scale-in"
PAUSED_SCALE_OUT = "autoscaling.keda.sh/paused-scale-out"
PAUSED_BY = "kai-chatops/paused-by"
PAUSED_AT = "kai-chatops/paused-at"
PAUSE_REASON = "kai-chatops/pause-reason"
PAUSE_UNTIL = "kai-chatops/pause-until"

# Go strconv.ParseBool; anything else is a parse error, which KEDA treats as "paused".
_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


@dataclass(frozen=True)
class PauseState:
    """Whether KEDA treats the object as paused, and who paused it, from its annotations.

    `paused_value` and `paused_replicas` are the annotations as written (None when absent);
    `condition_paused` is the `Paused` condition (None when absent or Unknown); `disagreement`
    notes a lagging condition or an odd annotation value.
    """

    kind: str
    paused: bool
    paused_value: str | None = None
    paused_replicas: str | None = None
    paused_directions: tuple[str, ...] = ()
    paused_by: str | None = None
    paused_at: str | None = None
    reason: str | None = None
    until: str | None = None
    condition_paused: bool | None = None
    disagreement: str | None = None


def parse_go_bool(value: str) -> bool | None:
    """Go `strconv.ParseBool`: True, False, or None for a value Go refuses."""
    if value in _GO_TRUE:
        return True
    if value in _GO_FALSE:
        return False
    return None


def is_paused_value(value: str | None) -> bool:
    """How KEDA reads one pause annotation: absent → not paused, unparsable → paused."""
    return value is not None and parse_go_bool(value) is not False


def read_pause_state(obj: RawObject) -> PauseState:
    """Reads the pause annotations and the `Paused` condition of a ScaledJob or ScaledObject."""
    notes = c.annotations_of(obj)
    kind = c.as_text(obj.get("kind"))
    value = _annotation(notes, PAUSED)
    replicas = _annotation(notes, PAUSED_REPLICAS)
    # Only a ScaledObject honours paused-replicas (and the one-direction pauses).
    is_object = kind == "ScaledObject"
    paused = is_paused_value(value) or (is_object and replicas is not None)
    directions = _paused_directions(notes) if is_object else ()
    condition = c.condition_status(c.find_condition(c.list_conditions(obj), "Paused"))
    condition_paused = {"True": True, "False": False}.get(condition or "")
    state = PauseState(
        kind=kind,
        paused=paused,
        paused_value=value,
        paused_replicas=replicas,
        paused_directions=directions,
        paused_by=_annotation(notes, PAUSED_BY),
        paused_at=_annotation(notes, PAUSED_AT),
        reason=_annotation(notes, PAUSE_REASON),
        until=_annotation(notes, PAUSE_UNTIL),
        condition_paused=condition_paused,
    )
    disagreement = "; ".join(_annotation_notes(state) + _condition_notes(state))
    return replace(state, disagreement=disagreement or None)


def expects_paused_condition(state: PauseState) -> bool:
    """What KEDA's `Paused` condition should read once it caught up: True for a full pause and
    also while a one-direction pause stays (kedacore/keda controllers/keda/
    scaledobject_controller.go `reconcileScaledObject`)."""
    return state.paused or bool(state.paused_directions)


def direction_keys(state: PauseState) -> list[str]:
    """The one-direction pause annotations in force, by their full names."""
    keys = {"scale-in": PAUSED_SCALE_IN, "scale-out": PAUSED_SCALE_OUT}
    return [keys[direction] for direction in state.paused_directions]


def evaluate_keda_object(obj: RawObject) -> Verdict:
    """The verdict for a ScaledJob or ScaledObject."""
    return c.make_verdict(obj, assess_keda_object(obj))


def assess_keda_object(obj: RawObject) -> c.Assessment:
    """Paused → Suspended; otherwise by `Ready` (and `Fallback` for a ScaledObject)."""
    state = read_pause_state(obj)
    if state.paused:
        return c.Assessment(Health.SUSPENDED, _with_note(describe_pause(state), state))
    assessment = _assess_conditions(obj, state.kind)
    headline = assessment.headline
    if state.paused_directions:
        headline += f"; {' and '.join(state.paused_directions)} paused by annotation"
    return c.Assessment(assessment.health, _with_note(headline, state), assessment.detail)


def describe_pause(state: PauseState) -> str:
    """One line: which annotation pauses it, and who paused it, when, until when and why."""
    if is_paused_value(state.paused_value):
        text = f'paused ({PAUSED}: "{state.paused_value}")'
    else:
        text = f'paused ({PAUSED_REPLICAS}: "{state.paused_replicas}")'
    for label, value in (("by", state.paused_by), ("at", state.paused_at)):
        if value:
            text += f" {label} {value}"
    if state.until:
        text += f", resumes at {state.until}"
    if state.reason:
        text += f"; reason: {state.reason}"
    return text


def _assess_conditions(obj: RawObject, kind: str) -> c.Assessment:
    conds = c.list_conditions(obj)
    ready = c.find_condition(conds, "Ready")
    ready_state = c.condition_status(ready)
    fallback = c.find_condition(conds, "Fallback")
    if ready_state == "False" or (ready_state == "Unknown" and kind == "ScaledJob"):
        return c.assess_condition(Health.DEGRADED, ready)
    if kind == "ScaledObject" and c.is_condition_true(fallback):
        return c.assess_condition(Health.DEGRADED, fallback)
    if ready is None:
        return c.Assessment(
            Health.PROGRESSING, "no Ready condition yet: KEDA has not reconciled it"
        )
    if ready_state == "True":
        return c.assess_condition(Health.HEALTHY, ready)
    return c.assess_condition(Health.PROGRESSING, ready)


def _annotation_notes(state: PauseState) -> list[str]:
    notes = []
    value = state.paused_value
    if value is not None and parse_go_bool(value) is None:
        shown = f'"{value}"' if value else "empty"
        notes.append(f"{PAUSED} is {shown}, which is not a Go boolean: KEDA counts it as paused")
    if state.paused_replicas is not None:
        if state.kind != "ScaledObject":
            notes.append(f"{PAUSED_REPLICAS} is set, but a {state.kind} ignores it")
        elif value is not None and not is_paused_value(value):
            notes.append(f'{PAUSED_REPLICAS} pauses it although {PAUSED} is "{value}"')
    return notes


def _condition_notes(state: PauseState) -> list[str]:
    if state.condition_paused is None:
        return []
    # A one-direction pause also sets Paused=True while autoscaling carries on.
    expected = expects_paused_condition(state)
    if state.condition_paused == expected:
        return []
    if state.condition_paused:
        return [
            "the Paused condition is still True although the annotations say it is not "
            "paused: KEDA has not caught up yet"
        ]
    return [
        "the Paused condition is still False although the annotations pause it: "
        "KEDA has not caught up yet"
    ]


def _with_note(headline: str, state: PauseState) -> str:
    return f"{headline} (note: {state.disagreement})" if state.disagreement else headline


def _paused_directions(notes: Mapping[str, Any]) -> tuple[str, ...]:
    pairs = (("scale-in", PAUSED_SCALE_IN), ("scale-out", PAUSED_SCALE_OUT))
    return tuple(label for label, key in pairs if is_paused_value(_annotation(notes, key)))


def _annotation(notes: Mapping[str, Any], key: str) -> str | None:
    """An annotation as written; a non-string (hand-written YAML `true`) reads as Go prints it."""
    value = notes.get(key)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
