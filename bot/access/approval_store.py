"""Where changes waiting for approval are kept, shared by every replica and kept over restarts.

Beside the memory of used Confirms (`bot.access.once`): a table `approvals` in its SQLite file,
or keys `approval-<ID>` in a ConfigMap of their own, `<state.configmap>-approvals`. Releases
before it kept those keys in the memory's ConfigMap (`-once`, a space `once` never claims in):
a record found only there is still read, and its next change is written to the approvals' own.
Each step is a compare-and-set: SQLite takes the write lock before it reads (`BEGIN
IMMEDIATE`), the ConfigMap is written with the resourceVersion read; so of two approvers
clicking at once, one approves and the other hears it was approved.
Bounded (`bot.access.approval_room`): records are dropped a day after they expired, by every
write and by the expiry sweep (`prune`) whatever else happens, and a new request takes room
only from records that no longer run.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Protocol

from bot.access import approvals
from bot.access.approval_room import KEPT, decoded, room_for, stale
from bot.access.approvals import Approval
from bot.access.once import configmap_name, sqlite_path
from bot.config.settings import Settings
from bot.kube.ports import KubeWriter
from bot.state.configmap import ConfigMapDocument
from bot.state.retry import Raises, StateUnavailable
from bot.state.sqlite import SqliteFile

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

        Raises: ApprovalsUnavailable, and what `step` raises (and UserError: a new record
            finds no room, `approval_room.room_for`).
        """
        ...

    async def prune(self, now: datetime) -> None:
        """Drop the records that expired more than a day ago (nothing written when none did).

        Raises: ApprovalsUnavailable.
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
        return _readable((await self._file.run(_rows)).values())

    async def change(self, change_id: str, step: ApprovalStep, now: datetime) -> Approval:
        def work(db: sqlite3.Connection) -> Approval:
            db.execute("BEGIN IMMEDIATE")  # the write lock first: nobody writes between
            after = step(_read_row(db, change_id))
            body = approvals.to_json(after)
            _delete(db, room_for(_rows(db), PREFIX + change_id, body, now))
            until = (after.expires_at + KEPT).timestamp()
            db.execute(
                "INSERT OR REPLACE INTO approvals (id, until, body) VALUES (?, ?, ?)",
                (change_id, until, body),
            )
            return after

        return await self._file.run(work)

    async def prune(self, now: datetime) -> None:
        await self._file.run(lambda db: _delete(db, stale(_rows(db), now)))

    def close(self) -> None:
        self._file.close()


def _read_row(db: sqlite3.Connection, change_id: str) -> Approval | None:
    row = db.execute("SELECT body FROM approvals WHERE id = ?", (change_id,)).fetchone()
    return None if row is None else decoded(str(row[0]))


def _rows(db: sqlite3.Connection) -> dict[str, str]:
    """Every record's body, by its key as the ConfigMap has it (`approval-<ID>`), so both
    backends measure the same bytes."""
    rows = db.execute("SELECT id, body FROM approvals")
    return {PREFIX + str(r[0]): str(r[1]) for r in rows}


def _delete(db: sqlite3.Connection, keys: list[str]) -> None:
    ids = [(key.removeprefix(PREFIX),) for key in keys]
    db.executemany("DELETE FROM approvals WHERE id = ?", ids)


class ConfigMapApprovals:
    """Records as `approval-<ID>` keys of their own ConfigMap; those a release before kept in
    the confirmations' ConfigMap (`legacy`) are read too, until changed here."""

    def __init__(
        self, kube: KubeWriter, *, namespace: str, name: str, legacy: str | None = None
    ) -> None:
        raises = Raises("approvals ConfigMap", ApprovalsUnavailable)
        self._document = ConfigMapDocument(kube, namespace, name, raises)
        self._legacy = (
            None if legacy is None else ConfigMapDocument(kube, namespace, legacy, raises)
        )

    async def get(self, change_id: str) -> Approval | None:
        found = (await self._data()).get(PREFIX + change_id)
        return None if found is None else decoded(found)

    async def records(self) -> list[Approval]:
        data = await self._data()
        return _readable(value for key, value in data.items() if key.startswith(PREFIX))

    async def _data(self) -> dict[str, str]:
        """The records: ours, over those only the legacy ConfigMap holds."""
        ours = (await self._document.read()).data
        if self._legacy is None:
            return dict(ours)
        legacy = (await self._legacy.read()).data
        return {**{k: v for k, v in legacy.items() if k.startswith(PREFIX)}, **ours}

    async def change(self, change_id: str, step: ApprovalStep, now: datetime) -> Approval:
        earlier = None
        if self._legacy is not None:
            earlier = (await self._legacy.read()).data.get(PREFIX + change_id)

        def change_in(data: Mapping[str, str]) -> tuple[dict[str, str | None], Approval]:
            found = data.get(PREFIX + change_id, earlier)
            after = step(None if found is None else decoded(found))
            body = approvals.to_json(after)
            dropped = room_for(_records_of(data), PREFIX + change_id, body, now)
            changes: dict[str, str | None] = {key: None for key in dropped}
            changes[PREFIX + change_id] = body
            return changes, after

        return await self._document.change(change_in, gave_up="approvals kept changing under us")

    async def prune(self, now: datetime) -> None:
        def prune_in(data: Mapping[str, str]) -> tuple[dict[str, str | None], None]:
            return {key: None for key in stale(_records_of(data), now)}, None

        await self._document.change(prune_in, gave_up="approvals kept changing under us")

    def close(self) -> None:
        """Nothing to release: the Kubernetes gateway belongs to the service."""


def _records_of(data: Mapping[str, str]) -> dict[str, str]:
    """The approval records among a ConfigMap's keys."""
    return {key: value for key, value in data.items() if key.startswith(PREFIX)}


def _readable(texts: Iterable[str]) -> list[Approval]:
    return [record for record in map(decoded, texts) if record is not None]


def configmap_name_of(state_configmap: str) -> str:
    """The approvals' own ConfigMap, named after the alert state's."""
    return f"{state_configmap}-approvals"


def open_store(settings: Settings, kube: KubeWriter) -> ApprovalStore:
    """The approvals beside the confirmations' memory (`state.backend`); `kube` is the first
    cluster's gateway."""
    state = settings.state
    if state.backend == "sqlite":
        return SqliteApprovals(sqlite_path(state.path))
    return ConfigMapApprovals(
        kube,
        namespace=state.namespace,
        name=configmap_name_of(state.configmap),
        legacy=configmap_name(state.configmap),
    )
