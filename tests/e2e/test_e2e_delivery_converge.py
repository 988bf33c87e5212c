"""The channel converges to the truth (issue 21): each test is one way the channel ended wrong
after an incident fully resolved (found by a fault review, or suspected), reproduced against
the real service, the simulator and the emulator, and now ending right.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from alert_stack import (
    FAST_FAILING,
    HOLD,
    SHARED_15S,
    Gate,
    Outage,
    alert_id,
    alert_stack,
    check,
    fire,
    hold_posts_of,
    live_roots,
    notes_in_thread,
    renew,
    resolve,
    roots,
    take_over,
    two_replicas,
    verdict,
)
from clocks import Clock
from waiting import wait_until

from bot.service.server import Service
from testbed.sim import breakage
from testbed.slackemu import ApiCall
from testbed.stack import ALERT_CHANNEL, Stack

ISSUE = "issue 21: "
LEASE_15S = {"enabled": True, "duration": "15s"}


@pytest.mark.parametrize(
    "offset",
    [-3, 3],
    ids=["slack 3h behind the host", "slack 3h ahead of the host"],
)
async def test_a_root_whose_answer_was_lost_is_found_when_slack_clock_is_hours_off(
    tmp_path: Path, offset: int
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        stack.slack.clock_offset = timedelta(hours=offset)
        stack.slack.fail_next("chat.postMessage", status=200, mode="drop_after")
        await fire(stack, clock)  # the root is applied, its answer never comes
        await check(stack.service)
        await resolve(stack, clock)
        await check(stack.service)

        assert len(roots(stack)) == 1, [r.text[:40] for r in roots(stack)]
        assert live_roots(stack) == []  # no buttons left on a resolved incident
        assert verdict(stack).ok, verdict(stack).problems


async def test_a_root_whose_answer_was_lost_is_found_under_a_thousand_later_messages(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        history = Outage("conversations.history")
        stack.slack.fault_rule = history
        stack.slack.fail_next("chat.postMessage", status=200, mode="drop_after")
        await fire(stack, clock)  # root applied, answer lost; the look cannot read history
        stack.slack.flood(ALERT_CHANNEL, 1500)  # people talk meanwhile
        clock.advance(30)
        await check(stack.service)
        history.on = False
        await check(stack.service)
        await resolve(stack, clock)
        await check(stack.service)

        assert len(roots(stack)) == 1, [r.text[:40] for r in roots(stack)]
        assert verdict(stack).ok, verdict(stack).problems


async def test_a_reply_whose_answer_was_lost_is_found_at_the_end_of_a_long_thread(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        await fire(stack, clock)
        [root] = roots(stack)
        stack.slack.flood(ALERT_CHANNEL, 1200, thread_ts=root.ts)  # a long war-room thread
        stack.slack.fail_next("chat.postMessage", status=200, mode="drop_after")
        acked = await stack.command(f"ack {alert_id(root)}")  # its reply: answer lost
        assert acked.text.startswith("Acknowledged alert")
        await check(stack.service)
        await resolve(stack, clock)
        await check(stack.service)

        said = notes_in_thread(stack, root)
        assert said.count("acknowledged") == 1, said
        assert verdict(stack).ok, verdict(stack).problems


async def tick(clock: Clock, seconds: float, holder: Service, *others: Service) -> None:
    """The clocks move; every replica renews (the holder first); the holder checks."""
    clock.advance(seconds)
    await renew(holder, *others)
    await check(holder)


async def fired_on(stack: Stack, clock: Clock, holder: Service, other: Service) -> None:
    breakage.dependencies_missing(stack.sim)
    await tick(clock, 0, holder, other)
    await tick(clock, HOLD, holder, other)


async def test_a_deposed_replicas_slow_resolution_reply_leaves_one_resolved_reply(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with (
        alert_stack(tmp_path, clock, lease=LEASE_15S) as (stack, holders),
        two_replicas(stack) as (first, second),
    ):
        await fired_on(stack, clock, first, second)
        [root] = roots(stack)
        breakage.heal(stack.sim)
        await tick(clock, 1, first, second)
        slow = hold_posts_of(stack, first)
        await tick(clock, HOLD, first, second)  # resolved: its reply hangs, first gives up
        assert slow.held >= 1
        await take_over(stack, clock, second)
        for _ in range(3):  # posts the resolution, records it, edits, sweeps
            await tick(clock, 1, second)
        slow.release()  # ... and first's reply lands after all
        await stack.slack.wait_for(lambda: slow.all_landed)
        await tick(clock, 1, second)  # the holder's next drain

        said = notes_in_thread(stack, root)
        assert said.count("resolved") == 1, said
        assert verdict(stack, holders).ok, verdict(stack, holders).problems


async def test_a_deposed_replicas_slow_reply_landing_after_the_takeover_is_deleted_while_open(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with (
        alert_stack(tmp_path, clock, lease=LEASE_15S) as (stack, _),
        two_replicas(stack) as (first, second),
    ):
        await fired_on(stack, clock, first, second)
        [root] = roots(stack)
        slow = hold_posts_of(stack, first)
        await stack.command(f"ack {alert_id(root)}")  # first's reply hangs, every try of it
        assert slow.held >= 1
        await take_over(stack, clock, second)
        await tick(clock, 1, second)  # the new holder posts the reply itself and records it
        slow.release()  # ... and first's tries land after all, the incident still open
        await stack.slack.wait_for(lambda: slow.all_landed)
        await tick(clock, 1, second)  # the holder's next drain

        said = notes_in_thread(stack, root)
        assert said.count("acknowledged") == 1, said
        assert live_roots(stack), "the incident is still open"


async def test_a_deposed_replicas_slow_edit_landing_last_leaves_the_root_resolved(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with (
        alert_stack(tmp_path, clock, lease=LEASE_15S) as (stack, _),
        two_replicas(stack) as (first, second),
    ):
        await fired_on(stack, clock, first, second)
        [root] = roots(stack)
        holding = [True]
        slow = stack.slack.hold_calls(lambda method, _: method == "chat.update" and holding[0])
        acked = await stack.command(f"ack {alert_id(root)}")  # first edits the root: it hangs
        assert acked.text.startswith("Acknowledged alert")
        await stack.slack.wait_for(lambda: slow.held >= 1)
        holding[0] = False  # only first's edits hang
        await take_over(stack, clock, second)
        breakage.heal(stack.sim)
        await tick(clock, 1, second)
        await tick(clock, HOLD, second)  # resolved: reply, edit to resolved, sweep
        await tick(clock, 1, second)
        assert stack.slack.message(ALERT_CHANNEL, root.ts).text.startswith("[RESOLVED")
        slow.release()  # first's edit to "acknowledged" lands last
        await stack.slack.wait_for(lambda: slow.all_landed)
        await tick(clock, 1, second)  # the holder's next drain

        shown = stack.slack.message(ALERT_CHANNEL, root.ts)
        assert shown.text.startswith("[RESOLVED"), shown.text[:60]
        assert live_roots(stack) == []


async def test_lease_trouble_is_said_once_by_two_replicas_when_history_is_unreadable(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with (
        alert_stack(tmp_path, clock, **SHARED_15S, **FAST_FAILING) as (stack, _),
        two_replicas(stack) as (first, second),
    ):
        stack.slack.fault_rule = Outage("conversations.history")  # the look finds nothing
        stack.sim.faults.refuse_all = True
        for _ in range(4):
            await renew(first, second)
            clock.advance(4)
        stack.sim.faults.refuse_all = False
        await renew(first, second)

        said = [m.text for m in stack.slack.root_messages(ALERT_CHANNEL)]
        assert len([t for t in said if "cannot use its Lease" in t]) == 1, said


async def test_a_silence_whose_store_write_was_applied_but_answered_503_is_said_once(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with (
        alert_stack(tmp_path, clock, **SHARED_15S) as (stack, _),
        two_replicas(stack) as (commands, holder),
    ):
        await take_over(stack, clock, holder)  # the replica Slack sends commands to is not it
        await fired_on(stack, clock, holder, commands)
        [root] = roots(stack)
        stack.sim.faults.add(503, resource="configmaps", verb="patch", applied=True)
        retry = asyncio.Event()
        held = stack.sim.faults.add(None, resource="configmaps", verb="patch", gate=retry)
        silencing = asyncio.create_task(stack.command(f"silence {alert_id(root)} 1h deploy"))
        await wait_until(lambda: held.hits, 30, "the silence's store write sent again")
        await tick(clock, 1, holder)  # the holder says it and writes the state meanwhile
        retry.set()  # the retry meets that write: 409
        answer = await silencing
        for _ in range(2):
            await tick(clock, 1, holder, commands)

        said = notes_in_thread(stack, root)
        assert said.count("silenced") == 1, (answer.text, said)


async def test_a_late_copy_is_deleted_by_the_next_drain_though_the_look_after_recording_failed(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        first_try = Gate()
        stack.slack.fail_next("chat.postMessage", status=200, mode="delay_before", gate=first_try)
        history = Outage("conversations.history", "conversations.replies")
        history.on = False
        stack.slack.fault_rule = history

        def second_try_recorded(call: ApiCall) -> None:
            # The root sent again is applied: the first try lands now, and the look fails.
            if call.method == "chat.postMessage" and call.ok and not first_try.is_set():
                history.on = True
                first_try.set()

        stack.slack.observers.append(second_try_recorded)
        await fire(stack, clock)  # the first try hangs and is looked for: not found
        clock.advance(30)
        await check(stack.service)  # still not found a while later: sent again
        await stack.slack.wait_for(lambda: len(roots(stack)) == 2)
        history.on = False
        clock.advance(30)
        await check(stack.service)  # the holder's next drain

        assert len(roots(stack)) == 1, [r.ts for r in roots(stack)]
        await resolve(stack, clock)
        assert verdict(stack).ok, verdict(stack).problems


async def test_lease_trouble_is_said_once_by_two_replicas_that_looked_before_either_posted(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with (
        alert_stack(tmp_path, clock, **SHARED_15S, **FAST_FAILING) as (stack, _),
        two_replicas(stack) as (first, second),
    ):
        stack.sim.faults.refuse_all = True
        for _ in range(4):
            await renew_racing(stack, first, second)
            clock.advance(4)
        stack.sim.faults.refuse_all = False
        for _ in range(2):
            await renew_racing(stack, first, second)
            clock.advance(HOLD)

        said = [m.text for m in stack.slack.root_messages(ALERT_CHANNEL)]
        assert len([t for t in said if "cannot use its Lease" in t]) == 1, said


async def renew_racing(stack: Stack, first: Service, second: Service) -> None:
    """Both replicas renew at once; a post by either waits on the wire until the other one
    posted too (or finished): both looked before either post landed."""
    posts = stack.slack.hold_calls(lambda method, _: method == "chat.postMessage")
    both = asyncio.create_task(stack.slack.wait_for(lambda: posts.held >= 2, timeout=60))
    renewing = asyncio.gather(renew(first), renew(second))
    await asyncio.wait([both, renewing], return_when=asyncio.FIRST_COMPLETED)
    posts.release()
    both.cancel()
    await asyncio.gather(renewing, both, return_exceptions=True)
