"""How `/kai queues`, `/kai pending` and `/kai why` look in Slack, within Slack's limits.

Pure: plain dicts through `bot.slack.blocks` and `bot.slack.packing`, `now` as an argument.
Names and messages from the cluster are escaped in blocks and fallback text alike; a listing
too long for one message shows the oldest first and says how many are left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from bot.core.durations import format_duration
from bot.slack import packing
from bot.slack.blocks import Block, Message, context, escape, fit_message, header, section
from bot.workloads.pending import PendingGroup
from bot.workloads.queues import LEGEND, QueueRow, gpu_numbers
from bot.workloads.reasons import advice, unschedulable_without_reason
from bot.workloads.starvation import OVER_QUOTA, STARVED, QueueStarvation
from bot.workloads.why import Explanation

MAX_SECTIONS = 45  # of Slack's 50 blocks: the rest for the header and the notes


def queues_message(
    rows: Sequence[QueueRow],
    *,
    cluster: str,
    marks: Mapping[str, str] | None = None,
    starved_after: timedelta = timedelta(0),
) -> Message:
    """The queue tree, one line per queue, children indented under their parent; `marks` (queue
    name → `starved` or `over quota`) are shown on their lines and explained under the tree."""
    title = f"KAI queues on {cluster}"
    if not rows:
        note = f"No KAI Queue on {cluster}: jobs cannot be scheduled by KAI until one exists."
        return fit_message({"text": note, "blocks": [header(title), section(note)]})
    marks = marks or {}
    lines = [queue_line(row, marks.get(row.name, "")) for row in rows]
    sections, placed = packing.pack_lines([escape(x) for x in lines], MAX_SECTIONS)
    notes = _left_out(len(rows) - placed, "queue")
    if marks:
        notes.append(marks_legend(starved_after))
    blocks = [
        header(title),
        context(escape(f"{len(rows)} queues · {LEGEND}")),
        *sections,
    ]
    blocks += [context(n) for n in notes]
    text = packing.fit_text([title], [escape(x) for x in lines], [*notes, LEGEND])
    return fit_message({"text": text, "blocks": blocks})


def queue_line(row: QueueRow, mark: str = "") -> str:
    """`  annia (Annia workers): GPU quota 4, limit 8, … [over quota]` indented by depth."""
    name = f"{row.name} ({row.display_name})" if row.display_name else row.name
    marks = f" [{mark}]" if mark else ""
    marks += " [parent queue missing: its jobs are skipped]" if row.parent_missing else ""
    marks += "" if row.is_leaf else " [parent: takes no jobs itself]"
    return f"{'    ' * row.depth}{'↳ ' if row.depth else ''}{name}: {gpu_numbers(row)}{marks}"


def marks_legend(starved_after: timedelta) -> str:
    """What `[starved]` and `[over quota]` mean."""
    over = f"[{OVER_QUOTA}]: more GPUs allocated than its quota"
    if starved_after <= timedelta(0):
        return over
    waited = format_duration(starved_after, "coarse")
    return f"[{STARVED}]: below its GPU quota with a PodGroup pending {waited} or longer · {over}"


def starvation_evidence(
    found: QueueStarvation, queue: str, *, cluster: str, now: datetime, command: str
) -> Message:
    """The first reply of a queue starvation alert: the queue's line as `/kai queues` shows
    it, the leaf queues over quota, and its pending groups as `/kai pending` lists them."""
    marks = found.marks()
    verdict = "starved" if marks.get(queue) == STARVED else "no longer starved"
    title = f"Diagnosis of queue {queue} on {cluster}: {verdict}"
    head = [_queue_fact(found, queue, marks)]
    head += [
        f"Over quota: {queue_line(replace(row, depth=0), OVER_QUOTA)}"
        for row in found.rows
        if row.is_leaf and marks.get(row.name) == OVER_QUOTA
    ]
    groups = [g for g in found.pending if g.queue == queue]
    entries = [escape(group_entry(g, now, command)) for g in groups]
    sections, placed = packing.pack_lines([_bold_first(e) for e in entries], MAX_SECTIONS - 4)
    notes = _left_out(len(groups) - placed, "PodGroup")
    if not groups:
        notes.append(f"Nothing of queue {queue} waits for the KAI scheduler now.")
    notes.append(f"`{command} queues` and `{command} pending --all-namespaces` look again.")
    shown = [escape(x) for x in (title, *head)]
    blocks: list[Block] = [
        section(f"*{shown[0]}*\n" + "\n".join(shown[1:])),
        *sections,
        *(context(escape(n)) for n in notes),
    ]
    text = packing.fit_text(shown, entries, [escape(n) for n in notes])
    return fit_message({"text": text, "blocks": blocks})


def _queue_fact(found: QueueStarvation, queue: str, marks: Mapping[str, str]) -> str:
    row = next((r for r in found.rows if r.name == queue), None)
    if row is None:
        return f"Queue {queue} does not exist any more."
    return f"Queue: {queue_line(replace(row, depth=0), marks.get(queue, ''))}"


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
        empty = [header(title), context(counts), section(note)]
        return fit_message({"text": f"{title}\n{counts}\n{note}", "blocks": empty})
    entries = [escape(group_entry(g, now, command)) for g in groups]
    sections, placed = packing.pack_lines([_bold_first(e) for e in entries], MAX_SECTIONS)
    notes = _left_out(len(groups) - placed, "PodGroup")
    if notes and scope == "all namespaces":
        notes.append(f"`{escape(command)} pending NAMESPACE` shows one namespace.")
    blocks: list[Block] = [header(title), context(counts), *sections]
    blocks += [context(n) for n in notes]
    text = packing.fit_text([title, counts], entries, notes)
    return fit_message({"text": text, "blocks": blocks})


def group_entry(group: PendingGroup, now: datetime, command: str) -> str:
    """`annia/pg-x · queue annia · pool default · waiting 12m` then one line per reason."""
    waited = format_duration(now - group.since, "coarse") if group.since else "?"
    where = f"queue {group.queue or '?'} · pool {group.node_pool} · waiting {waited}"
    lines = [f"{group.namespace}/{group.name} · {where}"]
    for reason in group.reasons:
        lines.append(
            f"    {reason.reason}: {reason.message}" if reason.reason else f"    {reason.message}"
        )
        said = advice(reason, group.queue, command=command, delay_ends=group.delay_ends)
        lines.append(f"    → {said}")
    if not group.reasons:
        lines += [
            f"    {group.message or 'Unable to schedule podgroup'}",
            f"    → {unschedulable_without_reason(command)}",
        ]
    return "\n".join(lines)


def why_message(answer: Explanation, *, cluster: str) -> Message:
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
    body = "\n".join(escape(x) for x in lines)
    todo = f"What to do: {answer.advice}" if answer.advice else ""
    blocks = [header(title), section(body)]
    if todo:
        blocks.append(section(f"*{escape(todo)}*"))
    text = "\n".join([title, *lines, todo]).strip()
    return fit_message({"text": escape(text), "blocks": blocks})


def _kai_lines(answer: Explanation) -> list[str]:
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
