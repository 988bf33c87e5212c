"""Where changes waiting for approval are kept, shared by every replica and kept over restarts.

Beside the memory of used Confirms (`bot.access.once`), in the same place: a table `approvals`
in its SQLite file, or keys `approval-<ID>` in its ConfigMap (a space `once` never claims in,
so its expiry sweeps never touch them). Each step is a compare-and-set: SQLite takes the write
lock before it reads (`BEGIN IMMEDIATE`), the ConfigMap is written with the resourceVersion
read; so of two approvers clicking at once, one approves and the other hears it was approved.
Records are dropped a day after they expired.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Protocol

from bot.access import approvals
from bot.access.approvals import Approval
from bot.access.once import configmap_name, sqlite_path
from bot.config.settings import Settings
from bot.kube.ports import KubeWriter
from bot.state.configmap import ConfigMapDocument
from bot.state.retry import Raises, StateUnavailable
from bot.state.sqlite import SqliteFile

KEPT = timedelta(days=1)  # after its expiry, how long a record stays (to say how it ended)
PREFIX = "approval-"
SQLITE_TABLE = (
    "CREATE TABLE IF NOT EXISTS approvals (id TEXT PRIMARY KEY, until REAL, body TEXT NOT NULL)"
)
ApprovalStep = Callable[[Approval | None], Approval]


class ApprovalsUnavailable(StateUnavailable):
    """The shared memory of approvals could not be read or written."""


class ApprovalStore(Protocol):
    async def get(self, change_id: str) -> Approval | None:
        """Raises: ApprovalsUnavailable."""
        ...

    async def records(self) -> list[Approval]:
        """Every record kept (the expiry sweep looks for the waiting ones).

        Raises: ApprovalsUnavailable.
        """
        ...

    async def change(self, change_id: str, step: ApprovalStep, now: datetime) -> Approval:
        """Apply `step` to the record (None: none yet) and keep what it returns, atomically;
        what `step` raises leaves the record as it was.

        Raises: ApprovalsUnavailable, and what `step` raises.
        """
        ...

    def close(self) -> None: ...


class SqliteApprovals:
    """Records in the `approvals` table of the confirmations' SQLite file."""

    def __init__(self, path: str) -> None:
        raises = Raises("approvals file", ApprovalsUnavailable)
        self._file = SqliteFile(path, [SQLITE_TABLE], raises)

    async def get(self, change_id: str) -> Approval | None:
        return await self._file.run(lambda db: _read_row(db, change_id))

    async def records(self) -> list[Approval]:
        rows = await self._file.run(lambda db: db.execute("SELECT body FROM approvals").fetchall())
        return _readable(str(row[0]) for row in rows)

    async def change(self, change_id: str, step: ApprovalStep, now: datetime) -> Approval:
        def work(db: sqlite3.Connection) -> Approval:
            db.execute("BEGIN IMMEDIATE")  # the write lock first: nobody writes between
            after = step(_read_row(db, change_id))
            until = (after.expires_at + KEPT).timestamp()
            db.execute("DELETE FROM approvals WHERE until <= ?", (now.timestamp(),))
            db.execute(
                "INSERT OR REPLACE INTO approvals (id, until, body) VALUES (?, ?, ?)",
                (change_id, until, approvals.to_json(after)),
            )
            return after

        return await self._file.run(work)

    def close(self) -> None:
        self._file.close()


def _read_row(db: sqlite3.Connection, change_id: str) -> Approval | None:
    row = db.execute("SELECT body FROM approvals WHERE id = ?", (change_id,)).fetchone()
    return None if row is None else _decoded(str(row[0]))


class ConfigMapApprovals:
    """Records as `approval-<ID>` keys of the confirmations' ConfigMap."""

    def __init__(self, kube: KubeWriter, *, namespace: str, name: str) -> None:
        raises = Raises("approvals ConfigMap", ApprovalsUnavailable)
        self._document = ConfigMapDocument(kube, namespace, name, raises)

    async def get(self, change_id: str) -> Approval | None:
        found = (await self._document.read()).data.get(PREFIX + change_id)
        return None if found is None else _decoded(found)

    async def records(self) -> list[Approval]:
        data = (await self._document.read()).data
        return _readable(value for key, value in data.items() if key.startswith(PREFIX))

    async def change(self, change_id: str, step: ApprovalStep, now: datetime) -> Approval:
        def change_in(data: Mapping[str, str]) -> tuple[dict[str, str | None], Approval]:
            found = data.get(PREFIX + change_id)
            after = step(None if found is None else _decoded(found))
            changes: dict[str, str | None] = {key: None for key in _stale(data, now)}
            changes[PREFIX + change_id] = approvals.to_json(after)
            return changes, after

        return await self._document.change(change_in, gave_up="approvals kept changing under us")

    def close(self) -> None:
        """Nothing to release: the Kubernetes gateway belongs to the service."""


def _stale(data: Mapping[str, str], now: datetime) -> list[str]:
    """The approval keys of records that expired more than `KEPT` ago (or cannot be read)."""
    stale = []
    for key, value in data.items():
        if key.startswith(PREFIX):
            record = _decoded(value)
            if record is None or record.expires_at + KEPT <= now:
                stale.append(key)
    return stale


def _readable(texts: Iterable[str]) -> list[Approval]:
    return [record for record in map(_decoded, texts) if record is not None]


def _decoded(text: str) -> Approval | None:
    """A stored record; one we cannot read counts as absent (it can approve nothing)."""
    try:
        return approvals.from_json(text)
    except (ValueError, KeyError, TypeError):
        return None


def open_store(settings: Settings, kube: KubeWriter) -> ApprovalStore:
    """The approvals beside the confirmations' memory (`state.backend`); `kube` is the first
    cluster's gateway."""
    state = settings.state
    if state.backend == "sqlite":
        return SqliteApprovals(sqlite_path(state.path))
    return ConfigMapApprovals(kube, namespace=state.namespace, name=configmap_name(state.configmap))
