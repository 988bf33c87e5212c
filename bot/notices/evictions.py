"""A KAI `Evict` Event read as an eviction, and whether the channel has been told of it. Pure.

KAI's scheduler records, for every pod it evicts, a Normal Event `reason: Evict` on the evicted
PodGroup (involvedObject kind PodGroup, scheduling.run.ai/v2alpha2), with the annotations
`evictor-action-type` (`preempt`, `reclaim`, `consolidation`, `stalegangeviction`),
`num-evicted-pods`, and, unless a stale gang, `evictor-pod-group-name` /
`evictor-pod-group-namespace` (KAI-Scheduler pkg/scheduler/cache/status_updater/
default_status_updater.go `Evicted`; the action names in pkg/scheduler/framework/interface.go).
An Event without them is still an eviction by KAI: it is read with what it has, nothing guessed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.alerts import outbox
from bot.alerts.model import ClusterAlerts
from bot.alerts.notice_thread import NoticeThread
from bot.core import conditions as c
from bot.core.models import RawObject
from bot.diagnostics.evidence import event_time

REASON = "Evict"
SELECTOR = f"reason={REASON}"  # the field selector the Events are watched with
ACTION = "evictor-action-type"
PODS = "num-evicted-pods"
EVICTOR = "evictor-pod-group-name"
EVICTOR_NAMESPACE = "evictor-pod-group-namespace"
OLD_AFTER = timedelta(hours=1)  # an Event already this old when first seen is not told
FORGET_AFTER = timedelta(hours=3)  # a thread quiet this long leaves the state
# At most this many threads per cluster: about 350 bytes each as the notices leave them, 300 take
# about 100 KB of a document's 800 000-byte budget (`bot.alerts.budget`, which sheds the oldest
# first when threads of many replies would not fit; tests/unit/test_state_budget.py checks it).
THREADS_KEPT = 300


@dataclass(frozen=True)
class Eviction:
    """What one Evict Event says; "" or None where it says nothing."""

    uid: str
    namespace: str  # the evicted PodGroup's
    group: str
    count: int  # how many times the Event happened (a rise is another eviction)
    at: datetime | None  # its latest occurrence
    message: str
    action: str = ""
    pods: int | None = None
    evictor: str = ""
    evictor_namespace: str = ""

    @property
    def has_annotations(self) -> bool:
        return bool(self.action)


class Told(enum.Enum):
    """Where an eviction stands with the channel."""

    NEW = "new"  # never told: its notice is owed
    AGAIN = "again"  # told, and its count rose since: a reply under the notice is owed
    KNOWN = "known"  # told as far as it goes (or forgotten after it was)
    OLD = "old"  # first seen more than OLD_AFTER after it happened: not told


def read_eviction(event: RawObject) -> Eviction | None:
    """The eviction an Event records, or None when it is not an Evict Event with a UID."""
    if c.as_text(event.get("reason")) != REASON:
        return None
    uid = c.as_text(c.metadata(event).get("uid"))
    if not uid:
        return None
    involved = c.as_mapping(event.get("involvedObject"))
    notes = c.annotations_of(event)
    pods = _count(notes.get(PODS))
    return Eviction(
        uid=uid,
        namespace=c.as_text(involved.get("namespace")) or c.object_namespace(event) or "",
        group=c.as_text(involved.get("name")),
        count=max(1, c.as_int(event.get("count")) or 1),
        at=event_time(event),  # its latest occurrence
        message=c.as_text(event.get("message")),
        action=c.as_text(notes.get(ACTION)),
        pods=pods if pods is not None and pods > 0 else None,
        evictor=c.as_text(notes.get(EVICTOR)),
        evictor_namespace=c.as_text(notes.get(EVICTOR_NAMESPACE)),
    )


def _count(value: object) -> int | None:
    """An annotation's number (annotations are strings: `"4"`); None when it is not one."""
    text = c.as_text(value).strip()
    return int(text) if text.isdigit() else None


def thread_key(cluster: str, eviction: Eviction) -> str:
    return f"{cluster}/evict/{eviction.uid}"


def judge(state: ClusterAlerts, eviction: Eviction, now: datetime) -> Told:
    """Whether `eviction` is news to the channel of `state`'s cluster."""
    thread = outbox.find_thread(state, thread_key(state.cluster, eviction))
    if thread is not None:
        return Told.AGAIN if eviction.count > thread.count else Told.KNOWN
    at = eviction.at or now
    if state.forgotten is not None and at <= state.forgotten:
        return Told.KNOWN
    return Told.OLD if now - at > OLD_AFTER else Told.NEW


@dataclass(frozen=True)
class Telling:
    """What to say of an eviction: its channel, its notice and the reply for a rise (each as
    fallback text and blocks, rendered)."""

    channel: str
    notice: tuple[str, tuple[RawObject, ...]]
    again: tuple[str, tuple[RawObject, ...]]


def record(
    state: ClusterAlerts, eviction: Eviction, now: datetime, telling: Telling
) -> ClusterAlerts:
    """`state` owing what `eviction` still needs said (judged again here: another replica may
    have told it since it was read), with long-quiet threads forgotten."""
    told = judge(state, eviction, now)
    key = thread_key(state.cluster, eviction)
    at = eviction.at or now
    if told is Told.NEW:
        thread = NoticeThread(key, telling.channel, eviction.count, at)
        state = outbox.open_thread(state, thread, *telling.notice)
    elif told is Told.AGAIN:
        state = outbox.reply_in_thread(state, key, eviction.count, at, *telling.again)
    return outbox.forget_threads(state, now - FORGET_AFTER, THREADS_KEPT)
