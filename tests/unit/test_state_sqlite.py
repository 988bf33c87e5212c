"""A SQLite file opened on first use, and its table of versioned documents (compare-and-set)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.state.retry import NEW, Raises, StateConflict, StateUnavailable
from bot.state.sqlite import IN_LIST_AT_MOST, Aside, SqliteFile, VersionedTable

SCHEMA = ["CREATE TABLE IF NOT EXISTS notes (body TEXT)"]


class NotesUnavailable(StateUnavailable):
    """A store's own error, as its callers catch it."""


class NotesConflict(StateConflict):
    """A store's own conflict."""


RAISES = Raises("notes", NotesUnavailable, NotesConflict)


@pytest.fixture
def table(tmp_path: Path) -> Iterator[VersionedTable]:
    opened = VersionedTable(
        str(tmp_path / "notes.sqlite"), table="notes", key="topic", raises=RAISES
    )
    yield opened
    opened.close()


async def test_the_file_and_its_directories_are_made_only_when_first_used(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "notes.sqlite"
    file = SqliteFile(str(path), SCHEMA, Raises("notes file"))
    assert not path.exists()
    await file.run(lambda db: db.execute("INSERT INTO notes VALUES ('x')"))
    assert path.exists()
    file.close()
    file.close()  # closing twice is harmless


async def test_a_work_that_raises_leaves_nothing_written(tmp_path: Path) -> None:
    file = SqliteFile(str(tmp_path / "notes.sqlite"), SCHEMA, Raises("notes file"))

    def write_then_fail(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO notes VALUES ('half')")
        raise NotesConflict("changed meanwhile")

    with pytest.raises(NotesConflict):
        await file.run(write_then_fail)
    assert await file.run(lambda db: db.execute("SELECT * FROM notes").fetchall()) == []
    file.close()


async def test_a_file_that_is_not_a_database_is_the_stores_error_naming_the_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("this is not a database")
    file = SqliteFile(str(path), SCHEMA, RAISES)
    with pytest.raises(NotesUnavailable, match=f"^notes {path}: file is not a database$"):
        await file.run(lambda db: None)
    file.close()


async def test_a_directory_that_cannot_be_made_is_the_stores_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    file = SqliteFile(str(blocker / "notes.sqlite"), SCHEMA, RAISES)
    with pytest.raises(NotesUnavailable, match=str(blocker)):
        await file.run(lambda db: None)


async def test_a_closed_file_is_opened_again_on_next_use(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    file = SqliteFile(str(path), SCHEMA, RAISES)
    await file.run(lambda db: db.execute("INSERT INTO notes VALUES ('x')"))
    file.close()
    path.unlink()
    assert await file.run(lambda db: db.execute("SELECT * FROM notes").fetchall()) == []
    file.close()


async def test_versions_chain_from_the_first_write(table: VersionedTable) -> None:
    assert await table.read("a") is None
    first = await table.write("a", "one", NEW)
    second = await table.write("a", "two", first)
    assert await table.read("a") == ("two", second)
    assert first != second


async def test_a_write_from_a_stale_read_conflicts_and_changes_nothing(
    table: VersionedTable,
) -> None:
    first = await table.write("a", "one", NEW)
    await table.write("a", "theirs", first)
    with pytest.raises(NotesConflict, match=r"^notes of a changed meanwhile$"):
        await table.write("a", "mine", first)
    assert (await table.read("a") or ("",))[0] == "theirs"


async def test_a_second_first_write_conflicts(table: VersionedTable) -> None:
    await table.write("a", "one", NEW)
    with pytest.raises(NotesConflict, match=r"^notes of a was created meanwhile$"):
        await table.write("a", "two", NEW)


async def test_keys_are_kept_apart(table: VersionedTable) -> None:
    await table.write("a", "one", NEW)
    assert await table.read("b") is None
    assert await table.write("b", "two", NEW) == "1"


async def test_a_text_kept_aside_is_written_with_the_document_or_not_at_all(
    table: VersionedTable,
) -> None:
    first = await table.write("a", "one", NEW)
    await table.write("a", "two", first, aside=Aside("{broken", "not JSON"))
    with pytest.raises(NotesConflict):
        await table.write("a", "three", first, aside=Aside("{lost", "stale"))
    with sqlite3.connect(table.file.path) as db:
        kept = db.execute(f"SELECT topic, reason, body FROM {table.aside_table}").fetchall()
    assert kept == [("a", "not JSON", "{broken")]
    assert table.aside_table == "notes_damaged"


async def test_a_table_that_went_missing_is_the_stores_error_naming_the_file(
    table: VersionedTable,
) -> None:
    version = await table.write("a", "one", NEW)
    with sqlite3.connect(table.file.path) as db:
        db.execute("DROP TABLE notes")
    with pytest.raises(NotesUnavailable, match=f"^notes file {table.file.path}: no such table"):
        await table.write("a", "two", version)


async def test_many_documents_are_read_at_once_each_with_its_version(
    table: VersionedTable,
) -> None:
    keys = [f"topic-{i:04}" for i in range(IN_LIST_AT_MOST * 2 + 1)]  # more than one query binds
    written = keys[::7]
    for key in written:
        await table.write(key, f"body of {key}", NEW)
    await table.write(written[-1], "changed", "1")

    found = await table.read_many([*keys, keys[0]])

    assert set(found) == set(written)  # those never written are absent
    assert found[written[0]] == ("body of topic-0000", "1")
    assert found[written[-1]] == ("changed", "2")
    assert await table.read_many([]) == {}
