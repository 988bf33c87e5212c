"""What the alert checks saw move on a cluster, remembered for `/kai timeline`. Pure.

Three things keep no history of their own on every release the bot supports, so the checks,
which read them anyway (the KAI Config and the APIService in every snapshot, the Kustomizations
through the same watched copies), compare each with what they saw last and keep the moves:
- a Kustomization's `status.lastAppliedRevision` ("The last successfully applied revision",
  fluxcd/kustomize-controller api/v1/kustomization_types.go, read at 186fb3b; its
  `status.history` exists only on recent releases);
- `kai-config`'s UID and `metadata.generation` (created, changed, deleted and created again);
- the external-metrics APIService's `Available` condition and its `spec.service`.
The memory lives in the cluster's alert state document (`ClusterAlerts.seen`), bounded by its
own caps inside that document's byte budget (`bot.alerts.budget`): the values of the objects
followed take at most VALUES_BYTES (about 170 Kustomizations of usual names; more are not
followed), the moves at most MOVES_BYTES and MOVES_KEPT (the newest kept), none older than
KEPT_FOR, each value cut to VALUE_CHARS: about 32 KB at the very worst.
No clock, no I/O: `now` is the check's.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

KUSTOMIZATION = "Kustomization"
CONFIG = "Config"
APISERVICE = "APIService"
VALUES_BYTES = 16_000  # of the objects followed (name and value each)
MOVES_BYTES = 16_000  # of the moves kept, newest
MOVES_KEPT = 100
KEPT_FOR = timedelta(days=7)  # `/kai timeline --since` goes back at most this far
VALUE_CHARS = 100
_ENTRY = 8  # JSON around a value: quotes, colon, comma
_MOVE = 90  # JSON around a move: its keys and time


@dataclass(frozen=True)
class Move:
    """One object seen to change: `before` "" when it was not there, `after` "" when gone."""

    at: datetime
    kind: str
    name: str
    before: str
    after: str


@dataclass(frozen=True)
class Sighting:
    """One object as a check saw it: its kind, name and the value followed."""

    kind: str
    name: str
    value: str


@dataclass(frozen=True)
class Seen:
    """The last value of each object followed ("Kind name" -> value), the moves seen, and when
    each kind was first read whole (the memory of that kind begins there)."""

    values: Mapping[str, str] = field(default_factory=dict)
    moves: tuple[Move, ...] = ()
    since: Mapping[str, datetime] = field(default_factory=dict)


def remember(
    seen: Seen, sighted: Iterable[Sighting], kinds: Collection[str], now: datetime
) -> Seen:
    """`seen` after a check that read the `kinds` whole and saw `sighted`: a value that differs
    from the last one is a move; an object of those kinds no longer sighted is gone. A kind
    read for the first time is remembered without moves (nobody saw it change). Returns
    `seen` itself when nothing moved, so a check at rest saves nothing."""
    values, moves, since = dict(seen.values), list(seen.moves), dict(seen.since)
    by_key = {_key(s.kind, s.name): s for s in sighted if s.kind in kinds}
    room = VALUES_BYTES - sum(len(k) + len(v) + _ENTRY for k, v in values.items())
    for key, sighting in by_key.items():
        value, before = sighting.value[:VALUE_CHARS], values.get(key)
        if before is None:
            room -= len(key) + len(value) + _ENTRY
        if before == value or room < 0:
            continue
        if sighting.kind in since and (before or "") != value:
            moves.append(Move(now, sighting.kind, sighting.name, before or "", value))
        values[key] = value
    for key in [k for k in values if _kind_of(k) in kinds and k not in by_key]:
        kind, name = key.split(" ", 1)
        if kind in since and values[key]:
            moves.append(Move(now, kind, name, values[key], ""))
        del values[key]
    for kind in kinds:
        since.setdefault(kind, now)
    changed = Seen(values, _newest(moves, now), since)
    return seen if changed == seen else changed


def _newest(moves: Sequence[Move], now: datetime) -> tuple[Move, ...]:
    """The newest moves within KEPT_FOR, MOVES_KEPT and MOVES_BYTES."""
    kept: list[Move] = []
    room = MOVES_BYTES
    for move in reversed(moves[-MOVES_KEPT:]):
        room -= len(move.kind) + len(move.name) + len(move.before) + len(move.after) + _MOVE
        if room < 0 or now - move.at > KEPT_FOR:
            break
        kept.append(move)
    return tuple(reversed(kept))


def config_sighting(config: Mapping[str, Any] | None) -> list[Sighting]:
    """`kai-config` as followed: its UID and generation (none when it is absent)."""
    if config is None:
        return []
    meta = _mapping(config.get("metadata"))
    value = f"{meta.get('uid') or '?'} {meta.get('generation') or '?'}"
    return [Sighting(CONFIG, str(meta.get("name") or "kai-config"), value)]


def apiservice_sighting(apiservice: Mapping[str, Any] | None) -> list[Sighting]:
    """The APIService as followed: `Available` (status, reason) and the Service behind it."""
    if apiservice is None:
        return []
    conditions = _list(_mapping(apiservice.get("status")).get("conditions"))
    condition = next(
        (_mapping(c) for c in conditions if _mapping(c).get("type") == "Available"), {}
    )
    status = str(condition.get("status") or "no condition")
    reason = f" ({condition['reason']})" if condition.get("reason") else ""
    service = _mapping(_mapping(apiservice.get("spec")).get("service"))
    backing = f"{service.get('namespace')}/{service.get('name')}" if service else "local"
    name = str(_mapping(apiservice.get("metadata")).get("name") or "")
    return [Sighting(APISERVICE, name, f"Available {status}{reason}, service {backing}")]


def kustomization_sightings(objects: Sequence[Mapping[str, Any]]) -> list[Sighting]:
    """Each Kustomization's `status.lastAppliedRevision` ("" before its first apply)."""
    sighted = []
    for obj in objects:
        meta = _mapping(obj.get("metadata"))
        name = f"{meta.get('namespace')}/{meta.get('name')}"
        revision = _mapping(obj.get("status")).get("lastAppliedRevision") or ""
        sighted.append(Sighting(KUSTOMIZATION, name, str(revision)))
    return sighted


def move_words(move: Move) -> str:
    """What a move means, in words: `applied main@sha1:4f2a (was main@sha1:9be1)`."""
    if move.kind == CONFIG:
        return _config_words(move.before, move.after)
    if not move.before:
        return f"applied {move.after}" if move.kind == KUSTOMIZATION else f"created: {move.after}"
    if not move.after:
        return "deleted"
    if move.kind == KUSTOMIZATION:
        return f"applied {move.after} (was {move.before})"
    return f"{move.before} → {move.after}"


def _config_words(before: str, after: str) -> str:
    (old_uid, _, old_gen), (uid, _, gen) = before.partition(" "), after.partition(" ")
    if not before:
        return f"created (UID {uid}, generation {gen})"
    if not after:
        return f"deleted (UID {old_uid})"
    if old_uid != uid:
        return f"deleted and created again (UID {old_uid} → {uid}, generation {gen})"
    return f"changed: generation {old_gen} → {gen}"


def _key(kind: str, name: str) -> str:
    return f"{kind} {name}"


def _kind_of(key: str) -> str:
    return key.split(" ", 1)[0]


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
