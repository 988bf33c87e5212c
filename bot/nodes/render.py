"""How `/kai nodes` and a GPU node's evidence look in Slack, within Slack's limits.

Pure: plain dicts through `bot.slack.blocks` and `bot.slack.packing`. Node names, condition
messages and the reasons people wrote are cluster text: escaped in blocks and fallback text
alike, messages redacted (`bot.core.redaction`) and cut short. Sick nodes come first, so a list
too long for one message still shows them, and says how many are left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core import conditions
from bot.core.redaction import redact
from bot.nodes.gpus import CordonRecord, GpuCondition, GpuNode
from bot.slack import packing
from bot.slack.blocks import Message, Text, context, escape, fit_message, header, section

MAX_SECTIONS = 45  # of Slack's 50 blocks: the rest for the header and the notes
MESSAGE_CHARS = 300  # of a condition's message, on its line
LEGEND = "GPUs: capacity / allocatable (healthy) / allocated (requested by its running pods)"


def nodes_message(nodes: Sequence[GpuNode], *, total: int, cluster: str, command: str) -> Message:
    """One block per GPU node, sick ones first: Ready, GPUs, cordon, GPU conditions."""
    title = f"GPU nodes on {cluster}"
    if not nodes:
        note = (
            f"No node on {cluster} has nvidia.com/gpu capacity ({total} node"
            f"{'s' if total != 1 else ''} in all): the device plugin advertises it on GPU nodes."
        )
        return fit_message({"text": note, "blocks": [header(title), section(escape(note))]})
    ordered = sorted(nodes, key=lambda node: (not node.is_sick, node.name))
    lines = [escape(node_lines(node)) for node in ordered]
    sections, placed = packing.pack_lines(lines, MAX_SECTIONS)
    summary = _summary(nodes, total)
    notes = [LEGEND, f"`{command} cordon NODE [for DURATION] [REASON]` keeps new pods off a node."]
    if placed < len(lines):
        notes.insert(
            0, f"{len(lines) - placed} more GPU nodes not shown: too many for one message."
        )
    blocks = [header(title), context(escape(summary)), *sections, *(context(n) for n in notes)]
    text = packing.fit_text([f"{title}: {summary}"], lines, notes)
    return fit_message({"text": text, "blocks": blocks})


def node_lines(node: GpuNode) -> str:
    """`gpu-node-1: Ready · GPUs 8 / 7 / 4 (1 lost)`, then its cordon and its GPU conditions,
    one line each (plain text: escaped by the caller)."""
    allocated = "?" if node.allocated is None else str(node.allocated)
    gpus = f"GPUs {node.capacity} / {node.allocatable} / {allocated}"
    lost = f" ({node.lost} lost: not allocatable)" if node.lost else ""
    lines = [f"{node.name}: {ready_words(node)} · {gpus}{lost}"]
    if node.cordon.cordoned:
        lines.append(f"    {cordon_words(node.cordon)}")
    lines += [f"    {condition_words(cond)}" for cond in node.conditions]
    return "\n".join(lines)


def ready_words(node: GpuNode) -> str:
    """`Ready`, or `NotReady (KubeletNotReady)`, or `Ready Unknown (NodeStatusUnknown)`."""
    if node.is_ready:
        return "Ready"
    reason = f" ({node.ready_reason})" if node.ready_reason else ""
    if node.ready == "False":
        return f"NotReady{reason}"
    return f"Ready {node.ready or 'missing'}{reason}"


def cordon_words(record: CordonRecord) -> str:
    """`cordoned by U123 at 2026-08-24 08:00 UTC, until 10:00 UTC: XID 79`, or by hand."""
    if not record.by:
        return "cordoned (spec.unschedulable, by hand or by a health tool: no kai-chatops record)"
    text = f"cordoned by {record.by}"
    text += f" at {show_text_time(record.at)}" if record.at else ""
    text += f", until {show_text_time(record.until)}" if record.until else ", until uncordoned"
    return text + (f": {record.reason}" if record.reason else "")


def condition_words(cond: GpuCondition) -> str:
    """`GpuMemWatch True (GpuMemWatchIsNotHealthy): ErrorCode:... [failing]`, redacted, cut."""
    mark = " [failing]" if cond.failing else ""
    reason = f" ({cond.reason})" if cond.reason else ""
    text = f"{cond.type} {cond.status or 'unset'}{reason}{mark}"
    message = shown_message(cond.message)
    return f"{text}: {message}" if message else text


def shown_message(message: str) -> str:
    """A cluster message on one line, secrets redacted, cut to MESSAGE_CHARS."""
    flat = " ".join(redact(message).split())
    return flat if len(flat) <= MESSAGE_CHARS else flat[: MESSAGE_CHARS - 1] + "…"


def show_text_time(text: str) -> str:
    """An RFC 3339 annotation as `2026-08-24 10:00 UTC`; as written when it does not parse."""
    moment = conditions.parse_timestamp(text)
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment is not None else repr(text)


def node_evidence(node: GpuNode | None, name: str, cluster: str, command: str) -> Message:
    """The first reply under a GPU node's alert: the node as `/kai nodes` shows it now."""
    if node is None:
        text: Text = escape(f"Node {name} is gone from {cluster}, or no longer has GPUs.")
        return fit_message({"text": text, "blocks": [section(text)]})
    body = escape(node_lines(node))
    hint = escape(
        f"`{command} nodes --cluster {cluster}` shows every GPU node; `{command} cordon {name}` "
        "keeps new pods off it (nothing running is drained)."
    )
    text = f"Node {escape(name)} on {escape(cluster)} now:\n{body}"
    return fit_message({"text": text, "blocks": [section(text), context(hint)]})


def _summary(nodes: Sequence[GpuNode], total: int) -> str:
    capacity = sum(node.capacity for node in nodes)
    allocatable = sum(node.allocatable for node in nodes)
    sick = sum(1 for node in nodes if node.is_sick)
    cordoned = sum(1 for node in nodes if node.cordon.cordoned)
    parts = [
        f"{len(nodes)} of {total} nodes have GPUs",
        f"{allocatable} of {capacity} GPUs allocatable",
    ]
    if any(node.allocated is not None for node in nodes):
        parts.append(f"{sum(node.allocated or 0 for node in nodes)} allocated")
    parts += [f"{sick} need attention"] if sick else []
    parts += [f"{cordoned} cordoned"] if cordoned else []
    return " · ".join(parts)
