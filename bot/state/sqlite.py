"""A SQLite file opened on first use behind one lock, and a table of versioned documents in it.

Every piece of work runs in a worker thread (`asyncio.to_thread`: a commit waits for the disk,
and the event loop must not) as one transaction. The file and its directory are created on first
use, so a service that never stores anything never touches the disk; several processes may share
a file (replicas on one volume): SQLite's own locking orders them.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from bot.state.retry import NEW, Raises

T = TypeVar("T")
BUSY_TIMEOUT = 5.0  # seconds to wait for another process's write before failing
IN_LIST_AT_MOST = 500  # keys bound in one query (SQLite before 3.32 allows 999 variables)


class SqliteFile:
    """One connection to the file at `path`, used by one thread at a time.

    `schema` (CREATE ... IF NOT EXISTS statements) runs when the file is first opened. sqlite3
    and file-system errors are raised as `raises.unavailable`, naming the file after its `what`
    (`"alert state file"` → `alert state file /var/lib/x.sqlite: disk I/O error`).
    """

    def __init__(self, path: str, schema: Sequence[str], raises: Raises) -> None:
        self.path = path
        self._schema = tuple(schema)
        self._raises = raises
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(connection)` in a worker thread, as one transaction (rolled back if it raises).

        Raises:
            unavailable: sqlite3 or the file system failed; what `work` raises otherwise.
        """
        return await asyncio.to_thread(self._run, work)

    def close(self) -> None:
        """Let the file go; the next `run` opens it again."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        try:
            with self._lock:
                db = self._connection()
                with db:
                    return work(db)
        except (sqlite3.Error, OSError) as e:
            raise self._raises.unavailable(f"{self._raises.what} {self.path}: {e}") from e

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, check_same_thread=False)
            try:
                for statement in self._schema:
                    db.execute(statement)
                db.commit()
            except sqlite3.Error:
                db.close()  # not a database, say: nothing half-open is kept
                raise
            self._db = db
        return self._db


@dataclass(frozen=True)
class Aside:
    """A text a write keeps beside the documents (a damaged one), and why."""

    text: str
    reason: str


class VersionedTable:
    """Documents by key in table `table` of a file, each with a version every write bumps.

    A write names the version it read (`NEW` for a document never written) and raises
    `raises.conflict` when someone wrote since: compare-and-set. A write may keep an `Aside` in
    `<table>_damaged`, in the same transaction, so a write that conflicts keeps nothing aside.
    `raises.what` names the documents in errors (`"alert state"` → `alert state of prod changed
    meanwhile`, `alert state file /var/lib/x.sqlite: ...`). `table` and `key` are names the code
    gives, never input: they are formatted into the SQL, the values are bound.
    """

    def __init__(self, path: str, *, table: str, key: str, raises: Raises) -> None:
        self._table, self._key, self._raises = table, key, raises
        self.aside_table = f"{table}_damaged"
        in_file = replace(raises, what=f"{raises.what} file")
        self.file = SqliteFile(path, self._schema(), in_file)

    async def read(self, key: str) -> tuple[str, str] | None:
        """The document under `key` and its version, or None when never written.

        Raises: unavailable.
        """
        sql = f"SELECT body, version FROM {self._table} WHERE {self._key} = ?"
        row = await self.file.run(lambda db: db.execute(sql, (key,)).fetchone())
        return None if row is None else (str(row[0]), str(row[1]))

    async def read_many(self, keys: Sequence[str]) -> dict[str, tuple[str, str]]:
        """The documents under `keys` that were ever written, each with its version: one trip
        to the worker thread however many keys (one query per `IN_LIST_AT_MOST` of them).

        Raises: unavailable.
        """
        wanted = list(dict.fromkeys(keys))

        def work(db: sqlite3.Connection) -> dict[str, tuple[str, str]]:
            found: dict[str, tuple[str, str]] = {}
            for start in range(0, len(wanted), IN_LIST_AT_MOST):
                chunk = wanted[start : start + IN_LIST_AT_MOST]
                sql = (
                    f"SELECT {self._key}, body, version FROM {self._table} "
                    f"WHERE {self._key} IN ({', '.join('?' * len(chunk))})"
                )
                for key, body, version in db.execute(sql, chunk):
                    found[str(key)] = (str(body), str(version))
            return found

        return await self.file.run(work)

    async def write(self, key: str, body: str, version: str, *, aside: Aside | None = None) -> str:
        """Store `body` under `key` if it is still at `version`; returns the new version.

        Raises: conflict, unavailable.
        """
        return await self.file.run(lambda db: self._write_in(db, key, body, version, aside))

    def close(self) -> None:
        self.file.close()

    def _write_in(
        self, db: sqlite3.Connection, key: str, body: str, version: str, aside: Aside | None
    ) -> str:
        if aside is not None:
            db.execute(
                f"INSERT INTO {self.aside_table} ({self._key}, reason, body) VALUES (?, ?, ?)",
                (key, aside.reason, aside.text),
            )
        if version == NEW:
            return self._insert_in(db, key, body)
        changed = db.execute(
            f"UPDATE {self._table} SET version = version + 1, body = ? "
            f"WHERE {self._key} = ? AND version = ?",
            (body, key, int(version)),
        ).rowcount
        if not changed:
            raise self._raises.conflict(f"{self._what_of(key)} changed meanwhile")
        return str(int(version) + 1)

    def _insert_in(self, db: sqlite3.Connection, key: str, body: str) -> str:
        try:
            db.execute(
                f"INSERT INTO {self._table} ({self._key}, version, body) VALUES (?, 1, ?)",
                (key, body),
            )
        except sqlite3.IntegrityError:  # another writer created it since we read
            raise self._raises.conflict(f"{self._what_of(key)} was created meanwhile") from None
        return "1"

    def _what_of(self, key: str) -> str:
        return f"{self._raises.what} of {key}"

    def _schema(self) -> tuple[str, str]:
        return (
            f"CREATE TABLE IF NOT EXISTS {self._table} ("
            f"{self._key} TEXT PRIMARY KEY, version INTEGER NOT NULL, body TEXT NOT NULL)",
            f"CREATE TABLE IF NOT EXISTS {self.aside_table} ({self._key} TEXT NOT NULL, "
            "kept_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, reason TEXT, body TEXT)",
        )
