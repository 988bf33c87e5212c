"""How `/kai queues`, `/kai pending` and `/kai why` look in Slack, within Slack's limits.

Pure: plain dicts through `bot.slack.blocks` and `bot.slack.packing`, `now` as an argument.
Names and messages from the cluster are escaped in blocks and fallback text alike; a listing
too long for one message shows the oldest first and says how many are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.core.durations import format_duration
from bot.slack import blocks as render
from bot.slack import packing
from bot.slack.blocks import Block, Message
from bot.workloads.pending import PendingGroup
from bot.workloads.queues import LEGEND, QueueRow, gpu_numbers
from bot.workloads.reasons import advice, unschedulable_without_reason
from bot.workloads.why import Why

MAX_SECTIONS = 45  # of Slack's 50 blocks: the rest for the header and the notes


def queues_message(rows: Sequence[QueueRow], *, cluster: str) -> Message:
    """The queue tree, one line per queue, children indented under their parent."""
    title = f"KAI queues on {cluster}"
    if not rows:
        note = f"No KAI Queue on {cluster}: jobs cannot be scheduled by KAI until one exists."
        return render.fit_message(
            {"text": note, "blocks": [render.header(title), render.section(note)]}
        )
    lines = [queue_line(row) for row in rows]
    sections, placed = packing.pack_lines([render.escape(x) for x in lines], MAX_SECTIONS)
    notes = _left_out(len(rows) - placed, "queue")
    blocks = [
        render.header(title),
        render.context(render.escape(f"{len(rows)} queues · {LEGEND}")),
        *sections,
    ]
    blocks += [render.context(n) for n in notes]
    text = packing.fit_text([title], [render.escape(x) for x in lines], [*notes, LEGEND])
    return render.fit_message({"text": text, "blocks": blocks})


def queue_line(row: QueueRow) -> str:
    """`  annia (Annia workers): GPU quota 4, limit 8, …` indented by depth."""
    name = f"{row.name} ({row.display_name})" if row.display_name else row.name
    marks = " [parent queue missing: its jobs are skipped]" if row.parent_missing else ""
    marks += "" if row.is_leaf else " [parent: takes no jobs itself]"
    return f"{'    ' * row.depth}{'↳ ' if row.depth else ''}{name}: {gpu_numbers(row)}{marks}"


def pending_message(
    groups: Sequence[PendingGroup],
    stale: int,
    *,
    cluster: str,
    scope: str,
    now: datetime,
    command: str,
) -> Message:
    """Pending PodGroups oldest first, each reason with what to do; the rest counted. `command`
    is the configured slash command, named where the reply suggests one."""
    title = f"KAI pending PodGroups on {cluster}: {scope}"
    counts = f"{len(groups)} pending"
    if stale:
        counts += f" · {stale} left out: their pods all run (stale conditions, KAI < 0.17)"
    if not groups:
        note = f"Nothing waits for the KAI scheduler in {scope}."
        empty = [render.header(title), render.context(counts), render.section(note)]
        return render.fit_message({"text": f"{title}\n{counts}\n{note}", "blocks": empty})
    entries = [render.escape(group_entry(g, now, command)) for g in groups]
    sections, placed = packing.pack_lines([_bold_first(e) for e in entries], MAX_SECTIONS)
    notes = _left_out(len(groups) - placed, "PodGroup")
    if notes and scope == "all namespaces":
        notes.append(f"`{render.escape(command)} pending NAMESPACE` shows one namespace.")
    blocks: list[Block] = [render.header(title), render.context(counts), *sections]
    blocks += [render.context(n) for n in notes]
    text = packing.fit_text([title, counts], entries, notes)
    return render.fit_message({"text": text, "blocks": blocks})


def group_entry(group: PendingGroup, now: datetime, command: str) -> str:
    """`annia/pg-x · queue annia · pool default · waiting 12m` then one line per reason."""
    waited = format_duration(now - group.since, "coarse") if group.since else "?"
    where = f"queue {group.queue or '?'} · pool {group.node_pool} · waiting {waited}"
    lines = [f"{group.namespace}/{group.name} · {where}"]
    for reason in group.reasons:
        lines.append(
            f"    {reason.reason}: {reason.message}" if reason.reason else f"    {reason.message}"
        )
        lines.append(f"    → {advice(reason, group.queue, command=command)}")
    if not group.reasons:
        lines += [
            f"    {group.message or 'Unable to schedule podgroup'}",
            f"    → {unschedulable_without_reason(command)}",
        ]
    return "\n".join(lines)


def why_message(answer: Why, *, cluster: str) -> Message:
    """The pod's state, its PodGroup, queue, reasons, binds and events, then what to do."""
    title = f"Why {answer.pod} is {answer.phase} (on {cluster})"
    lines = [f"Phase: {answer.phase} · scheduler: {answer.scheduler}"]
    lines += [f"Condition {x}" for x in answer.conditions]
    if not answer.by_kai:
        lines.append(
            f"Not scheduled by KAI: its schedulerName is {answer.scheduler}; `kubectl describe "
            "pod` shows what that scheduler says"
        )
    else:
        lines += _kai_lines(answer)
    body = "\n".join(render.escape(x) for x in lines)
    todo = f"What to do: {answer.advice}" if answer.advice else ""
    blocks = [render.header(title), render.section(body)]
    if todo:
        blocks.append(render.section(f"*{render.escape(todo)}*"))
    text = "\n".join([title, *lines, todo]).strip()
    return render.fit_message({"text": render.escape(text), "blocks": blocks})


def _kai_lines(answer: Why) -> list[str]:
    lines = [f"PodGroup: {answer.group or 'none (no pod-group-name annotation)'}"]
    if answer.queue_line:
        lines.append(f"Queue: {answer.queue_line}")
    lines.append(f"Node pool: {answer.node_pool}")
    lines += [f"Scheduler reason: {r}" for r in answer.reasons]
    if answer.bind_failure:
        lines.append(f"BindRequest Failed {answer.bind_failure}")
    lines += [f"Event: {e}" for e in answer.events[:10]]
    return lines


def _bold_first(entry: str) -> str:
    head, _, rest = entry.partition("\n")
    return f"*{head}*\n{rest}" if rest else f"*{head}*"


def _left_out(count: int, noun: str) -> list[str]:
    if count <= 0:
        return []
    return [
        f"{count} more {noun}{'s' if count != 1 else ''} not shown: too many for one Slack message."
    ]
