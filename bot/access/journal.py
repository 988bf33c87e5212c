"""The last changes made through the bot, kept where every replica and a restart find them.

The audit log line is the full record (a log pipeline keeps it); this is its short tail for the
Home tab ("the last 10 changes"), kept next to the alert state (`state` in the config): a table
in the SQLite file at `state.path`, or the ConfigMap `<state.configmap>-changes` in
`state.namespace` with `state.backend: configmap`, so another replica or the service after a
restart shows the same list. Only finished changes are kept (`bot.access.audit.record` leaves
out a `requested` line, whose outcome follows). The storage is `bot.state`'s.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from bot.access.audit import Change
from bot.access.outcomes import AuditOutcome
from bot.config.settings import Settings
from bot.kube.ports import KubeWriter
from bot.state.configmap import ConfigMapDocument
from bot.state.retry import Raises, StateUnavailable
from bot.state.sqlite import SqliteFile

KEEP = 50  # entries kept; the Home tab shows 10
MAX_BYTES = 900_000  # of the ConfigMap's JSON: a ConfigMap holds at most 1 MiB
DATA_KEY = "changes.json"
SQLITE_TABLE = (
    "CREATE TABLE IF NOT EXISTS change_journal ("
    "id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL)"
)


class JournalUnavailable(StateUnavailable):
    """The journal could not be read or written (disk, database or API server)."""


class ChangeJournal(Protocol):
    """Append a finished change; read the newest ones back. `added` counts the changes this
    process added (the timed-change tick looks at the journal again at once after one)."""

    added: int

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


def _outcome(raw: Any) -> AuditOutcome:
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
        self.added = 0
        raises = Raises("change journal in", JournalUnavailable)
        self._file = SqliteFile(path, [SQLITE_TABLE], raises)

    async def add(self, change: Change) -> None:
        """Raises: JournalUnavailable."""
        body = json.dumps(dump_change(change), sort_keys=True)
        await self._file.run(lambda db: _append_in(db, body))
        self.added += 1

    async def recent(self, limit: int) -> list[Change]:
        """Raises: JournalUnavailable."""
        sql = "SELECT body FROM change_journal ORDER BY id DESC LIMIT ?"
        rows = await self._file.run(lambda db: db.execute(sql, (limit,)).fetchall())
        return _load_all([json.loads(str(row[0])) for row in rows])

    def close(self) -> None:
        self._file.close()


def _append_in(db: sqlite3.Connection, body: str) -> None:
    """Append `body`, keeping the newest `KEEP` entries."""
    db.execute("INSERT INTO change_journal (body) VALUES (?)", (body,))
    db.execute(
        "DELETE FROM change_journal WHERE id <= (SELECT MAX(id) FROM change_journal) - ?",
        (KEEP,),
    )


class ConfigMapJournal:
    """The newest `KEEP` changes as one JSON list in a ConfigMap, for replicas in a cluster.

    An append names the resourceVersion read; when another replica wrote in between (409), it
    reads again and appends again (`bot.state.configmap`).
    """

    def __init__(self, kube: KubeWriter, *, namespace: str, name: str) -> None:
        self.namespace, self.name = namespace, name
        self.added = 0
        raises = Raises(f"change journal ConfigMap {namespace}/{name}", JournalUnavailable)
        self._document = ConfigMapDocument(kube, namespace, name, raises)

    async def add(self, change: Change) -> None:
        """Raises: JournalUnavailable."""

        def append(data: Mapping[str, str]) -> tuple[dict[str, str | None], None]:
            entries = fit_entries([*_entries(data), dump_change(change)][-KEEP:], MAX_BYTES)
            return {DATA_KEY: json.dumps(entries, sort_keys=True)}, None

        gave_up = f"{self._document.raises.what}: still changing, gave up"
        await self._document.change(append, gave_up=gave_up)
        self.added += 1

    async def recent(self, limit: int) -> list[Change]:
        """Raises: JournalUnavailable."""
        found = await self._document.read()
        return list(reversed(_load_all(_entries(found.data))))[:limit]

    def close(self) -> None:
        """Nothing to release: the Kubernetes gateway belongs to the service."""


def fit_entries(entries: list[Any], max_bytes: int) -> list[Any]:
    """The newest entries whose JSON fits `max_bytes` (at least the newest one): long reasons
    cost older entries, never the ConfigMap's 1 MiB limit and with it every later change."""
    kept = list(entries)
    while len(kept) > 1 and len(json.dumps(kept, sort_keys=True).encode()) > max_bytes:
        kept.pop(0)
    return kept


def _entries(data: Mapping[str, str]) -> list[Any]:
    try:
        entries = json.loads(data.get(DATA_KEY) or "[]")
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
