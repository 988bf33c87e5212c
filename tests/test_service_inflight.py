"""Work after an ack waits for the acks of the same burst (bot/service/inflight.py)."""

from __future__ import annotations

import asyncio

from bot.service.inflight import InFlight


async def test_work_spawned_during_a_burst_starts_after_the_bursts_last_ack() -> None:
    inflight = InFlight(quiet=0.005)
    events: list[str] = []

    async def work(name: str) -> None:
        events.append(f"work {name}")

    with inflight.acking():
        inflight.spawn(work("a"))
        await asyncio.sleep(0)  # the loop runs: the work is due but must wait
    events.append("ack a sent")
    with inflight.acking():
        events.append("ack b")
        inflight.spawn(work("b"))
    events.append("ack b sent")
    await asyncio.wait_for(inflight.wait_idle(5), 5)
    assert events == ["ack a sent", "ack b", "ack b sent", "work a", "work b"]


async def test_acks_that_never_stop_do_not_hold_work_back_for_ever() -> None:
    inflight = InFlight(quiet=0.005, acks_first_for=0.05)
    done = asyncio.Event()

    async def work() -> None:
        done.set()

    with inflight.acking():  # an ack that is still being sent when the work is due
        inflight.spawn(work())
        await asyncio.wait_for(done.wait(), 5)
    assert done.is_set()


async def test_work_outside_any_burst_starts_at_once() -> None:
    inflight = InFlight()
    started = asyncio.Event()

    async def work() -> None:
        started.set()

    inflight.spawn(work())
    await asyncio.sleep(0)  # one turn of the loop: the task's first step
    assert started.is_set()
