"""What is held on a cluster: paused KEDA objects and suspended Flux objects, with our record.

The one reading of these facts, shared by the Home tab, `/kai changes` and the reminders of
forgotten pauses: a KEDA pause as KEDA reads it (`bot.rules.keda`: the annotations, not the
lagging condition; `paused-replicas` and one-direction pauses included), a Flux suspend as Flux
does (`spec.suspend`, `bot.rules.flux_suspend`), each with the `kai-chatops/` record beside it
(who, when, why, until; empty when done by hand). Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from bot.core import conditions as c
from bot.core.models import RawObject
from bot.rules import keda
from bot.rules.flux_suspend import read_suspend_record

KindScope = tuple[str, str | None]  # a kind and a namespace (None: every namespace)


@dataclass(frozen=True)
class HeldObject:
    """A paused ScaledJob/ScaledObject or a suspended Flux object, with our record if any."""

    what: Literal["paused", "suspended"]
    kind: str
    namespace: str
    name: str
    cluster: str
    by: str = ""  # "" when paused or suspended by hand
    at: str = ""  # RFC 3339, as written on the object
    reason: str = ""
    until: str = ""
    how: str = ""  # how a KEDA object is paused when not simply so: "at 0 replicas", "scale-in"

    @property
    def is_timed(self) -> bool:
        """Whether it ends by itself: an `until` that is a time (one written by hand that is
        not a time ends nothing, so the pause has no end)."""
        return c.parse_timestamp(self.until) is not None

    @property
    def target(self) -> str:
        """`ScaledJob annia/annia-worker`."""
        return f"{self.kind} {self.namespace}/{self.name}"


def paused_objects(objs: Iterable[RawObject], cluster: str) -> list[HeldObject]:
    """The ScaledJobs and ScaledObjects KEDA treats as paused, in full or in one direction."""
    held = []
    for obj in objs:
        state = keda.read_pause_state(obj)
        if state.paused or state.paused_directions:
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
                    _how(state),
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


def covers(places: Iterable[KindScope], kind: str, namespace: str) -> bool:
    """Whether a read of `places` (each listed in full) would have seen an object of `kind` in
    `namespace` held, if it were: only then does not seeing it mean it is no longer held."""
    wanted = {(kind, namespace), (kind, None)}
    return any(place in wanted for place in places)


def _how(state: keda.PauseState) -> str:
    if not state.paused:
        return " and ".join(state.paused_directions)  # "scale-in", "scale-in and scale-out"
    if not keda.is_paused_value(state.paused_value) and state.paused_replicas is not None:
        return f"at {state.paused_replicas} replicas"
    return ""
