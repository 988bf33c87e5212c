"""A timeline read cancelled before its reads ran (the service stopping under `/kai timeline` or
an alert thread's second reply) leaves no read made and never awaited: the CI run that found it
failed an unrelated test on the same worker with "coroutine 'SqliteJournal.recent' was never
awaited" when the garbage collector met the orphan."""

from __future__ import annotations

import asyncio
import gc
import warnings
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.config import settings as config
from bot.timeline.usecase import TimelineReader

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


class Reads:
    """Every read the timeline makes; none answers before the test has cancelled it."""

    def __init__(self) -> None:
        self.made = 0
        self.cluster = "prod"

    async def _never(self) -> Any:
        await asyncio.Event().wait()

    def _read(self, *_: Any, **__: Any) -> Any:
        self.made += 1
        return self._never()

    recent = load = list_objects = get_object = _read


def reader(reads: Reads) -> TimelineReader:
    raw = {"clusters": [{"name": "prod"}], "slack": {"alert_channel": "C0123"}}
    return TimelineReader(config.parse_settings(raw), reads, reads, lambda: NOW)  # type: ignore[arg-type]


async def test_a_timeline_cancelled_before_its_reads_ran_leaves_none_never_awaited() -> None:
    reads = Reads()
    task = asyncio.ensure_future(reader(reads).read(reads, NOW - timedelta(hours=1), NOW))  # type: ignore[arg-type]
    await asyncio.sleep(0)  # the read has gathered its sources; none of them has run yet
    task.cancel()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(asyncio.CancelledError):
            await task
        gc.collect()
    orphans = [str(w.message) for w in caught if "never awaited" in str(w.message)]
    assert orphans == []
