"""Where alert state lives between checks, restarts and replicas: a SQLite file or a ConfigMap.

One JSON document per cluster (`bot.alerts.document.dump_cluster`) with a version: a save names
the version it read and raises `StoreConflict` when someone saved since (another replica
answering `/kai ack`, say), so the caller reloads and redoes its step (`update`). A document
that cannot be decoded loads as empty state with its `Damage`; the next save keeps the damaged
text aside, beside the document (a table row, a ConfigMap key). SQLite runs in a worker thread
(`asyncio.to_thread`): a commit waits for the disk, and the event loop must not.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from bot.alerts.document import DamagedState, dump_cluster, load_cluster
from bot.alerts.model import ClusterAlerts
from bot.config.settings import Settings
from bot.core import errors
from bot.core.models import RawObject
from bot.kube.kinds import CONFIG_MAP, owned_config_map
from bot.kube.ports import KubeWriter

log = logging.getLogger(__name__)

NEW = ""  # the version of a document never saved
SAVE_TRIES = 5  # a change redone after StoreConflict, at most this many times
WRITE_BACKOFFS = (0.5, 1.0, 2.0)  # seconds between tries of a guarded write that got a 5xx
T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


class StoreConflict(errors.BotError):
    """The document changed since it was read; reload and try again."""


class StoreUnavailable(errors.BotError):
    """The state could not be read or written (disk, database or API server)."""


@dataclass(frozen=True)
class Damage:
    """A stored document that could not be decoded: its text, why, and where a save keeps it."""

    text: str
    reason: str
    kept_at: str


@dataclass(frozen=True)
class Stored:
    """A cluster's alert state and the version to name when saving it back; `damage` when the
    stored document was unreadable (then `state` is empty)."""

    state: ClusterAlerts
    version: str
    damage: Damage | None = None


class AlertStore(Protocol):
    """Load and save one cluster's alert state, with optimistic concurrency."""

    async def load(self, cluster: str) -> Stored: ...

    async def save(self, state: ClusterAlerts, version: str, *, aside: Damage | None = None) -> str:
        """Write `state` if the stored version is still `version` (and keep `aside`'s text
        beside it); returns the new version."""
        ...

    def close(self) -> None: ...


Repair = Callable[[ClusterAlerts, Damage], ClusterAlerts]


async def update(
    store: AlertStore,
    cluster: str,
    change: Callable[[ClusterAlerts], tuple[ClusterAlerts, T]],
    *,
    repair: Repair | None = None,
) -> T:
    """Load, change, save (only when something changed); redo the change on a conflict.

    A damaged document is replaced by `repair(empty state, damage)` (which says so), changed,
    and saved with the damaged text kept aside.

    Raises:
        StoreUnavailable: the store failed, or kept conflicting.
        UserError: the change refused (a command on an unknown alert, say).
    """
    for _ in range(SAVE_TRIES):
        stored = await store.load(cluster)
        base = stored.state
        if stored.damage is not None and repair is not None:
            base = repair(base, stored.damage)
        state, result = change(base)
        try:
            if state != stored.state or stored.damage is not None:
                await store.save(state, stored.version, aside=stored.damage)
        except StoreConflict:
            continue
        return result
    raise StoreUnavailable(f"alert state of {cluster} kept changing under us; try again")


