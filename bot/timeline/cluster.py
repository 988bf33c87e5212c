"""What changed in the cluster itself, read from the objects that record it. Pure.

- Rollouts of KAI's and KEDA's workloads: each new ReplicaSet of a Deployment (created at its
  `creationTimestamp`, numbered by the `deployment.kubernetes.io/revision` annotation the
  Deployment controller writes), and each ControllerRevision of a DaemonSet (its `revision`),
  in KAI's namespace and in the namespace of the APIService's Service (KEDA's).
- `kai-config`'s creation, from its `creationTimestamp`; its changes and deletions from the
  checks' memory of moves (`bot.alerts.seen`), as are Kustomization revisions and the
  APIService's.
- KAI's evictions: its `Evict` Events (read as `bot.notices.evictions` reads them). The API
  server keeps Events for `--event-ttl`, one hour by default: older ones are gone.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from bot.alerts import seen
from bot.alerts.seen import Move, Seen
from bot.core import conditions as c
from bot.core.models import RawObject
from bot.core.redaction import redact
from bot.notices.evictions import read_eviction
from bot.notices.render import ACTIONS
from bot.timeline.model import APISERVICE, EVICTION, FLUX, KAI, ROLLOUT, Entry, Reach, within

REVISION = "deployment.kubernetes.io/revision"
EVENT_TTL = timedelta(hours=1)  # kube-apiserver's --event-ttl default
_SOURCE_OF = {seen.KUSTOMIZATION: FLUX, seen.CONFIG: KAI, seen.APISERVICE: APISERVICE}


def rollout_entries(
    replica_sets: Iterable[RawObject],
    revisions: Iterable[RawObject],
    start: datetime,
    end: datetime,
) -> list[Entry]:
    """Each ReplicaSet or ControllerRevision created within the window: a rollout of its
    owner (a Deployment, a DaemonSet). (A list's items carry no `kind`: the caller says.)"""
    made = [(obj, False) for obj in replica_sets] + [(obj, True) for obj in revisions]
    entries = []
    for obj, is_revision in made:
        at = c.creation_time(obj)
        if at is None or not within(at, start, end):
            continue
        owner_kind, owner = _owner(obj, "DaemonSet" if is_revision else "Deployment")
        name = c.object_name(obj)
        if is_revision:
            number = c.as_int(obj.get("revision")) or "?"
            words = f"rolled out revision {number} (ControllerRevision {name})"
        else:
            number = _number(c.annotations_of(obj).get(REVISION))
            words = f"rolled out revision {number} (ReplicaSet {name}{_images(obj)})"
        subject = f"{owner_kind} {c.object_namespace(obj)}/{owner}"
        entries.append(Entry(at, ROLLOUT, subject, words))
    return entries


def _number(value: object) -> int | str:
    """An annotation's number (annotations are strings), else "?"."""
    text = c.as_text(value).strip()
    return int(text) if text.isdigit() else "?"


def _owner(obj: RawObject, usual: str) -> tuple[str, str]:
    """The object's controller (kind, name); without one, the object itself."""
    owners = c.metadata(obj).get("ownerReferences")
    first = c.as_mapping(owners[0]) if isinstance(owners, list) and owners else {}
    return c.as_text(first.get("kind")) or usual, c.as_text(first.get("name")) or c.object_name(obj)


def _images(replica_set: RawObject) -> str:
    template = c.as_mapping(c.spec(replica_set).get("template"))
    containers = c.as_mapping(template.get("spec")).get("containers")
    images = [c.as_text(c.as_mapping(x).get("image")) for x in containers or []]
    return f": {', '.join(i for i in images if i)}" if any(images) else ""


def config_created(config: RawObject | None, start: datetime, end: datetime) -> list[Entry]:
    """`kai-config` created within the window, from its own `creationTimestamp`."""
    at = c.creation_time(config) if config is not None else None
    if config is None or at is None or not within(at, start, end):
        return []
    meta = c.metadata(config)
    words = f"created (UID {meta.get('uid')}, generation {meta.get('generation')})"
    return [Entry(at, KAI, f"Config {c.object_name(config)}", words)]


def moves_entries(
    memory: Seen, start: datetime, end: datetime, config: RawObject | None
) -> list[Entry]:
    """What the checks saw move within the window; the creation of the `kai-config` that
    stands now is told from its own `creationTimestamp` instead (`config_created`)."""
    uid = c.as_text(c.metadata(config).get("uid")) if config is not None else ""
    return [
        Entry(m.at, _SOURCE_OF.get(m.kind, m.kind), f"{m.kind} {m.name}", seen.move_words(m))
        for m in memory.moves
        if within(m.at, start, end) and not _is_creation_of(m, uid)
    ]


def _is_creation_of(move: Move, uid: str) -> bool:
    """A move that created the Config that stands now (told from its own creation time)."""
    created = move.kind == seen.CONFIG and not move.before
    return created and bool(uid) and move.after.partition(" ")[0] == uid


def moves_reach(memory: Seen, start: datetime) -> list[Reach]:
    """Said when the memory of moves begins after the window's start."""
    began = [memory.since[k] for k in (seen.KUSTOMIZATION, seen.CONFIG) if k in memory.since]
    if memory.moves and len(memory.moves) >= seen.MOVES_KEPT:
        began.append(memory.moves[0].at)
    if not began or max(began) <= start:
        return []
    note = "what kai-chatops saw move since it began following them"
    return [Reach("Kustomization, kai-config and APIService moves", max(began), note)]


def eviction_entries(events: Iterable[RawObject], start: datetime, end: datetime) -> list[Entry]:
    """Each KAI eviction whose latest occurrence falls within the window."""
    entries = []
    for event in events:
        eviction = read_eviction(event)
        if eviction is None or eviction.at is None or not within(eviction.at, start, end):
            continue
        action = ACTIONS.get(eviction.action, ("evicted", ""))[0]
        pods = f"{eviction.pods} pod(s) " if eviction.pods else ""
        words = f"{pods}{action} by KAI"
        if eviction.evictor:
            words += f" for {eviction.evictor_namespace or eviction.namespace}/{eviction.evictor}"
        if eviction.count > 1:
            words += f" ({eviction.count} times)"
        subject = f"PodGroup {eviction.namespace}/{eviction.group}"
        entries.append(Entry(eviction.at, EVICTION, subject, redact(words)))
    return entries


def events_reach(now: datetime, start: datetime) -> list[Reach]:
    """Said when the window begins before the API server's Event lifetime."""
    kept_from = now - EVENT_TTL
    if start >= kept_from:
        return []
    note = "KAI's Evict Events last an hour by default, kube-apiserver --event-ttl"
    return [Reach("Evictions", kept_from, note)]
