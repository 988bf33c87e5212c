"""The tests' one poll-with-deadline (tests/waiting.py) fails when it should and only then.

A condition never met raises once its deadline passes, naming what was awaited; one met returns
its value at once, before any sleep, even with no time left. Sync and async checks alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from waiting import wait_until

DEADLINE = 0.2
LATE = 2.0  # how far past the deadline the raise may come on a loaded machine: bounds a failure


def sync_check(results: list[Any], calls: list[int]) -> Callable[[], Any]:
    def check() -> Any:
        calls.append(1)
        return results.pop(0) if results else None

    return check


def async_check(results: list[Any], calls: list[int]) -> Callable[[], Awaitable[Any]]:
    plain = sync_check(results, calls)

    async def check() -> Any:
        return plain()

    return check


CHECKS = pytest.mark.parametrize("make", [sync_check, async_check], ids=["sync", "async"])


@CHECKS
async def test_a_condition_never_met_raises_past_the_deadline_naming_what_was_awaited(
    make: Callable[[list[Any], list[int]], Callable[[], Any]],
) -> None:
    loop = asyncio.get_running_loop()
    calls: list[int] = []
    started = loop.time()
    with pytest.raises(TimeoutError, match=r"not within 0\.2s: the moon to turn blue"):
        await wait_until(make([], calls), DEADLINE, "the moon to turn blue")
    took = loop.time() - started
    assert DEADLINE <= took < DEADLINE + LATE
    assert len(calls) > 1  # it kept looking until the deadline


@CHECKS
async def test_a_condition_met_returns_its_value_at_once_even_with_no_time_left(
    make: Callable[[list[Any], list[int]], Callable[[], Any]],
) -> None:
    calls: list[int] = []
    assert await wait_until(make(["ready"], calls), 0, "ready") == "ready"
    assert calls == [1]


@CHECKS
async def test_a_condition_met_later_returns_the_first_truthy_result(
    make: Callable[[list[Any], list[int]], Callable[[], Any]],
) -> None:
    calls: list[int] = []
    found = await wait_until(make([None, 0, [], {"n": 1}, "later"], calls), 5, "a result")
    assert found == {"n": 1}
    assert len(calls) == 4
