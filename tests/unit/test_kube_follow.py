"""`bot.kube.follow.follow` when it cannot watch: the polls that stand in, their end and failures.

A fake reader that is not a `KubeWatcher` (as a gateway whose watch fails hands over at once),
and a fake sleep that moves nothing but records the waits; the deadline is the loop's time.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.core import errors
from bot.core.models import RawObject
from bot.keda.pause import KedaTarget
from bot.kube import follow, kinds
from bot.kube.kinds import ResourceRef

TARGET = KedaTarget("ScaledJob", "annia", "annia-worker", "sim")


class Reads:
    """Answers each read with the next of `answers` (an exception is raised)."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.reads = 0

    async def get_object(
        self, ref: ResourceRef, name: str, namespace: str | None = None
    ) -> RawObject | None:
        assert (ref, name, namespace) == (kinds.SCALED_JOB, "annia-worker", "annia")
        self.reads += 1
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[no-any-return]


def obj(step: int) -> RawObject:
    return {"metadata": {"resourceVersion": str(step)}, "step": step}


def is_done(seen: RawObject | None) -> bool:
    return seen is None or seen["step"] >= 3


async def run(kube: Reads, seconds: float, written: RawObject | None) -> Any:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(round(seconds, 4))

    polling = follow.Polling(seconds, first=0.05, factor=2.0, longest=0.15, sleep=sleep)
    deadline = asyncio.get_running_loop().time() + seconds
    result = await follow.follow(
        kube,  # type: ignore[arg-type]
        TARGET, is_done, written=written, deadline=deadline, polling=polling,
    )  # fmt: skip
    return result, waits


async def test_without_a_watch_it_polls_sooner_then_less_often_until_done() -> None:
    kube = Reads(obj(1), obj(2), obj(3))
    (seen, done), waits = await run(kube, 60, written=obj(0))
    assert (seen, done) == (obj(3), True)
    assert waits == [0.05, 0.1, 0.15]


async def test_a_write_that_is_already_done_is_not_read_again() -> None:
    kube = Reads(obj(1))
    (seen, done), _ = await run(kube, 60, written=obj(3))
    assert (seen, done, kube.reads) == (obj(3), True, 0)


async def test_a_deleted_object_ends_the_wait_as_done() -> None:
    (seen, done), _ = await run(Reads(None), 60, written=obj(0))
    assert (seen, done) == (None, True)


async def test_the_deadline_ends_the_polls_with_the_last_state_read() -> None:
    (seen, done), waits = await run(Reads(obj(1)), 0, written=None)
    assert (seen, done, waits) == (obj(1), False, [0.0])


async def test_a_poll_that_fails_raises() -> None:
    kube = Reads(errors.KubeUnavailable("cluster sim: cannot reach the API server"))
    with pytest.raises(errors.KubeUnavailable):
        await run(kube, 60, written=obj(0))