class SqliteStore:
    """The embedded default: one row per cluster in the file at `state.path`.

    The file (and its directory) is created on first use, so a service that never checks a
    cluster never touches the disk. Several stores may share a file (replicas on one volume).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    async def load(self, cluster: str) -> Stored:
        """Raises: StoreUnavailable."""
        return await asyncio.to_thread(self._load, cluster)

    async def save(self, state: ClusterAlerts, version: str, *, aside: Damage | None = None) -> str:
        """Raises: StoreConflict, StoreUnavailable."""
        return await asyncio.to_thread(self._save, state, version, aside)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _load(self, cluster: str) -> Stored:
        with self._lock, _unavailable_on_error(self.path):
            row = (
                self._connection()
                .execute("SELECT version, body FROM alert_state WHERE cluster = ?", (cluster,))
                .fetchone()
            )
        if row is None:
            return Stored(ClusterAlerts(cluster), NEW)
        where = f"table alert_state_damaged of {self.path}"
        return _parsed(cluster, str(row[1]), str(row[0]), where)

    def _save(self, state: ClusterAlerts, version: str, aside: Damage | None) -> str:
        body = dump_cluster(state)
        with self._lock, _unavailable_on_error(self.path):
            db = self._connection()
            try:
                with db:
                    if aside is not None:
                        db.execute(
                            "INSERT INTO alert_state_damaged (cluster, reason, body) "
                            "VALUES (?, ?, ?)",
                            (state.cluster, aside.reason, aside.text),
                        )
                    if version == NEW:
                        db.execute(
                            "INSERT INTO alert_state (cluster, version, body) VALUES (?, 1, ?)",
                            (state.cluster, body),
                        )
                        return "1"
                    changed = db.execute(
                        "UPDATE alert_state SET version = version + 1, body = ? "
                        "WHERE cluster = ? AND version = ?",
                        (body, state.cluster, int(version)),
                    ).rowcount
            except sqlite3.IntegrityError:
                raise StoreConflict(
                    f"alert state of {state.cluster} was created meanwhile"
                ) from None
        if not changed:
            raise StoreConflict(f"alert state of {state.cluster} changed meanwhile")
        return str(int(version) + 1)

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=5.0, check_same_thread=False)
            db.execute(
                "CREATE TABLE IF NOT EXISTS alert_state ("
                "cluster TEXT PRIMARY KEY, version INTEGER NOT NULL, body TEXT NOT NULL)"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS alert_state_damaged (cluster TEXT NOT NULL, "
                "kept_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, reason TEXT, body TEXT)"
            )
            db.commit()
            self._db = db
        return self._db


@contextmanager
def _unavailable_on_error(path: str) -> Iterator[None]:
    """sqlite3 and file-system errors, as StoreUnavailable naming the file."""
    try:
        yield
    except sqlite3.IntegrityError:
        raise
    except (sqlite3.Error, OSError) as e:
        raise StoreUnavailable(f"alert state file {path}: {e}") from e


class ConfigMapStore:
    """State in one ConfigMap (key `<cluster>.json`), for replicas in a cluster.

    A save is a merge patch carrying the `resourceVersion` read, so the API server refuses it
    (409 → StoreConflict) when another replica wrote in between. A save that got a 5xx or no
    answer may have been applied: it is sent again, and a 409 then is looked into: if the
    stored document is exactly ours, our first try landed. A damaged document is kept under
    `<cluster>.damaged.json` in the same ConfigMap.
    """

    def __init__(
        self,
        kube: KubeWriter,
        *,
        namespace: str,
        name: str,
        sleep: Sleep = asyncio.sleep,
        backoffs: Sequence[float] = WRITE_BACKOFFS,
    ) -> None:
        self._kube = kube
        self.namespace = namespace
        self.name = name
        self._sleep = sleep
        self._backoffs = tuple(backoffs)

    async def load(self, cluster: str) -> Stored:
        """Raises: StoreUnavailable (the API server refused or could not be reached)."""
        try:
            found = await self._kube.get_object(CONFIG_MAP, self.name, self.namespace)
        except errors.KubeError as e:
            raise StoreUnavailable(f"alert state ConfigMap: {e}") from e
        if found is None:
            return Stored(ClusterAlerts(cluster), NEW)
        data = found.get("data") or {}
        where = f"key {_damaged_key(cluster)} of ConfigMap {self.namespace}/{self.name}"
        version = str(found["metadata"]["resourceVersion"])
        return _parsed(cluster, str(data.get(_data_key(cluster), "")), version, where)

    async def save(self, state: ClusterAlerts, version: str, *, aside: Damage | None = None) -> str:
        """Raises: StoreConflict, StoreUnavailable."""
        body = dump_cluster(state)
        data = {_data_key(state.cluster): body}
        if aside is not None:
            data[_damaged_key(state.cluster)] = aside.text
        for attempt, delay in enumerate((*self._backoffs, None)):
            try:
                return await self._write(data, version)
            except StoreConflict:
                landed = await self._landed(state.cluster, body) if attempt else None
                if landed is not None:
                    return landed  # an earlier try of ours was applied
                raise
            except errors.KubeUnavailable as e:
                if delay is None:
                    raise StoreUnavailable(f"alert state ConfigMap: {e}") from e
                log.warning("alert state ConfigMap: %s; writing again in %.1fs", e, delay)
                await self._sleep(delay)
        raise AssertionError("unreachable")

    async def _write(self, data: dict[str, str], version: str) -> str:
        try:
            if version == NEW:
                created = await self._create(data)
                return str(created["metadata"]["resourceVersion"])
            patch = {"metadata": {"resourceVersion": version}, "data": data}
            patched = await self._kube.patch_object(CONFIG_MAP, self.name, self.namespace, patch)
        except (errors.KubeConflict, errors.KubeNotFound) as e:
            raise StoreConflict(f"alert state ConfigMap changed meanwhile: {e}") from e
        except errors.KubeUnavailable:
            raise
        except errors.KubeError as e:
            raise StoreUnavailable(f"alert state ConfigMap: {e}") from e
        return str(patched["metadata"]["resourceVersion"])

    async def _landed(self, cluster: str, body: str) -> str | None:
        """The version holding exactly `body` (so our write was applied), else None."""
        try:
            found = await self._kube.get_object(CONFIG_MAP, self.name, self.namespace)
        except errors.KubeError as e:
            raise StoreUnavailable(f"alert state ConfigMap: {e}") from e
        if found is None or (found.get("data") or {}).get(_data_key(cluster)) != body:
            return None
        return str(found["metadata"]["resourceVersion"])

    async def _create(self, data: dict[str, str]) -> RawObject:
        try:
            return await self._kube.create_object(
                CONFIG_MAP, self.namespace, owned_config_map(self.name, self.namespace, data)
            )
        except errors.KubeNotFound as e:  # not a race: the namespace itself is missing
            raise StoreUnavailable(f"alert state ConfigMap: namespace {self.namespace}: {e}") from e

    def close(self) -> None:
        """Nothing to release: the Kubernetes gateway belongs to the service."""


def open_store(settings: Settings, kube: KubeWriter) -> AlertStore:
    """The store `state.backend` names; `kube` is the first cluster's gateway (for configmap).

    Raises:
        ConfigError: the configmap backend without a gateway that can write objects.
    """
    state = settings.state
    if state.backend == "sqlite":
        return SqliteStore(state.path)
    return ConfigMapStore(kube, namespace=state.namespace, name=state.configmap)


def _data_key(cluster: str) -> str:
    return f"{cluster}.json"


def _damaged_key(cluster: str) -> str:
    return f"{cluster}.damaged.json"


def _parsed(cluster: str, text: str, version: str, kept_at: str) -> Stored:
    """The stored document, or empty state with the damage that a save keeps at `kept_at`."""
    try:
        return Stored(load_cluster(cluster, text), version)
    except DamagedState as e:
        log.error("alert state of %s is unreadable (%s); starting from empty state", cluster, e)
        return Stored(ClusterAlerts(cluster), version, Damage(text, str(e), kept_at))
