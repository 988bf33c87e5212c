"""How Flux suspend and resume read in Slack: confirmation, refusals, results, channel flux_suspend.

Pure: strings and Block Kit dicts fitted to Slack's limits. Hand-written values (reasons, user
fields written by hand on the object) are escaped, so none can mention or link anyone; the
reconcile after a resume is shown with `bot.gitops.render`'s words.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from bot.commands.kinds import FLUX_KIND_WORDS, short_word
from bot.core import conditions
from bot.core.durations import format_duration
from bot.core.rich import Rich, rich_text
from bot.gitops import render
from bot.gitops.suspend import ALREADY_SUSPENDED, ExpiredSuspend, SuspendOutcome, SuspendPlan
from bot.gitops.target import GitopsTarget, command_for
from bot.rules import flux_suspend
from bot.rules.flux_suspend import SuspendRecord
from bot.slack.blocks import Message, Text, escape, fit_message, mention, section, text_message

# The short KIND word of `/kai suspend|resume KIND` for each kind.
KIND_WORDS = {kind: short_word(kind) for kind, _, _ in FLUX_KIND_WORDS}
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,}")
WHAT_SUSPEND_DOES = (
    "Flux stops reconciling it (spec.suspend: true): no upgrades, no drift correction, no "
    "pruning, and a reconcile request is ignored until it is resumed."
)


def where(target: GitopsTarget) -> str:
    """`HelmRelease flux-system/kai-scheduler on prod`."""
    return f"{target.describe()} on {target.cluster}"


def confirm_title(plan: SuspendPlan) -> str:
    return f"{plan.action.capitalize()} {where(plan.target)}?"


def confirm_lines(plan: SuspendPlan, *, duration: timedelta | None, now: datetime) -> list[str]:
    """What Confirm will do, in words and in the fields written (plain text: escaped later)."""
    if plan.action == "resume":
        return [
            f"It is {record_words(plan.before, md=False)!s}.",
            "Flux reconciles it again (spec.suspend: false, the kai-chatops record deleted); "
            "kai-chatops then asks for a reconcile now and reports its result, as `flux "
            "resume` waits for one.",
        ]
    lines = [WHAT_SUSPEND_DOES]
    if duration is not None and plan.until is not None:
        lines.append(
            f"For {format_duration(duration)}, until {show_time(plan.until)}: then kai-chatops "
            "resumes it and asks Flux to reconcile it (even after a restart)."
        )
    else:
        lines.append("Until someone resumes it.")
    annotations = (plan.patch.get("metadata") or {}).get("annotations") or {}
    reason = annotations.get(flux_suspend.SUSPEND_REASON)
    if reason:
        lines.append(f"Reason: {reason}")
    written = ", ".join(k for k, v in annotations.items() if v is not None)
    lines.append(f"Writes: spec.suspend: true, {written}")
    return lines


def refusal_message(plan: SuspendPlan, command: str, default_cluster: str) -> Message:
    """Why nothing was written: already suspended (and how to resume), or not suspended."""
    target = plan.target
    if plan.refusal == ALREADY_SUSPENDED:
        head = rich_text(f"{escape(where(target))} is already ", record_words(plan.before, md=True))
        rest = f"To resume it: `{command_for('resume', target, command, default_cluster)}`."
    else:
        head = rich_text(f"{escape(where(target))} is not suspended (spec.suspend is not true)")
        rest = f"To suspend it: `{command_for('suspend', target, command, default_cluster)}`."
    return _ephemeral(head + f"; nothing was changed. {rest}")


def record_words(found: SuspendRecord, *, md: bool) -> Rich:
    """`suspended by @ann at 2026-08-24 08:00 UTC, until 10:00 UTC: hotfix`, or by hand."""
    shown = escape if md else str
    if not found.by:
        return rich_text(
            "suspended (spec.suspend: true, set by hand or in Git: no kai-chatops record)"
        )
    text = rich_text("suspended by ", user_ref(found.by, md=md))
    if found.at:
        text += f" at {shown(show_text_time(found.at))}"
    text += f", until {shown(show_text_time(found.until))}" if found.until else ", until resumed"
    return text + (f": {shown(found.reason)}" if found.reason else "")


def suspend_announcement(outcome: SuspendOutcome, user: str, until: datetime | None) -> Rich:
    """The channel's record of a suspend (mrkdwn; the reason escaped)."""
    target = outcome.plan.target
    when = f" until {show_time(until)}" if until is not None else " until resumed"
    text = rich_text(
        mention(user), f" suspended Flux {escape(where(target))}{when}: Flux will not reconcile it."
    )
    reason = _written_reason(outcome.plan)
    return text + (f"\nReason: {escape(reason)}" if reason else "")


