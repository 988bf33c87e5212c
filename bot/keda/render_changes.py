"""The words of a KEDA pause or resume: confirmation, result, channel record, timed resume.

Pure: strings and plain dicts, `now` as an argument. Each says what changes on the object (the
exact annotations) and whether KEDA acknowledged it; a result never claims more than the object
read back shows.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.core.durations import format_duration
from bot.core.rich import Rich, rich_text
from bot.keda.pause import ExpiredPause, KedaTarget, PauseOutcome, Plan
from bot.keda.render import annotation_words, pause_words, show_time, user_ref
from bot.rules import keda
from bot.rules.keda import PauseState
from bot.slack import blocks
from bot.slack.blocks import Message

_EFFECT = {
    ("pause", "ScaledJob"): "KEDA stops starting new Jobs for it; Jobs already running finish.",
    ("pause", "ScaledObject"): "KEDA stops autoscaling it; its workload keeps its replicas.",
    ("resume", "ScaledJob"): "KEDA starts Jobs for it again as its triggers ask.",
    ("resume", "ScaledObject"): "KEDA autoscales it again.",
}


def confirm_title(plan: Plan) -> str:
    verb = "Pause" if plan.action == "pause" else "Resume"
    return f"{verb} {plan.target.describe()}?"


def confirm_lines(
    plan: Plan, *, duration: timedelta | None, now: datetime, command: str = "/kai"
) -> list[str]:
    """What the change does to the object, annotation by annotation (plain text)."""
    target = plan.target
    effect = _EFFECT[(plan.action, target.kind)]
    if plan.action == "resume":
        lines = [f"Now: {pause_words(plan.before, now, md=False)!s}.", effect]
        lines.append("Annotations to remove:")
        lines += [f'  {key} (now "{_current(plan.before, key)}")' for key in plan.annotations]
        return lines + ([remaining_words(plan.before)] if plan.before.paused_directions else [])
    lines = [f"Now: not paused{_condition_words(plan.before)}.", effect, "Annotations to set:"]
    for key, value in plan.annotations.items():
        if value is not None:
            lines.append(f'  {key}: "{value}"{_when_hint(key, duration)}')
    stale = [key for key, value in plan.annotations.items() if value is None]
    if stale:
        lines.append("Annotations to remove (left from an earlier pause): " + ", ".join(stale))
    if duration is None:
        lines.append(f"It stays paused until someone runs {command} resume {resume_args(target)}.")
    else:
        lines.append(f"After {format_duration(duration)} kai-chatops resumes it by itself.")
    return lines


def resume_args(target: KedaTarget) -> str:
    """`annia/annia-worker`, or `scaledobject annia/annia-api`."""
    word = "scaledobject " if target.kind == "ScaledObject" else ""
    return f"{word}{target.namespace}/{target.name}"


def nothing_message(plan: Plan, now: datetime) -> Message:
    """Nothing to write (already paused, not paused): say so, and how it stands."""
    head = f"{plan.target.describe()}: {plan.nothing_to_do}; nothing was changed."
    if not plan.before.paused:
        return blocks.text_message(head, mrkdwn=f":information_source: {blocks.escape(head)}")
    plain = blocks.escape(f"{head} It is {pause_words(plan.before, now, md=False)!s}.")
    md = rich_text(f"{blocks.escape(head)} It is ", pause_words(plan.before, now, md=True), ".")
    return blocks.text_message(plain, mrkdwn=":information_source: " + md)


def result_message(outcome: PauseOutcome, *, wait_timeout: float, now: datetime) -> Message:
    """The change as the object reads back, then whether KEDA acknowledged it."""
    plan, after = outcome.plan, outcome.after
    if after is None:
        return nothing_message(plan, now)
    name = plan.target.describe()
    if outcome.read_error:
        text = (
            f"The {plan.action} is written on {name} (the API server accepted the patch), but "
            f"it could not be read back afterwards ({outcome.read_error}), so whether KEDA "
            "acknowledged it is not known. List it again to see where it stands."
        )
        safe = blocks.escape(text)
        return blocks.text_message(safe, mrkdwn=f"{_icon(outcome)} {safe}")
    if not outcome.took_effect:
        text = (
            f"The patch was accepted, but {name} now reads {annotation_words(after)}: "
            "someone changed it at the same time. List it again to see where it stands."
        )
        safe = blocks.escape(text)
        return blocks.text_message(safe, mrkdwn=f":warning: {safe}")
    if plan.action == "pause":
        written = f'it now carries {keda.PAUSED}: "true"'
        written += f", until {show_time(_iso(plan))} (resumed automatically)" if plan.until else ""
    else:
        written = "its pause annotations are removed"
    done = "paused" if plan.action == "pause" else "resumed"
    if outcome.acknowledged:
        text = f"{name} is {done}: {written}. {ack_words(outcome, wait_timeout)}"
    else:
        text = f"The {plan.action} is written on {name} ({written}), but "
        text += ack_words(outcome, wait_timeout)
    if plan.action == "resume" and after.paused_directions:
        text += f" {remaining_words(after)}"
    safe = blocks.escape(text)
    return blocks.text_message(safe, mrkdwn=f"{_icon(outcome)} {safe}")


def ack_words(outcome: PauseOutcome, wait_timeout: float) -> str:
    """Whether KEDA's `Paused` condition followed the annotation."""
    expected = str(_expected_condition(outcome))
    if outcome.acknowledged and outcome.plan.before.condition_paused is (expected == "True"):
        # Nothing to acknowledge: KEDA never showed the state this change undoes.
        return f"KEDA's Paused condition is {expected}, as it already was before this change."
    if outcome.acknowledged:
        return f"KEDA acknowledged it (its Paused condition is {expected})."
    seen = _condition_value(outcome.after)
    return (
        f"KEDA has not acknowledged it yet: after {wait_timeout:g}s its Paused condition is "
        f"{seen}, not {expected}. The change takes effect when KEDA reconciles the object; "
        "if that does not happen soon, check that the KEDA operator is running."
    )


