"""Alert state documents at their biggest, for the byte budget's tests: eviction notice threads
as the notices leave them, incidents with every reply remembered, their whole history kept and
a full diagnosis and what-changed owed, and the memory of moves at its caps."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from bot.alerts import outbox, seen
from bot.alerts.model import (
    AlertKey,
    AlertState,
    ClusterAlerts,
    EffectKind,
    Note,
    NoteKind,
    Observation,
    Owed,
    Severity,
)
from bot.alerts.notice_thread import NoticeThread
from bot.alerts.render_evidence import CHANGES_KEPT, EVIDENCE_KEPT
from bot.alerts.seen import Seen

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
CLUSTER = "prod-eu-west-1"
TS = "1772359200.000100"


def thread(i: int, replies: int = 1, owing: bool = False, cluster: str = CLUSTER) -> NoticeThread:
    """An eviction notice thread as the notices leave it: its root and `replies` delivered."""
    key = f"{cluster}/evict/{i:08d}-7d2c-4b7e-9a51-1f0c3e8b{i:04d}"
    delivered = {f"{key}:{n}": f"1772359200.{n:06d}" for n in range(1, replies + 1)}
    owed = (Owed(f"{key}:{replies + 1}", EffectKind.NOTICE, text="x" * 400),) if owing else ()
    return NoticeThread(
        key, "C0ALERTS01", replies + 1, T0 + timedelta(seconds=i), outbox=owed,
        owed_count=replies + 1, root_ts=TS, root_anchor=TS, delivered=delivered,
    )  # fmt: skip


def incident(n: int, *, closed: bool = False, diagnosis: bool = True) -> AlertState:
    """An incident at its biggest: DELIVERED_KEPT replies remembered, five command IDs, and
    (open, with `diagnosis`) its root and a diagnosis of EVIDENCE_KEPT characters still owed."""
    key = AlertKey(CLUSTER, "Deployment", f"kai-scheduler/scheduler-shard-{n}", "Available")
    seen = Observation(
        key, Severity.CRITICAL, "No available replica of the scheduler of shard",
        reason="MinimumReplicasUnavailable",
        message="Deployment does not have minimum availability. " * 3,
        check_first="kubectl -n kai-scheduler describe deployment scheduler-shard", since=T0,
    )  # fmt: skip
    alert = AlertState(
        seen, first_seen=T0 + timedelta(minutes=n), firing_since=T0 + timedelta(minutes=n),
        root_channel="C0ALERTS01", root_ts=TS, root_anchor=TS, acked_by="U0ONCALL01",
        commands=tuple(f"command-{i:032d}" for i in range(5)),
    )  # fmt: skip
    replies = {f"{alert.incident}:{k}": f"1772359400.{k:06d}" for k in range(outbox.DELIVERED_KEPT)}
    told = Note(NoteKind.SILENCED, T0, "U0ONCALL01", "r" * outbox.HISTORY_REASON, T0)
    history = (told,) * outbox.HISTORY_KEPT
    alert = replace(alert, delivered=replies, owed_count=outbox.DELIVERED_KEPT + 1, history=history)
    if closed:
        return replace(alert, resolved_at=T0 + timedelta(hours=2))
    if diagnosis:
        note = Note(NoteKind.DIAGNOSIS, T0)
        half = EVIDENCE_KEPT // 2
        blocks = ({"type": "section", "text": {"type": "mrkdwn", "text": "y" * (half - 100)}},)
        changes = Note(NoteKind.CHANGES, T0)
        owed = (
            Owed(f"{alert.incident}:0", EffectKind.ROOT, attempt="a" * 32, anchor=TS),
            Owed(f"{alert.incident}:1", EffectKind.REPLY, note, text="x" * half, blocks=blocks),
            Owed(f"{alert.incident}:2", EffectKind.REPLY, changes, text="z" * CHANGES_KEPT),
        )
        alert = replace(alert, root_ts="", outbox=owed)
    return alert


def memory_at_its_caps() -> Seen:
    """What the checks remember of moves at its biggest, as `remember` leaves it: the longest
    names Kubernetes allows (a namespace of 63 characters, a name of 253), every value at full
    length, as many values and moves as its byte caps let in."""
    name = f"{'n' * 63}/{'k' * 253}"
    value = "v" * seen.VALUE_CHARS
    sighted = [seen.Sighting("Kustomization", f"{name[:-4]}{i:04d}", value) for i in range(500)]
    memory = seen.remember(Seen(), sighted, {"Kustomization"}, T0)
    for n in range(seen.MOVES_KEPT):
        moved = [seen.Sighting(s.kind, s.name, f"{n:03d}{value[3:]}") for s in sighted]
        memory = seen.remember(memory, moved, {"Kustomization"}, T0 + timedelta(seconds=n))
    return memory


def state(
    threads: int = 0,
    closed: int = 0,
    open_: int = 0,
    *,
    cluster: str = CLUSTER,
    memory: bool = False,
    **kw: object,
) -> ClusterAlerts:
    alerts = [incident(n) for n in range(open_)]
    return ClusterAlerts(
        cluster,
        alerts={a.key: a for a in alerts},
        threads=tuple(thread(i, cluster=cluster, **kw) for i in range(threads)),  # type: ignore
        recent=tuple(incident(100 + n, closed=True) for n in range(closed)),
        seen=memory_at_its_caps() if memory else Seen(),
    )
