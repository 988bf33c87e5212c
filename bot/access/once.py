"""What may happen only once: each signed Slack request, each Confirm; shared by every replica.

A key is claimed until a given time: the first claim wins, any other before that time loses.
The memory lives where the alert state does (`state.backend`): a SQLite file of its own beside
`state.path`, or a ConfigMap of its own (`<state.configmap>-once`) claimed with the
resourceVersion read, so two replicas racing for one key cannot both win. Expired keys are
dropped on the next claim of the same space (a key is `SPACE-ID`; requests and confirmations
keep time by different clocks: Slack's and the service's); a claim that would take the ConfigMap
past `MAX_BYTES` first drops every key past its time, whatever its space, and whatever is no
expiry (approval records a release before kept here): nothing else takes the memory's room, and
a full memory frees itself as its keys' windows end. Not the alert store: claims come
with every request, and must not contend with alert saves. Each store takes claims in batches,
in order, in one write (`claim_all`); `bot.access.grouped` gathers concurrent claims into one.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from bot.config.settings import Settings
from bot.kube.ports import KubeWriter
from bot.state.configmap import ConfigMapDocument
from bot.state.retry import Raises, StateUnavailable
from bot.state.sqlite import SqliteFile

SQLITE_TABLE = "CREATE TABLE IF NOT EXISTS once_keys (key TEXT PRIMARY KEY, until REAL)"


class OnceUnavailable(StateUnavailable):
    """The shared memory could not be read or written; whether the key was used is unknown."""


class OnceFull(OnceUnavailable):
    """The ConfigMap memory holds `MAX_BYTES` of keys still in their window: no key is added
    (a change is refused with "try again", a read runs) until some expire, within minutes."""


# A ConfigMap holds at most 1 MiB (etcd's limit, with its metadata): the memory stays under it.
# About 90 bytes a key: some 9 700 signed requests or Confirms within their windows.
MAX_BYTES = 900_000


@dataclass(frozen=True)
class Claim:
    """Claim `key` until `until`, as of `now` (by the clock of the key's space)."""

    key: str
    until: datetime
    now: datetime


class OnceStore(Protocol):
    """Claim a key until a time; True exactly once for each key while it is remembered."""

    async def claim(self, key: str, until: datetime, now: datetime) -> bool:
        """Raises: OnceUnavailable."""
        ...

    def close(self) -> None: ...


class BatchStore(OnceStore, Protocol):
    """A store that takes several claims in one write: each answered as if claimed in turn."""

    async def claim_all(self, claims: Sequence[Claim]) -> list[bool]:
        """Raises: OnceUnavailable (then none of the claims was made)."""
        ...


class MemoryOnce:
    """One process's memory: each replica's own memory of requests (`SeenRequests`), and tests.

    Forgetting costs only the keys that expired: a heap per space, soonest expiry first, so a
    claim never walks the whole memory (it is asked before every ack).
    """

    def __init__(self) -> None:
        self._until: dict[str, datetime] = {}
        self._expiries: dict[str, list[tuple[datetime, str]]] = {}

    async def claim(self, key: str, until: datetime, now: datetime) -> bool:
        self._forget_expired(space_of(key), now)
        if key in self._until:
            return False
        self._until[key] = until
        heapq.heappush(self._expiries.setdefault(space_of(key), []), (until, key))
        return True

    def _forget_expired(self, space: str, now: datetime) -> None:
        expiries = self._expiries.get(space, [])
        while expiries and expiries[0][0] <= now:
            until, key = heapq.heappop(expiries)
            if self._until.get(key) == until:
                del self._until[key]

    def close(self) -> None:
        """Nothing to release."""


class SqliteOnce:
    """Claims in a SQLite file (replicas on one volume share it); runs in a worker thread."""

    def __init__(self, path: str) -> None:
        self.path = path
        raises = Raises("request memory file", OnceUnavailable)
        self._file = SqliteFile(path, [SQLITE_TABLE], raises)

    async def claim(self, key: str, until: datetime, now: datetime) -> bool:
        return (await self.claim_all([Claim(key, until, now)]))[0]

    async def claim_all(self, claims: Sequence[Claim]) -> list[bool]:
        # One transaction: per claim, drop the expired, insert unless present.
        return await self._file.run(lambda db: [_claim_row(db, claim) for claim in claims])

    def close(self) -> None:
        self._file.close()


def _claim_row(db: sqlite3.Connection, claim: Claim) -> bool:
    db.execute(
        "DELETE FROM once_keys WHERE until <= ? AND key LIKE ?",
        (claim.now.timestamp(), space_of(claim.key) + "-%"),
    )
    inserted = db.execute(
        "INSERT OR IGNORE INTO once_keys (key, until) VALUES (?, ?)",
        (claim.key, claim.until.timestamp()),
    ).rowcount
    return bool(inserted == 1)


class ConfigMapOnce:
    """Claims as keys of one ConfigMap (value: the expiry, seconds since the epoch)."""

    def __init__(self, kube: KubeWriter, *, namespace: str, name: str) -> None:
        self.namespace, self.name = namespace, name
        raises = Raises("request memory ConfigMap", OnceUnavailable)
        self._document = ConfigMapDocument(kube, namespace, name, raises)

    async def claim(self, key: str, until: datetime, now: datetime) -> bool:
        return (await self.claim_all([Claim(key, until, now)]))[0]

    async def claim_all(self, claims: Sequence[Claim]) -> list[bool]:
        def claim_in(stored: Mapping[str, str]) -> tuple[dict[str, str | None], list[bool]]:
            data, changes = dict(stored), dict[str, str | None]()
            won = [_claim_in(data, changes, claim) for claim in claims]
            if any(won):
                self._check_room(data, changes, min(claim.now for claim in claims))
            return changes, won  # none won: nothing changed, nothing written

        gave_up = "request memory ConfigMap kept changing under us"
        return await self._document.change(claim_in, gave_up=gave_up)

    def _check_room(
        self, data: dict[str, str], changes: dict[str, str | None], now: datetime
    ) -> None:
        """Past `MAX_BYTES`, every key past its time goes, whatever its space, and every value
        that is no expiry (approval records a release before kept here, `approval-<ID>`); then
        raises OnceFull when `data` would still take the ConfigMap past `MAX_BYTES`."""
        if stored_bytes(data) > MAX_BYTES:
            _forget_past(data, changes, now.timestamp())
        if stored_bytes(data) > MAX_BYTES:
            raise OnceFull(
                f"request memory ConfigMap {self.namespace}/{self.name} is full "
                f"({len(data)} keys within their window, {MAX_BYTES} bytes); it frees up as "
                "they expire (within 6 minutes)"
            )

    def close(self) -> None:
        """Nothing to release: the Kubernetes gateway belongs to the service."""


def _claim_in(data: dict[str, str], changes: dict[str, str | None], claim: Claim) -> bool:
    """One claim against a ConfigMap's data, in place; what changed is noted in `changes`
    (None: the key is dropped)."""
    now = claim.now.timestamp()
    if claim.key in data and _expiry(data[claim.key]) > now:
        return False
    space = space_of(claim.key)
    for key in [k for k, v in data.items() if _expiry(v) <= now and space_of(k) == space]:
        del data[key]
        changes[key] = None
    data[claim.key] = changes[claim.key] = repr(claim.until.timestamp())
    return True


def _forget_past(data: dict[str, str], changes: dict[str, str | None], now: float) -> None:
    """Drop from `data` (noted in `changes`) every key whose expiry is not after `now`."""
    for key in [k for k, v in data.items() if _expiry(v) <= now]:
        del data[key]
        changes[key] = None


def stored_bytes(data: Mapping[str, str]) -> int:
    """The bytes of `data` as compact JSON: more than a ConfigMap's limit counts (the values)."""
    return len(json.dumps(dict(data), separators=(",", ":")))


def space_of(key: str) -> str:
    """The space a key belongs to: what comes before its first `-`."""
    return key.partition("-")[0]


def _expiry(value: object) -> float:
    """A stored expiry; an unreadable one has expired (it is dropped, never trusted)."""
    try:
        return float(str(value))
    except ValueError:
        return 0.0


def sqlite_path(state_path: str) -> str:
    """The request memory's file, beside the alert state's: `x.sqlite` -> `x.once.sqlite`."""
    path = Path(state_path)
    return str(path.with_name(f"{path.stem}.once{path.suffix or '.sqlite'}"))


def configmap_name(state_configmap: str) -> str:
    """The request memory's ConfigMap, named after the alert state's."""
    return f"{state_configmap}-once"


def open_store(settings: Settings, kube: KubeWriter) -> BatchStore:
    """The memory `state.backend` names; `kube` is the first cluster's gateway (for configmap).
    The service groups concurrent claims over it (`bot.access.grouped.open_once`)."""
    state = settings.state
    if state.backend == "sqlite":
        return SqliteOnce(sqlite_path(state.path))
    return ConfigMapOnce(kube, namespace=state.namespace, name=configmap_name(state.configmap))
