"""The KAI Queue tree as `/kai queues` shows it: parents before children, GPU numbers per queue.

Pure. `spec.parentQueue` makes the tree (kai-workloads.md §3); a queue whose parent is absent
is shown at the top, marked, since the scheduler skips its jobs. GPU quota, limit and
over-quota weight come from `spec.resources.gpu` (-1 = unlimited), allocated and requested from
`status` (`nvidia.com/gpu`, written by the queue-controller).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.core import conditions
from bot.core.models import RawObject
from bot.workloads.quantities import dra_gpus, gpus, parse_quantity, show


@dataclass(frozen=True)
class QueueRow:
    """One queue and where it sits in the tree."""

    name: str
    display_name: str
    depth: int
    parent: str
    parent_missing: bool
    is_leaf: bool
    quota: float | None
    limit: float | None
    weight: float | None
    allocated: float | None
    requested: float | None
    allocated_dra: float | None = None  # the part of `allocated` under DRA DeviceClasses
    requested_dra: float | None = None


def queue_rows(queues: Sequence[RawObject]) -> list[QueueRow]:
    """Every queue, depth-first from the roots (by name), each under its parent."""
    by_name = {conditions.object_name(q): q for q in queues}
    children: dict[str, list[str]] = {}
    for name, queue in by_name.items():
        children.setdefault(_parent(queue), []).append(name)
    roots = sorted(n for n, q in by_name.items() if _parent(q) not in by_name)
    rows: list[QueueRow] = []
    seen: set[str] = set()

    def visit(name: str, depth: int) -> None:
        if name in seen:  # a cycle written by hand: show each queue once
            return
        seen.add(name)
        rows.append(_row(by_name[name], depth, by_name, bool(children.get(name))))
        for child in sorted(children.get(name, [])):
            visit(child, depth + 1)

    for root in roots:
        visit(root, 0)
    for name in sorted(set(by_name) - seen):
        visit(name, 0)
    return rows


def _parent(queue: RawObject) -> str:
    return conditions.as_text(conditions.spec(queue).get("parentQueue"))


def _row(
    queue: RawObject, depth: int, by_name: dict[str, RawObject], has_children: bool
) -> QueueRow:
    spec, status = conditions.spec(queue), conditions.status(queue)
    gpu = conditions.as_mapping(conditions.as_mapping(spec.get("resources")).get("gpu"))
    parent = _parent(queue)
    return QueueRow(
        name=conditions.object_name(queue),
        display_name=conditions.as_text(spec.get("displayName")),
        depth=depth,
        parent=parent,
        parent_missing=bool(parent) and parent not in by_name,
        is_leaf=not has_children,
        quota=parse_quantity(gpu.get("quota")),
        limit=parse_quantity(gpu.get("limit")),
        weight=parse_quantity(gpu.get("overQuotaWeight")),
        allocated=_allocated_gpus(status),
        requested=_reported_gpus(status.get("requested")),
        allocated_dra=dra_gpus(status.get("allocated")),
        requested_dra=dra_gpus(status.get("requested")),
    )


def _allocated_gpus(status: RawObject) -> float | None:
    """Allocated GPUs; 0 when KAI wrote what the queue requests but no allocated list: its
    queue-controller leaves an empty list out (`allocated,omitempty`, KAI-scheduler
    pkg/apis/scheduling/v2/queue_types.go QueueStatus), as a real v0.12 install showed."""
    found = _reported_gpus(status.get("allocated"))
    if found is None and isinstance(status.get("requested"), Mapping):
        return 0.0
    return found


def _reported_gpus(resources: object) -> float | None:
    """The GPUs of a status resource list: 0 when KAI wrote one without GPUs in it, None when
    it wrote none."""
    if not isinstance(resources, Mapping):
        return None
    found = gpus(resources)
    return 0.0 if found is None else found


# What a number the queue does not have reads as: a spec value nobody set, a status value
# KAI's queue-controller has not written.
NOT_SET = "not set"
NOT_REPORTED = "none reported"
LEGEND = (
    "GPUs are whole devices: nvidia.com/gpu plus GPUs claimed through a DRA DeviceClass "
    '("N DRA" says how many of them); limit -1 shows as unlimited; "not set": the Queue has '
    'no such value; "none reported": KAI\'s queue-controller has written none yet.'
)


def gpu_numbers(row: QueueRow) -> str:
    """`GPU quota 4, limit 8, over-quota weight 1, allocated 8 (2 DRA), requested 24`."""
    return (
        f"GPU quota {show(row.quota, NOT_SET)}, limit {show(row.limit, NOT_SET)}, over-quota "
        f"weight {show(row.weight, NOT_SET)}, allocated {_used(row.allocated, row.allocated_dra)}, "
        f"requested {_used(row.requested, row.requested_dra)}"
    )


def _used(total: float | None, dra: float | None) -> str:
    return show(total, NOT_REPORTED) + (f" ({show(dra)} DRA)" if dra else "")
