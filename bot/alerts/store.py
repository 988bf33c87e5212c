"""Where alert state lives between checks, restarts and replicas: a SQLite file or a ConfigMap.

One JSON document per cluster (`bot.alerts.model.dump_cluster`) with a version: a save names the
version it read and raises `StoreConflict` when someone saved since (another replica answering
`/kai ack`, say), so the caller reloads and redoes its step. SQLite runs in a worker thread
(`asyncio.to_thread`): a commit waits for the disk, and the event loop must not.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bot.alerts.model import ClusterAlerts, dump_cluster, load_cluster
from bot.config.settings import Settings
from bot.core import errors
from bot.core.models import RawObject
from bot.kube.kinds import CONFIG_MAP
from bot.kube.ports import KubeWriter

NEW = ""  # the version of a document never saved


class StoreConflict(errors.BotError):
    """The document changed since it was read; reload and try again."""


class StoreUnavailable(errors.BotError):
    """The state could not be read or written (disk, database or API server)."""


@dataclass(frozen=True)
class Stored:
    """A cluster's alert state and the version to name when saving it back."""

    state: ClusterAlerts
    version: str


class AlertStore(Protocol):
    """Load and save one cluster's alert state, with optimistic concurrency."""

    async def load(self, cluster: str) -> Stored: ...

    async def save(self, state: ClusterAlerts, version: str) -> str:
        """Write `state` if the stored version is still `version`; returns the new version."""
        ...

    def close(self) -> None: ...


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

    async def save(self, state: ClusterAlerts, version: str) -> str:
        """Raises: StoreConflict, StoreUnavailable."""
        return await asyncio.to_thread(self._save, state, version)

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
        return Stored(_parse(cluster, row[1], self.path), str(row[0]))

    def _save(self, state: ClusterAlerts, version: str) -> str:
        body = dump_cluster(state)
        with self._lock, _unavailable_on_error(self.path):
            db = self._connection()
            try:
                with db:
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
    (409 → StoreConflict) when another replica wrote in between.
    """

    def __init__(self, kube: KubeWriter, *, namespace: str, name: str) -> None:
        self._kube = kube
        self.namespace = namespace
        self.name = name

    async def load(self, cluster: str) -> Stored:
        """Raises: StoreUnavailable (the API server refused or could not be reached)."""
        try:
            found = await self._kube.get_object(CONFIG_MAP, self.name, self.namespace)
        except errors.KubeError as e:
            raise StoreUnavailable(f"alert state ConfigMap: {e}") from e
        if found is None:
            return Stored(ClusterAlerts(cluster), NEW)
        data = found.get("data") or {}
        where = f"ConfigMap {self.namespace}/{self.name}"
        state = _parse(cluster, str(data.get(_data_key(cluster), "")), where)
        return Stored(state, str(found["metadata"]["resourceVersion"]))

    async def save(self, state: ClusterAlerts, version: str) -> str:
        """Raises: StoreConflict, StoreUnavailable."""
        data = {_data_key(state.cluster): dump_cluster(state)}
        try:
            if version == NEW:
                created = await self._create(data)
                return str(created["metadata"]["resourceVersion"])
            patch = {"metadata": {"resourceVersion": version}, "data": data}
            patched = await self._kube.patch_object(CONFIG_MAP, self.name, self.namespace, patch)
        except (errors.KubeConflict, errors.KubeNotFound) as e:
            raise StoreConflict(f"alert state ConfigMap changed meanwhile: {e}") from e
        except errors.KubeError as e:
            raise StoreUnavailable(f"alert state ConfigMap: {e}") from e
        return str(patched["metadata"]["resourceVersion"])

    async def _create(self, data: dict[str, str]) -> RawObject:
        try:
            return await self._kube.create_object(CONFIG_MAP, self.namespace, self._new(data))
        except errors.KubeNotFound as e:  # not a race: the namespace itself is missing
            raise StoreUnavailable(f"alert state ConfigMap: namespace {self.namespace}: {e}") from e

    def close(self) -> None:
        """Nothing to release: the Kubernetes gateway belongs to the service."""

    def _new(self, data: dict[str, str]) -> dict[str, object]:
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "labels": {"app.kubernetes.io/managed-by": "kai-chatops"},
            },
            "data": data,
        }


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


def _parse(cluster: str, text: str, where: str) -> ClusterAlerts:
    try:
        return load_cluster(cluster, text)
    except ValueError as e:
        raise StoreUnavailable(f"alert state of {cluster} in {where} is unreadable: {e}") from e
