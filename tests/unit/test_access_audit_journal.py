"""Every recorded change is kept in the change journal (the Home tab's last changes); a journal
that cannot be written is logged, and the change is still logged and announced."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.access import audit
from bot.access.journal import SqliteJournal

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
CHANGE = audit.Change("U1", "pause", "ScaledJob annia/w on prod", "ok", T0, "drain", note="done")


class Posts:
    def __init__(self) -> None:
        self.posts: list[tuple[str, str]] = []

    async def post(
        self, channel: str, message: Mapping[str, Any], *, thread_ts: str | None = None
    ) -> str:
        self.posts.append((channel, str(message["text"])))
        return "1.0"


async def test_a_recorded_change_is_kept_in_the_journal(tmp_path: Path) -> None:
    journal = SqliteJournal(str(tmp_path / "journal.sqlite"))
    slack = Posts()
    await audit.record(CHANGE, slack=slack, channel="C0OPS", text="paused", journal=journal)
    assert await journal.recent(10) == [CHANGE]
    assert slack.posts == [("C0OPS", "paused")]
    journal.close()


async def test_a_journal_that_cannot_be_written_is_logged_and_the_change_still_announced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    journal = SqliteJournal(str(blocker / "journal.sqlite"))
    slack = Posts()

    await audit.record(CHANGE, slack=slack, channel="C0OPS", text="paused", journal=journal)

    assert slack.posts == [("C0OPS", "paused")]
    said = [r.getMessage() for r in caplog.records if r.name == "kai_chatops.audit"]
    assert said[0] == CHANGE.log_line()
    assert said[1].startswith(
        "could not keep pause ScaledJob annia/w on prod in the change journal: "
    )
    assert str(blocker) in said[1]
    journal.close()