def suspend_result(
    outcome: SuspendOutcome, until: datetime | None, command: str, default_cluster: str
) -> Message:
    """The clicker's answer, replacing the confirmation."""
    target = outcome.plan.target
    when = f" until {show_time(until)}, then resumed by kai-chatops" if until else ""
    resume = command_for("resume", target, command, default_cluster)
    earlier = " earlier" if until else ""
    return _ephemeral(
        f":double_vertical_bar: Suspended {escape(where(target))}{when}. To resume it"
        f"{earlier}: `{resume}`."
    )


def resume_announcement(outcome: SuspendOutcome, user: str) -> Rich:
    """The channel's record of a resume and of the reconcile after it, in Flux's words."""
    target = outcome.plan.target
    before = _before(outcome, md=True)
    text = rich_text(mention(user), f" resumed Flux {escape(where(target))} (it was ", before, ").")
    return text + f"\n{escape(_reconcile_words(outcome))}"


def auto_resume_announcement(expired: ExpiredSuspend, outcome: SuspendOutcome) -> Rich:
    """The channel's record of a timed suspend that ended by itself."""
    target = expired.target
    length = f" after {format_duration(expired.length)}" if expired.length else ""
    text = rich_text(
        f"{escape(where(target))} resumed automatically{length} (it was ",
        record_words(expired.record, md=True),
        ").",
    )
    return text + f"\n{escape(_reconcile_words(outcome))}"


def resume_result(outcome: SuspendOutcome, user: str) -> Message:
    """The clicker's answer: resumed, then the reconcile as `/kai reconcile` shows it."""
    target = outcome.plan.target
    head = f":arrow_forward: Resumed {escape(where(target))} (spec.suspend: false)."
    if outcome.reconcile is None:
        return _ephemeral(head)
    result_text, result_blocks = render.flux_parts(outcome.reconcile, user)
    blocks = [section(head), *result_blocks]
    text = f"{head}\n{result_text}"
    return fit_message({"text": text, "blocks": blocks, "response_type": "ephemeral"})


def details(outcome: SuspendOutcome) -> dict[str, str]:
    """The audit line's details: the record before, and the reconcile's result."""
    before = outcome.plan.before
    found = {"suspended_by": before.by, "suspended_at": before.at, "until": before.until}
    if outcome.plan.action == "suspend":
        annotations = (outcome.plan.patch.get("metadata") or {}).get("annotations") or {}
        found = {"until": str(annotations.get(flux_suspend.SUSPEND_UNTIL) or "")}
    report = outcome.reconcile
    if report is not None:
        step = report.steps[-1]
        found |= {"reconcile": report.outcome, "ready": step.ready, "reason": step.reason}
        found |= {"requestedAt": step.token} if step.token else {}
    return {k: v for k, v in found.items() if v}


def _reconcile_words(outcome: SuspendOutcome) -> str:
    report = outcome.reconcile
    if report is None:
        return ""
    return render.flux_parts(report, "")[0]


def _before(outcome: SuspendOutcome, *, md: bool) -> Rich:
    return record_words(outcome.plan.before, md=md)


def _written_reason(plan: SuspendPlan) -> str:
    annotations = (plan.patch.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(flux_suspend.SUSPEND_REASON) or "")


def user_ref(user: str, *, md: bool) -> Rich:
    """A mention for a user ID we wrote; anything else written by hand is shown as text."""
    if md:
        return mention(user) if _USER_ID.fullmatch(user) else rich_text(escape(user))
    return rich_text(user)


def show_time(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def show_text_time(text: str) -> str:
    """An RFC 3339 annotation as `2026-08-24 10:00 UTC`; as written when it does not parse."""
    moment = conditions.parse_timestamp(text)
    return show_time(moment) if moment is not None else repr(text)


def _ephemeral(mrkdwn: Text) -> Message:
    """A short private answer; the fallback text is the same escaped mrkdwn (never unescaped)."""
    return {**text_message(mrkdwn), "response_type": "ephemeral"}
