"""The last changes made through the bot, kept where every replica and a restart find them.

The audit log line is the full record (a log pipeline keeps it); this is its short tail for the
Home tab ("the last 10 changes"), kept next to the alert state (`state` in the config): a table
in the SQLite file at `state.path`, or the ConfigMap `<state.configmap>-changes` in
`state.namespace` with `state.backend: configmap`, so another replica or the service after a
restart shows the same list. Only finished changes are kept (`bot.access.audit.record` leaves
out a `requested` line, whose outcome follows). SQLite runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from bot.access.audit import Change, Outcome
from bot.config.settings import Settings
from bot.core import errors
from bot.kube.kinds import CONFIG_MAP, owned_config_map
from bot.kube.ports import KubeWriter

KEEP = 50  # entries kept; the Home tab shows 10
DATA_KEY = "changes.json"
CONFLICT_RETRIES = 5


class JournalUnavailable(errors.BotError):
    """The journal could not be read or written (disk, database or API server)."""


class ChangeJournal(Protocol):
    """Append a finished change; read the newest ones back."""

    async def add(self, change: Change) -> None: ...

    async def recent(self, limit: int) -> list[Change]:
        """Newest first."""
        ...

    def close(self) -> None: ...


def dump_change(change: Change) -> dict[str, Any]:
    return {
        "user": change.user,
        "action": change.action,
        "target": change.target,
        "outcome": change.outcome,
        "at": change.at.isoformat(),
        "reason": change.reason,
        "details": dict(change.details),
        "note": change.note,
    }


def load_change(raw: Any) -> Change | None:
    """A stored entry, or None when it is not one (a hand edit must not break the Home tab)."""
    try:
        return Change(
            str(raw["user"]),
            str(raw["action"]),
            str(raw["target"]),
            _outcome(raw["outcome"]),
            datetime.fromisoformat(str(raw["at"])),
            str(raw.get("reason", "")),
            {str(k): str(v) for k, v in dict(raw.get("details") or {}).items()},
            str(raw.get("note", "")),
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _outcome(raw: Any) -> Outcome:
    """ok, failed or unknown; anything else (an older word, a hand edit) reads as unknown."""
    word = str(raw)
    if word == "ok":
        return "ok"
    return "failed" if word == "failed" else "unknown"


def _load_all(raws: Sequence[Any]) -> list[Change]:
    return [c for c in (load_change(raw) for raw in raws) if c is not None]


class SqliteJournal:
    """The embedded default: a table beside the alert state in the file at `state.path`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    async def add(self, change: Change) -> None:
        """Raises: JournalUnavailable."""
        await asyncio.to_thread(self._add, json.dumps(dump_change(change), sort_keys=True))

    async def recent(self, limit: int) -> list[Change]:
        """Raises: JournalUnavailable."""
        rows = await asyncio.to_thread(self._recent, limit)
        return _load_all([json.loads(row) for row in rows])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _add(self, body: str) -> None:
        with self._lock, self._unavailable_on_error():
            db = self._connection()
            with db:
                db.execute("INSERT INTO change_journal (body) VALUES (?)", (body,))
                db.execute(
                    "DELETE FROM change_journal WHERE id <= "
                    "(SELECT MAX(id) FROM change_journal) - ?",
                    (KEEP,),
                )

    def _recent(self, limit: int) -> list[str]:
        with self._lock, self._unavailable_on_error():
            rows = (
                self._connection()
                .execute("SELECT body FROM change_journal ORDER BY id DESC LIMIT ?", (limit,))
                .fetchall()
            )
        return [str(row[0]) for row in rows]

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=5.0, check_same_thread=False)
            db.execute(
                "CREATE TABLE IF NOT EXISTS change_journal ("
                "id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL)"
            )
            db.commit()
            self._db = db
        return self._db

    @contextmanager
    def _unavailable_on_error(self) -> Iterator[None]:
        """sqlite3 and file-system errors, as JournalUnavailable naming the file."""
        try:
            yield
        except (sqlite3.Error, OSError) as e:
            raise JournalUnavailable(f"change journal in {self.path}: {e}") from e


class ConfigMapJournal:
    """The newest `KEEP` changes as one JSON list in a ConfigMap, for replicas in a cluster.

    An append is a merge patch carrying the resourceVersion read; when another replica wrote in
    between (409), it reads again and appends again.
    """

    def __init__(self, kube: KubeWriter, *, namespace: str, name: str) -> None:
        self._kube = kube
        self.namespace = namespace
        self.name = name

    async def add(self, change: Change) -> None:
        """Raises: JournalUnavailable."""
        for attempt in range(1, CONFLICT_RETRIES + 1):
            try:
                await self._append(change)
                return
            except errors.KubeConflict:  # written meanwhile (409 on patch and on create)
                if attempt == CONFLICT_RETRIES:
                    raise JournalUnavailable(f"{self._where()}: still changing, gave up") from None
            except errors.KubeError as e:
                raise JournalUnavailable(f"{self._where()}: {e}") from e

    async def recent(self, limit: int) -> list[Change]:
        """Raises: JournalUnavailable."""
        try:
            found = await self._kube.get_object(CONFIG_MAP, self.name, self.namespace)
        except errors.KubeError as e:
            raise JournalUnavailable(f"{self._where()}: {e}") from e
        return list(reversed(_load_all(_entries(found))))[:limit]

    def close(self) -> None:
        """Nothing to release: the Kubernetes gateway belongs to the service."""

    async def _append(self, change: Change) -> None:
        found = await self._kube.get_object(CONFIG_MAP, self.name, self.namespace)
        entries = [*_entries(found), dump_change(change)][-KEEP:]
        data = {DATA_KEY: json.dumps(entries, sort_keys=True)}
        if found is None:
            await self._kube.create_object(
                CONFIG_MAP, self.namespace, owned_config_map(self.name, self.namespace, data)
            )
            return
        version = str(found["metadata"]["resourceVersion"])
        patch = {"metadata": {"resourceVersion": version}, "data": data}
        await self._kube.patch_object(CONFIG_MAP, self.name, self.namespace, patch)

    def _where(self) -> str:
        return f"change journal ConfigMap {self.namespace}/{self.name}"


def _entries(found: Any) -> list[Any]:
    if not found:
        return []
    try:
        entries = json.loads(str((found.get("data") or {}).get(DATA_KEY) or "[]"))
    except json.JSONDecodeError:
        return []
    return entries if isinstance(entries, list) else []


def configmap_name(settings: Settings) -> str:
    """`kai-chatops-state-changes`: the journal's ConfigMap, beside the alert state's."""
    return f"{settings.state.configmap}-changes"


def open_journal(settings: Settings, kube: KubeWriter) -> ChangeJournal:
    """The journal beside the store `state.backend` names (`kube`: the first cluster's)."""
    state = settings.state
    if state.backend == "sqlite":
        return SqliteJournal(state.path)
    return ConfigMapJournal(kube, namespace=state.namespace, name=configmap_name(settings))
