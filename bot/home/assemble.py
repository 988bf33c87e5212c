"""From objects as read to the Home tab's held objects: what is paused or suspended, by whom.

Pure: the pause is read as KEDA reads it (`bot.rules.keda`: the annotation, not the lagging
condition), the suspend as Flux does (`spec.suspend`), with our `kai-chatops/` record beside it.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.core import conditions as c
from bot.core.models import RawObject
from bot.home.model import HeldObject
from bot.rules import keda
from bot.rules.flux_suspend import read_suspend_record


def paused_objects(objs: Iterable[RawObject], cluster: str) -> list[HeldObject]:
    """The ScaledJobs and ScaledObjects KEDA treats as paused."""
    held = []
    for obj in objs:
        state = keda.read_pause_state(obj)
        if state.paused:
            held.append(
                HeldObject(
                    "paused",
                    state.kind,
                    c.object_namespace(obj) or "",
                    c.object_name(obj),
                    cluster,
                    state.paused_by or "",
                    state.paused_at or "",
                    state.reason or "",
                    state.until or "",
                )
            )
    return held


def suspended_objects(objs: Iterable[RawObject], cluster: str) -> list[HeldObject]:
    """The Flux objects with `spec.suspend: true`."""
    held = []
    for obj in objs:
        found = read_suspend_record(obj)
        if found.suspended:
            where = (c.object_namespace(obj) or "", c.object_name(obj))
            kind = c.as_text(obj.get("kind"))
            record = (found.by, found.at, found.reason, found.until)
            held.append(HeldObject("suspended", kind, *where, cluster, *record))
    return held


def ordered(held: Iterable[HeldObject]) -> list[HeldObject]:
    """By cluster, then kind, namespace and name: the same order on every refresh."""
    return sorted(held, key=lambda h: (h.cluster, h.what, h.kind, h.namespace, h.name))
