"""Work after an ack waits for the acks of the same burst (bot/service/inflight.py).

A burst here ends QUIET after its last ack; LONGEST, the bound on how long work waits, is far
beyond the 5-second deadline of every wait, so a burst that did not end by its quiet time fails
the test (but the one test of that bound). Where a test needs a second request to arrive later
in a burst, it arrives by `call_later`, as a request would; a slow ack is a request whose own
slow part sleeps. Nothing here sleeps to wait for a result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest

from bot.access.once import OnceUnavailable
from bot.service.inflight import InFlight

QUIET, LONGEST = 0.05, 60.0


class Timeline:
    """What happened, and when (the loop's clock)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, float]] = []
        self.changed = asyncio.Event()

    def note(self, what: str) -> None:
        self.events.append((what, asyncio.get_running_loop().time()))
        self.changed.set()

    def at(self, what: str) -> float:
        return next(t for name, t in self.events if name == what)

    def names(self) -> list[str]:
        return [name for name, _ in self.events]

    async def until(self, what: str) -> None:
        async with asyncio.timeout(5):
            while what not in self.names():
                self.changed.clear()
                await self.changed.wait()

    def work(self, name: str) -> Coroutine[Any, Any, None]:
        """A piece of work that notes when it ran."""

        async def run() -> None:
            self.note(name)

        return run()


def ack(inflight: InFlight, timeline: Timeline, name: str, spawn: str | None = None) -> None:
    """One request acked at once, spawning the work `spawn` on its way."""
    with inflight.acking():
        if spawn:
            inflight.spawn(timeline.work(spawn))
    timeline.note(f"ack {name}")


async def test_work_spawned_during_a_burst_starts_after_the_bursts_last_ack() -> None:
    inflight, timeline = InFlight(quiet=QUIET, acks_first_for=LONGEST), Timeline()
    ack(inflight, timeline, "a", spawn="work a")
    await asyncio.sleep(0)  # a turn of the loop: the work would start now if it could
    loop = asyncio.get_running_loop()
    loop.call_later(QUIET / 2, ack, inflight, timeline, "b", "work b")
    await timeline.until("work b")
    assert timeline.names() == ["ack a", "ack b", "work a", "work b"]
    assert timeline.at("work a") - timeline.at("ack b") >= QUIET


async def test_an_ack_still_being_sent_when_the_burst_would_end_holds_the_work_back() -> None:
    inflight, timeline = InFlight(quiet=QUIET, acks_first_for=LONGEST), Timeline()
    with inflight.acking():  # a slow request, being acked while another comes and goes
        ack(inflight, timeline, "b", spawn="work b")
        await asyncio.sleep(2 * QUIET)  # the slow request's own slow part
        assert "work b" not in timeline.names()
    timeline.note("slow ack sent")
    await timeline.until("work b")
    assert timeline.at("work b") - timeline.at("slow ack sent") >= QUIET


async def test_each_burst_holds_its_own_work_back() -> None:
    inflight, timeline = InFlight(quiet=QUIET, acks_first_for=LONGEST), Timeline()
    for burst in ("first", "second"):
        ack(inflight, timeline, burst, spawn=f"{burst} work")
        await asyncio.sleep(0)
        assert f"{burst} work" not in timeline.names()
        await timeline.until(f"{burst} work")
    assert timeline.names() == ["ack first", "first work", "ack second", "second work"]


async def test_acks_that_never_stop_hold_work_back_no_longer_than_the_longest() -> None:
    longest = 4 * QUIET
    inflight, timeline = InFlight(quiet=QUIET, acks_first_for=longest), Timeline()
    timeline.note("acking")  # the longest wait counts from the burst's first ack
    with inflight.acking():  # an ack that is still being sent when the work is due
        inflight.spawn(timeline.work("work"))
        await timeline.until("work")
    assert timeline.at("work") - timeline.at("acking") >= longest
    ack(inflight, timeline, "next", spawn="next work")  # a new burst holds its work back again
    await asyncio.sleep(0)
    assert "next work" not in timeline.names()
    await timeline.until("next work")


async def test_work_outside_any_burst_starts_at_once_and_work_starts_in_order() -> None:
    inflight, timeline = InFlight(quiet=QUIET, acks_first_for=LONGEST), Timeline()
    inflight.spawn(timeline.work("alone"))
    await asyncio.sleep(0)  # one turn of the loop: the task's first step
    assert timeline.names() == ["alone"]
    with inflight.acking():
        for name in ("one", "two", "three"):
            inflight.spawn(timeline.work(name))
    await timeline.until("three")
    inflight.spawn(timeline.work("alone again"))  # the burst is over: at once again
    await asyncio.sleep(0)
    assert timeline.names() == ["alone", "one", "two", "three", "alone again"]


async def test_work_held_back_counts_as_in_flight_and_a_shutdown_waits_for_it() -> None:
    inflight, timeline = InFlight(quiet=QUIET, acks_first_for=LONGEST), Timeline()
    assert not inflight.draining  # a new service takes commands
    ack(inflight, timeline, "a", spawn="work a")
    ack(inflight, timeline, "b", spawn="work b")
    assert inflight.count == 2
    assert await inflight.wait_idle(5)
    assert {"work a", "work b"} <= set(timeline.names()) and inflight.count == 0


async def test_a_shutdown_that_runs_out_of_time_says_so() -> None:
    inflight, never = InFlight(quiet=QUIET, acks_first_for=LONGEST), asyncio.Event()

    async def slow_reply() -> None:
        await never.wait()

    inflight.spawn(slow_reply())
    assert not await inflight.wait_idle(QUIET)
    assert inflight.count == 1
    never.set()
    assert await inflight.wait_idle(5)


async def test_replayed_work_never_runs_and_failing_work_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    inflight, timeline = InFlight(quiet=QUIET, acks_first_for=LONGEST), Timeline()

    async def answer(first: bool) -> bool:
        return first

    async def broken() -> None:
        raise RuntimeError("simulated bug")

    inflight.spawn(timeline.work("replay"), first_time=answer(False))
    inflight.spawn(timeline.work("first"), first_time=answer(True))
    inflight.spawn(broken())
    assert await inflight.wait_idle(5)
    assert timeline.names() == ["first"]
    assert [r.getMessage() for r in caplog.records] == [
        "ignored a replayed Slack request (handled on another replica)",
        "work after an ack failed",
    ]
    assert "simulated bug" in caplog.text


async def test_when_a_replay_cannot_be_ruled_out_a_change_is_refused_and_a_read_runs() -> None:
    inflight, timeline = InFlight(quiet=QUIET, acks_first_for=LONGEST), Timeline()

    async def unknown() -> bool:
        raise OnceUnavailable("request memory ConfigMap: the API server answered 503")

    async def refuse() -> None:
        timeline.note("refused: try again")

    inflight.spawn(timeline.work("reconcile"), first_time=unknown(), refuse=refuse)
    inflight.spawn(timeline.work("health"), first_time=unknown())
    assert await inflight.wait_idle(5)
    assert sorted(timeline.names()) == ["health", "refused: try again"]


async def test_a_scheduled_job_due_during_a_burst_waits_for_its_acks() -> None:
    inflight, timeline = InFlight(quiet=QUIET, acks_first_for=LONGEST), Timeline()

    async def job(name: str) -> None:
        await inflight.acks_sent()
        timeline.note(name)

    await asyncio.wait_for(job("a job in a quiet time"), 5)  # no burst: at once
    ack(inflight, timeline, "a")
    running = asyncio.create_task(job("a job due during a burst"))
    await asyncio.sleep(0)
    assert timeline.names() == ["a job in a quiet time", "ack a"]
    await asyncio.wait_for(running, 5)
    assert timeline.at("a job due during a burst") - timeline.at("ack a") >= QUIET


async def test_a_stop_cancels_work_still_running_and_waits_for_its_end() -> None:
    inflight = InFlight(quiet=QUIET, acks_first_for=LONGEST)
    started, ended = asyncio.Event(), asyncio.Event()

    async def endless() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            ended.set()

    inflight.spawn(endless())
    await asyncio.wait_for(started.wait(), 5)
    assert not await inflight.wait_idle(0.01)

    await inflight.cancel_running()

    assert ended.is_set() and inflight.count == 0
