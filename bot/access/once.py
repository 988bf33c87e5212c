"""What may happen only once: each signed Slack request, each Confirm; shared by every replica.

A key is claimed until a given time: the first claim wins, any other before that time loses.
The memory lives where the alert state does (`state.backend`): a SQLite file of its own beside
`state.path`, or a ConfigMap of its own (`<state.configmap>-once`) claimed with the
resourceVersion read, so two replicas racing for one key cannot both win. Expired keys are
dropped on the next claim of the same space (a key is `SPACE-ID`; requests and confirmations
keep time by different clocks: Slack's and the service's). Not the alert store: claims come
with every request, and must not contend with alert saves.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from datetime import datetime
from pathlib import Path
from typing import Protocol

from bot.config.settings import Settings
from bot.core import errors
from bot.kube.kinds import CONFIG_MAP, owned_config_map
from bot.kube.ports import KubeWriter

CLAIM_RETRIES = 5  # a 409 means another replica claimed something meanwhile: read again


class OnceUnavailable(errors.BotError):
    """The shared memory could not be read or written; whether the key was used is unknown."""


class OnceStore(Protocol):
    """Claim a key until a time; True exactly once for each key while it is remembered."""

    async def claim(self, key: str, until: datetime, now: datetime) -> bool:
        """Raises: OnceUnavailable."""
        ...

    def close(self) -> None: ...


class MemoryOnce:
    """One process's memory: for tests and tools, never for the service."""

    def __init__(self) -> None:
        self._until: dict[str, datetime] = {}

    async def claim(self, key: str, until: datetime, now: datetime) -> bool:
        space = space_of(key)
        self._until = {k: t for k, t in self._until.items() if t > now or space_of(k) != space}
        if key in self._until:
            return False
        self._until[key] = until
        return True

    def close(self) -> None:
        """Nothing to release."""


class SqliteOnce:
    """Claims in a SQLite file (replicas on one volume share it); runs in a worker thread."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    async def claim(self, key: str, until: datetime, now: datetime) -> bool:
        return await asyncio.to_thread(self._claim, key, until.timestamp(), now.timestamp())

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _claim(self, key: str, until: float, now: float) -> bool:
        try:
            with self._lock:
                db = self._connection()
                with db:  # one transaction: drop the expired, then insert unless present
                    db.execute(
                        "DELETE FROM once_keys WHERE until <= ? AND key LIKE ?",
                        (now, space_of(key) + "-%"),
                    )
                    inserted = db.execute(
                        "INSERT OR IGNORE INTO once_keys (key, until) VALUES (?, ?)", (key, until)
                    ).rowcount
        except (sqlite3.Error, OSError) as e:
            raise OnceUnavailable(f"request memory file {self.path}: {e}") from e
        return inserted == 1

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=5.0, check_same_thread=False)
            db.execute("CREATE TABLE IF NOT EXISTS once_keys (key TEXT PRIMARY KEY, until REAL)")
            db.commit()
            self._db = db
        return self._db


class ConfigMapOnce:
    """Claims as keys of one ConfigMap (value: the expiry, seconds since the epoch)."""

    def __init__(self, kube: KubeWriter, *, namespace: str, name: str) -> None:
        self._kube = kube
        self.namespace = namespace
        self.name = name

    async def claim(self, key: str, until: datetime, now: datetime) -> bool:
        for _ in range(CLAIM_RETRIES):
            try:
                return await self._try_claim(key, until.timestamp(), now.timestamp())
            except errors.KubeConflict:
                continue
            except errors.KubeError as e:
                raise OnceUnavailable(f"request memory ConfigMap: {e}") from e
        raise OnceUnavailable("request memory ConfigMap kept changing under us")

    async def _try_claim(self, key: str, until: float, now: float) -> bool:
        found = await self._kube.get_object(CONFIG_MAP, self.name, self.namespace)
        if found is None:
            body = owned_config_map(self.name, self.namespace, {key: repr(until)})
            await self._kube.create_object(CONFIG_MAP, self.namespace, body)
            return True
        data = found.get("data") or {}
        if key in data and _expiry(data[key]) > now:
            return False
        space = space_of(key)
        dropped: dict[str, str | None] = {
            k: None for k, v in data.items() if _expiry(v) <= now and space_of(k) == space
        }
        version = str(found["metadata"]["resourceVersion"])
        patch = {"metadata": {"resourceVersion": version}, "data": dropped | {key: repr(until)}}
        await self._kube.patch_object(CONFIG_MAP, self.name, self.namespace, patch)
        return True

    def close(self) -> None:
        """Nothing to release: the Kubernetes gateway belongs to the service."""


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


def open_once(settings: Settings, kube: KubeWriter) -> OnceStore:
    """The memory `state.backend` names; `kube` is the first cluster's gateway (for configmap)."""
    state = settings.state
    if state.backend == "sqlite":
        return SqliteOnce(sqlite_path(state.path))
    return ConfigMapOnce(kube, namespace=state.namespace, name=configmap_name(state.configmap))
