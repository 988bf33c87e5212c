"""How a cordon and an uncordon read in Slack: confirmation, refusals, results, the channel's
record, and a timed cordon that ended by itself.

Pure: strings and Block Kit dicts fitted to Slack's limits. Hand-written values (reasons, a
record written by hand on the node) are escaped, so none can mention or link anyone; a user ID
we wrote is a mention (`bot.slack.blocks.mention`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.core.durations import format_duration
from bot.core.errors import KubeError
from bot.core.rich import Rich, rich_text
from bot.nodes import gpus
from bot.nodes.cordon import ALREADY_CORDONED, CordonPlan, ExpiredCordon, NodeTarget
from bot.nodes.gpus import CordonRecord
from bot.nodes.render import show_text_time
from bot.slack.blocks import Message, Text, escape, mention, text_message

WHAT_CORDON_DOES = (
    "New pods are not scheduled on it (spec.unschedulable: true); what runs there keeps "
    "running: kai-chatops never drains."
)


def confirm_title(plan: CordonPlan) -> str:
    return f"{plan.action.capitalize()} {plan.target.describe()}?"


def confirm_lines(plan: CordonPlan, *, duration: timedelta | None, now: datetime) -> list[str]:
    """What Confirm will do, in words and in the fields written (plain text: escaped later)."""
    lines = [] if plan.gpus else [f"Node {plan.target.name} has no GPUs (no nvidia.com/gpu)."]
    if plan.action == "uncordon":
        return [
            *lines,
            f"It is {record_words(plan.before, md=False)!s}.",
            "New pods may be scheduled on it again (spec.unschedulable: false, the kai-chatops "
            "record deleted).",
        ]
    lines.append(WHAT_CORDON_DOES)
    if duration is not None and plan.until is not None:
        lines.append(
            f"For {format_duration(duration)}, until {show_time(plan.until)}: then kai-chatops "
            "uncordons it (even after a restart)."
        )
    else:
        lines.append("Until someone uncordons it.")
    annotations = _annotations(plan)
    reason = annotations.get(gpus.CORDON_REASON)
    if reason:
        lines.append(f"Reason: {reason}")
    written = ", ".join(k for k, v in annotations.items() if v is not None)
    lines.append(f"Writes: spec.unschedulable: true, {written}")
    return lines


def refusal_message(plan: CordonPlan, command: str) -> Message:
    """Why nothing was written: already cordoned (and by whom), or not cordoned."""
    target = plan.target
    if plan.refusal == ALREADY_CORDONED:
        head = rich_text(f"{escape(target.describe())} is already ", record_words(plan.before))
        rest = f"To uncordon it: `{_command(command, 'uncordon', target)}`."
    else:
        head = rich_text(f"{escape(target.describe())} is not cordoned")
        rest = f"To cordon it: `{_command(command, 'cordon', target)}`."
    return _ephemeral(head + f"; nothing was changed. {rest}")


def refused_message(action: str, target: NodeTarget, error: KubeError) -> Message:
    """The cluster refused the write (RBAC, the admission policy): its own words."""
    return _ephemeral(
        f"Could not {action} {escape(target.describe())}: {escape(str(error))}. Nothing changed."
    )


def record_words(found: CordonRecord, *, md: bool = True) -> Rich:
    """`cordoned by @ann at 2026-08-24 08:00 UTC, until 10:00 UTC: XID 79`, or by hand."""
    shown = escape if md else str
    if not found.by:
        return rich_text("cordoned (by hand or by a health tool: no kai-chatops record)")
    # A user ID we wrote becomes a mention; anything written by hand stays text (`mention`).
    text = rich_text("cordoned by ", mention(found.by) if md else rich_text(found.by))
    if found.at:
        text += f" at {shown(show_text_time(found.at))}"
    text += f", until {shown(show_text_time(found.until))}" if found.until else ", until uncordoned"
    return text + (f": {shown(found.reason)}" if found.reason else "")


def cordon_result(plan: CordonPlan, command: str) -> Message:
    """The clicker's answer, replacing the confirmation."""
    when = f" until {show_time(plan.until)}, then uncordoned by kai-chatops" if plan.until else ""
    earlier = " earlier" if plan.until else ""
    no_gpus = " (it has no GPUs)" if not plan.gpus else ""
    return _ephemeral(
        f":no_entry: Cordoned {escape(plan.target.describe())}{no_gpus}{when}: no new pods land "
        f"there, nothing was drained. To uncordon it{earlier}: "
        f"`{_command(command, 'uncordon', plan.target)}`."
    )


def uncordon_result(plan: CordonPlan) -> Message:
    return _ephemeral(
        f":arrow_forward: Uncordoned {escape(plan.target.describe())}: new pods may be scheduled "
        "on it again."
    )


def announcement(plan: CordonPlan, user: str) -> Rich:
    """The channel's record of a cordon or uncordon (mrkdwn; the reason escaped)."""
    where = escape(plan.target.describe())
    if plan.action == "uncordon":
        return rich_text(
            mention(user), f" uncordoned {where} (it was ", record_words(plan.before), ")."
        )
    when = f" until {show_time(plan.until)}" if plan.until is not None else " until uncordoned"
    text = rich_text(mention(user), f" cordoned {where}{when}: no new pods land there.")
    reason = _annotations(plan).get(gpus.CORDON_REASON)
    return text + (f"\nReason: {escape(reason)}" if reason else "")


def auto_uncordon_text(expired: ExpiredCordon) -> Rich:
    """The channel's record of a timed cordon that ended by itself."""
    length = f" after {format_duration(expired.length)}" if expired.length else ""
    return rich_text(
        f"{escape(expired.target.describe())} uncordoned automatically{length} (it was ",
        record_words(expired.record),
        ").",
    )


def details(plan: CordonPlan) -> dict[str, str]:
    """The audit line's details: the record before, or the end of a new cordon."""
    before = plan.before
    found = {"cordoned_by": before.by, "cordoned_at": before.at, "until": before.until}
    if plan.action == "cordon":
        found = {"until": _annotations(plan).get(gpus.CORDON_UNTIL) or ""}
    return {k: v for k, v in found.items() if v} | {"gpus": str(plan.gpus)}


def show_time(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def _annotations(plan: CordonPlan) -> dict[str, str]:
    written = (plan.patch.get("metadata") or {}).get("annotations") or {}
    return {str(k): str(v) for k, v in written.items() if v is not None}


def _command(command: str, word: str, target: NodeTarget) -> str:
    return f"{command} {word} {target.name} --cluster {target.cluster}"


def _ephemeral(mrkdwn: Text) -> Message:
    """A short private answer; the fallback text is the same escaped mrkdwn (never unescaped)."""
    return {**text_message(mrkdwn), "response_type": "ephemeral"}
