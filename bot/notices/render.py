"""How an eviction notice and its replies look in Slack. Pure.

The notice names the evicted group and its queue, the action in words, how many pods, the
group that took the GPUs and its queue, and the evicted queue's GPUs allocated vs its quota now,
which is why the rules allowed it; KAI's own message closes it. An Event without KAI's
annotations says "evicted by KAI" with what it has. Cluster text is escaped (`fit_message`).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.notices.evictions import Eviction
from bot.slack import blocks
from bot.slack.blocks import Block, Message
from bot.workloads.quantities import UNLIMITED, show
from bot.workloads.queues import QueueRow

# KAI's action names (pkg/scheduler/framework/interface.go) -> what happened, and the rule.
ACTIONS = {
    "preempt": (
        "preempted",
        "a workload of higher priority in the same queue needed its GPUs",
    ),
    "reclaim": (
        "reclaimed",
        "a queue below its quota or fair share took back GPUs from a queue using more than its own",
    ),
    "consolidation": (
        "moved by consolidation",
        "KAI repacked running pods to make room for a pending workload; they are rescheduled",
    ),
    "stalegangeviction": (
        "evicted as a stale gang",
        "fewer of its pods were running than its minimum, so the rest were stopped",
    ),
}


@dataclass(frozen=True)
class QueueFigures:
    """The queues involved in an eviction and their GPU figures, as read when the notice is
    written ("" / None: unknown). Not the `/kai queues` command (`bot.workloads.commands`)."""

    queue: str = ""  # the evicted group's spec.queue
    row: QueueRow | None = None
    evictor_queue: str = ""
    evictor_row: QueueRow | None = None
    problem: str = ""  # what could not be read, said as it is


def eviction_notice(cluster: str, eviction: Eviction, queues: QueueFigures) -> Message:
    """The first notice of an Evict Event."""
    group = f"{eviction.namespace}/{eviction.group}"
    if eviction.has_annotations:
        what, _ = ACTIONS.get(eviction.action, (f"evicted ({eviction.action})", ""))
        title = f"KAI {what} {group} on {cluster}"
    else:
        title = f"{group} was evicted by KAI on {cluster}"
    lines = [*_facts(eviction, queues), *_why(eviction, queues)]
    if eviction.count > 1:  # first seen after it had repeated: every one is said here
        lines.append(f"This Event counts {eviction.count} evictions.")
    return _message(title, lines, eviction)


def eviction_again(cluster: str, eviction: Eviction, queues: QueueFigures) -> Message:
    """A reply under the notice: the same Event counted another eviction."""
    title = f"Evicted again: this Event now counts {eviction.count} evictions on {cluster}"
    return _message(title, [_queue_line(queues), *_problem(queues)], eviction)


def _message(title: str, lines: list[str], eviction: Eviction) -> Message:
    parts: list[Block] = [blocks.section(f"*{blocks.escape(title)}*")]
    parts += [blocks.section("\n".join(blocks.escape(line) for line in lines))] if lines else []
    if eviction.message:
        parts.append(blocks.context(f"KAI: {blocks.escape(eviction.message)}"))
    text = "\n".join([title, *lines])
    return blocks.fit_message({"text": blocks.escape(text), "blocks": parts})


def _facts(eviction: Eviction, queues: QueueFigures) -> list[str]:
    lines = [_queue_line(queues)]
    if eviction.pods is not None:
        lines.append(f"Pods evicted: {eviction.pods}")
    if eviction.evictor:
        taker = f"{eviction.evictor_namespace}/{eviction.evictor}".lstrip("/")
        numbers = _queue_numbers(queues.evictor_queue, queues.evictor_row)
        lines.append(f"Taken by: {taker}, queue {numbers}")
    return [*lines, *_problem(queues)]


def _why(eviction: Eviction, queues: QueueFigures) -> list[str]:
    _, rule = ACTIONS.get(eviction.action, ("", ""))
    if not rule:
        return []
    row = queues.row
    lines = [f"Why: {rule}."]
    if eviction.action == "reclaim" and row is not None and _is_over_quota(row):
        lines.append(f"Queue {row.name} was using more GPUs than its quota.")
    return lines


def _queue_line(queues: QueueFigures) -> str:
    return f"Queue: {_queue_numbers(queues.queue, queues.row)}"


def _queue_numbers(name: str, row: QueueRow | None) -> str:
    """`team-b: 12 GPUs allocated now, quota 8` (what is known of it)."""
    if not name:
        return "unknown"
    if row is None:
        return f"{name} (not found)"
    return f"{name}: {show(row.allocated)} GPUs allocated now, quota {show(row.quota)}"


def _is_over_quota(row: QueueRow) -> bool:
    if row.allocated is None or row.quota is None or row.quota == UNLIMITED:
        return False
    return row.allocated > row.quota


def _problem(queues: QueueFigures) -> list[str]:
    return [f"(Could not read everything: {queues.problem})"] if queues.problem else []