def announcement_text(
    outcome: PauseOutcome, *, user: str, requested_by: str, now: datetime
) -> Rich:
    """The channel's record of the change (mrkdwn): who, what, why, until when, KEDA's answer."""
    plan = outcome.plan
    name = blocks.escape(plan.target.describe())
    who = user_ref(user, md=True)
    if requested_by and requested_by != user:
        who = rich_text(who, " (asked by ", user_ref(requested_by, md=True), ")")
    if plan.action == "pause":
        reason = plan.annotations.get(keda.PAUSE_REASON) or "none given"
        until = f"until {show_time(_iso(plan))}" if plan.until else "until resumed"
        done = rich_text(f" paused {name} {until}. Reason: {blocks.escape(reason)}.")
    else:
        done = rich_text(f" resumed {name} (it was ", pause_words(plan.before, now, md=True), ").")
    text = rich_text(f"{_icon(outcome)} ", who, done)
    return text + f" {_short_ack(outcome)}{_remaining_note(outcome)}"


def auto_resume_text(expired: ExpiredPause, outcome: PauseOutcome) -> Rich:
    """The channel's record of a timed pause ending (mrkdwn)."""
    name = blocks.escape(expired.target.describe())
    length = expired.length
    after = f"after {format_duration(length)}" if length is not None else "(its time was up)"
    state = expired.state
    text = rich_text(f":arrow_forward: {name} resumed automatically {after}", " (paused by ")
    text += user_ref(state.paused_by or "unknown", md=True)
    if state.paused_at:
        text += f" at {blocks.escape(show_time(state.paused_at))}"
    text += f": {blocks.escape(state.reason)})." if state.reason else ", no reason given)."
    return text + f" {_short_ack(outcome)}{_remaining_note(outcome)}"


def pause_details(state: PauseState) -> dict[str, str]:
    """The pause record for the audit log line."""
    fields = {
        "paused_by": state.paused_by,
        "paused_at": state.paused_at,
        "until": state.until,
        "pause_reason": state.reason,
    }
    return {key: value for key, value in fields.items() if value}


def refused_message(action: str, target: KedaTarget, error: Exception) -> Message:
    """The cluster answered 403: nothing changed, and what RBAC is missing."""
    text = (
        f"Could not {action} {target.describe()}: the cluster refused it (403 Forbidden), so "
        f"nothing was changed. {error}"
    )
    safe = blocks.escape(text)
    return blocks.text_message(safe, mrkdwn=f":no_entry: {safe}")


def _when_hint(key: str, duration: timedelta | None) -> str:
    if key == keda.PAUSED_AT:
        return " (the time you confirm)"
    if key == keda.PAUSE_UNTIL and duration is not None:
        return f" ({format_duration(duration)} after you confirm)"
    return ""


def _current(state: PauseState, key: str) -> str:
    values = {
        keda.PAUSED: state.paused_value,
        keda.PAUSED_REPLICAS: state.paused_replicas,
        keda.PAUSED_BY: state.paused_by,
        keda.PAUSED_AT: state.paused_at,
        keda.PAUSE_REASON: state.reason,
        keda.PAUSE_UNTIL: state.until,
    }
    return values.get(key) or ""


def _condition_words(state: PauseState) -> str:
    if state.condition_paused is None:
        return ""
    return f" (KEDA's Paused condition: {state.condition_paused})"


def _condition_value(state: PauseState | None) -> str:
    if state is None or state.condition_paused is None:
        return "absent or Unknown"
    return str(state.condition_paused)


def remaining_words(state: PauseState) -> str:
    """The one-direction pause a resume leaves in place, by name (it is not ours to remove)."""
    keys = " and ".join(keda.direction_keys(state))
    directions = " and ".join(state.paused_directions)
    return (
        f"Still paused for {directions} by {keys}, which resume leaves as it is (kai-chatops "
        "only removes what its pause writes): KEDA keeps its Paused condition True and does "
        f"not {directions.replace('scale-', 'scale ')} until that annotation is removed."
    )


def _remaining_note(outcome: PauseOutcome) -> str:
    after = outcome.after
    if outcome.plan.action != "resume" or after is None or not after.paused_directions:
        return ""
    directions = " and ".join(after.paused_directions)
    return f" Its {directions} pause ({', '.join(keda.direction_keys(after))}) stays."


def _expected_condition(outcome: PauseOutcome) -> bool:
    """What KEDA's Paused condition reads once it has followed this change: True after a pause,
    and after a resume while a one-direction pause stays."""
    remaining = outcome.after is not None and bool(outcome.after.paused_directions)
    return outcome.plan.action == "pause" or remaining


def _short_ack(outcome: PauseOutcome) -> str:
    if outcome.read_error:
        return "It could not be read back after the change, so KEDA's answer is not known."
    if not outcome.acknowledged:
        return "KEDA has not acknowledged it yet."
    expected = _expected_condition(outcome)
    if outcome.plan.before.condition_paused is expected:
        return "KEDA's Paused condition already matched."
    return "KEDA acknowledged it."


def _icon(outcome: PauseOutcome) -> str:
    if outcome.read_error:
        return ":grey_question:"
    if not outcome.acknowledged:
        return ":hourglass_flowing_sand:"
    return ":double_vertical_bar:" if outcome.plan.action == "pause" else ":arrow_forward:"


def _iso(plan: Plan) -> str:
    return plan.annotations.get(keda.PAUSE_UNTIL) or ""
