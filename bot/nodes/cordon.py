"""Planning a cordon or uncordon: the merge patch, why nothing is written, when it ends.

Pure (docs/design.md §2 "GPU nodes"). Cordon writes `spec.unschedulable: true`, as `kubectl
cordon` does (k8s.io/kubectl pkg/drain/cordon.go `PatchOrReplaceWithContext`), with our record
under `kai-chatops/` (who, when, why, until); uncordon writes `spec.unschedulable: false` and
deletes the record. Nothing else of the node is touched, and nothing is drained. A node already
cordoned is refused rather than cordoned again, so nobody's record of why (or a health tool's
cordon) is overwritten. No I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from bot.core import conditions as c
from bot.core.models import RawObject
from bot.kube import kinds
from bot.nodes import gpus
from bot.nodes.gpus import CordonRecord

CordonAction = Literal["cordon", "uncordon"]
ALREADY_CORDONED = "it is already cordoned"
NOT_CORDONED = "it is not cordoned"


@dataclass(frozen=True)
class NodeTarget:
    """One node on one cluster."""

    name: str
    cluster: str

    @property
    def ref(self) -> kinds.ResourceRef:
        return kinds.NODE

    def describe(self) -> str:
        """`Node gpu-node-1 on prod` (a timed-change sweep finds its cluster by `on prod`)."""
        return f"Node {self.name} on {self.cluster}"


@dataclass(frozen=True)
class CordonPlan:
    """A cordon or uncordon decided from the node as read; `refusal` set: write nothing."""

    action: CordonAction
    target: NodeTarget
    before: CordonRecord
    gpus: int = 0  # its nvidia.com/gpu capacity (0: a node without GPUs)
    patch: Mapping[str, Any] = field(default_factory=dict)
    until: datetime | None = None
    refusal: str = ""

    def patch_body(self, resource_version: str) -> dict[str, Any]:
        """The merge patch; with the resourceVersion read, a concurrent change answers 409."""
        metadata = dict(self.patch.get("metadata") or {})
        if resource_version:
            metadata["resourceVersion"] = resource_version
        return {**self.patch, "metadata": metadata}


@dataclass(frozen=True)
class ExpiredCordon:
    """A timed cordon of ours whose `cordon-until` has passed."""

    target: NodeTarget
    record: CordonRecord
    until: datetime
    cordoned_at: datetime | None

    @property
    def length(self) -> timedelta | None:
        """How long it was meant to last (`cordon-until` minus `cordoned-at`)."""
        return self.until - self.cordoned_at if self.cordoned_at is not None else None


def plan_cordon(
    obj: RawObject,
    target: NodeTarget,
    *,
    user: str,
    reason: str,
    duration: timedelta | None,
    now: datetime,
) -> CordonPlan:
    """`spec.unschedulable: true` and our record; stale keys of an older record are deleted."""
    before, count = gpus.read_cordon(obj), _gpus_of(obj)
    if before.cordoned:
        return CordonPlan("cordon", target, before, count, refusal=ALREADY_CORDONED)
    until = now + duration if duration is not None else None
    wanted: dict[str, str | None] = {
        gpus.CORDONED_BY: user,
        gpus.CORDONED_AT: c.format_timestamp(now),
        gpus.CORDON_REASON: reason or None,
        gpus.CORDON_UNTIL: c.format_timestamp(until) if until is not None else None,
    }
    present = c.annotations_of(obj)
    annotations = {k: v for k, v in wanted.items() if v is not None or k in present}
    patch = {"spec": {"unschedulable": True}, "metadata": {"annotations": annotations}}
    return CordonPlan("cordon", target, before, count, patch, until)


def plan_uncordon(obj: RawObject, target: NodeTarget) -> CordonPlan:
    """`spec.unschedulable: false`, and our record deleted (merge-patch null)."""
    before, count = gpus.read_cordon(obj), _gpus_of(obj)
    if not before.cordoned:
        return CordonPlan("uncordon", target, before, count, refusal=NOT_CORDONED)
    present = c.annotations_of(obj)
    stale = {key: None for key in gpus.RECORD_KEYS if key in present}
    patch: dict[str, Any] = {"spec": {"unschedulable": False}}
    if stale:
        patch["metadata"] = {"annotations": stale}
    return CordonPlan("uncordon", target, before, count, patch)


def find_expired_cordon(obj: RawObject, cluster: str, now: datetime) -> ExpiredCordon | None:
    """The node's timed cordon when it is ours, still in force and past `cordon-until`.

    A node uncordoned by hand, or whose record was changed by hand (no `cordon-until`, a later
    one), is left alone: the node as it now stands decides.
    """
    found = gpus.read_cordon(obj)
    until = c.parse_timestamp(found.until)
    if not found.is_ours or until is None or until > now:
        return None
    target = NodeTarget(c.object_name(obj), cluster)
    return ExpiredCordon(target, found, until, c.parse_timestamp(found.at))


def next_due(objs: Sequence[RawObject], now: datetime) -> datetime | None:
    """The soonest `cordon-until` still ahead among our timed cordons in force."""
    dues = []
    for obj in objs:
        found = gpus.read_cordon(obj)
        until = c.parse_timestamp(found.until)
        if found.is_ours and until is not None and until > now:
            dues.append(until)
    return min(dues, default=None)


def _gpus_of(obj: RawObject) -> int:
    return gpus.gpu_count(c.status(obj).get("capacity"))
