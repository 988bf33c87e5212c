"""Slack's budget, spent on purpose (issue 34): what a person waits for goes first, a read that
agreed is not repeated, and no check waits for Slack. Each test is one finding of the review,
against the real service, the simulator and the emulator with Slack's tiers enforced.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from alert_stack import (
    HOLD,
    Outage,
    alert_id,
    alert_stack,
    check,
    fire,
    overrides,
    renew,
    roots,
    take_over,
    thread_texts,
    two_replicas,
    verdict,
)
from clocks import Clock
from waiting import wait_until

from bot.service import jobs_alerts
from testbed.sim import breakage
from testbed.slackemu import ApiCall
from testbed.stack import ALERT_CHANNEL, CLUSTER, Stack, running_stack

READS = ("conversations.history", "conversations.replies")
# Replicas sharing the ConfigMap state and a 15 s Lease.
SHARED = {"state": {"backend": "configmap"}, "lease": {"enabled": True, "duration": "15s"}}


def calls_since(stack: Stack, start: int, *methods: str) -> list[ApiCall]:
    return [c for c in stack.slack.calls[start:] if c.method in methods]


async def test_with_history_unreadable_a_new_page_goes_before_any_round_of_looks(
    tmp_path: Path,
) -> None:
    """A read that fails blocks a new page: with `conversations.history` answering 503, the
    drain looked at the open incidents' channel (again and again) before it posted anything.
    Now what is owed goes first, and a round of looks gives way between two looks to a drain
    that owes something: at most the look under way and the page's own look-up of the
    channel's newest message (which may fail, and does not stop the post) come before it."""
    clock = Clock()
    async with alert_stack(tmp_path, clock, **SHARED) as (stack, _):
        await renew(stack.service)
        breakage.dependencies_missing(stack.sim)
        await check(stack.service)
        clock.advance(HOLD)
        await renew(stack.service)
        await check(stack.service)
        assert len(roots(stack)) == 1  # one incident open: a new holder looks at its channel
        await stack.service.stop()  # a restart: the Lease is given up
        second = stack.make_service()
        await second.start()
        try:
            await second.schedule.stop()  # the test runs the jobs on its own clock
            history = Outage("conversations.history")
            stack.slack.fault_rule = history
            await jobs_alerts.keep_lease(second.deps)  # takes the Lease: looks are due
            await second.deps.alerts.deliveries_done()
            breakage.apiservice_missing(stack.sim)
            await check(second)
            clock.advance(HOLD)
            await renew(second)  # a Lease holder renews while the clock moves
            start = len(stack.slack.calls)
            await check(second)

            posts = calls_since(stack, start, "chat.postMessage")
            assert posts and posts[0].ok, [c.method for c in stack.slack.calls[start:]]
            first_post = stack.slack.calls.index(posts[0])
            looked = calls_since(stack, start, *READS)
            before = [c for c in looked if stack.slack.calls.index(c) < first_post]
            # At most the look under way when the page came (its channel and its thread: the
            # takeover's drain had begun it) and the page's own look-up of the newest message.
            assert len(before) <= 3, [c.method for c in before]
            assert any("APIService" in r.text for r in roots(stack))
        finally:
            await second.stop()


async def test_a_root_slack_answered_503_is_posted_as_soon_as_slack_is_back(
    tmp_path: Path,
) -> None:
    """The regression of round 2: a root whose post got a 503 during an outage was posted
    again only a Slack timeout (the landing bound) after the outage ended. A call Slack
    answered cannot land later: once a look finds no copy, it is posted again at once."""
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        outage = Outage("chat.postMessage")
        stack.slack.fault_rule = outage
        await fire(stack, clock, breaking=breakage.apiservice_down)
        assert outage.failed >= 1 and roots(stack) == []
        outage.on = False
        await check(stack.service)  # the clocks have not moved: no landing bound waited out

        assert len(roots(stack)) == 1
        assert verdict(stack).ok, verdict(stack).problems


async def test_a_check_returns_while_slack_holds_its_page_and_the_next_check_runs(
    tmp_path: Path,
) -> None:
    """No check waits on Slack: a scheduled check saves what it owes and leaves the sending to
    the cluster's courier, so a post held by Slack (an outage, a long Retry-After) neither
    delays the check nor skips the next one; the page lands once Slack lets it."""
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        held = stack.slack.hold_calls(lambda method, _: method == "chat.postMessage")
        deps = stack.service.deps
        breakage.dependencies_missing(stack.sim)
        await asyncio.wait_for(jobs_alerts.check_cluster(deps, CLUSTER, deliver_apart=True), 10)
        clock.advance(HOLD)
        await asyncio.wait_for(jobs_alerts.check_cluster(deps, CLUSTER, deliver_apart=True), 10)
        await stack.slack.wait_for(lambda: held.held >= 1)
        checked = deps.metrics.alert_checks.labels(CLUSTER, "ok")._value.get()
        await asyncio.wait_for(jobs_alerts.check_cluster(deps, CLUSTER, deliver_apart=True), 10)
        assert deps.metrics.alert_checks.labels(CLUSTER, "ok")._value.get() == checked + 1
        assert roots(stack) == []  # still held

        held.release()
        await deps.alerts.deliveries_done()
        await wait_until(lambda: len(roots(stack)) == 1, 10, "the held page to land")
        assert verdict(stack).ok, verdict(stack).problems


async def test_after_a_takeover_each_open_incident_costs_at_most_two_reads_of_slack(
    tmp_path: Path,
) -> None:
    """After a restart or a change of holder each open incident was read five or six times,
    with both `conversations.history` and `conversations.replies`, until the settle window
    ended, though the first read agreed. Now each is looked at once at the takeover and once
    when a deposed replica's call can no longer land, and one read of the channel serves
    every incident in it."""
    clock = Clock()
    async with (
        alert_stack(tmp_path, clock, **SHARED) as (stack, _),
        two_replicas(stack) as (first, second),
    ):
        for breaking in (
            breakage.dependencies_missing,
            breakage.apiservice_down,
            breakage.operator_down,
        ):
            breaking(stack.sim)
        await check(first)
        clock.advance(HOLD)
        await renew(first, second)
        await check(first)
        open_incidents = len(roots(stack))
        assert open_incidents == 3
        stack.slack.flood(ALERT_CHANNEL, 600)  # a busy channel: three pages of history

        start = len(stack.slack.calls)
        await take_over(stack, clock, second)
        for _ in range(5):  # checks at the takeover, and past the settle window (15.3 s)
            await check(second)
            await second.deps.alerts.deliveries_done()
            clock.advance(8)  # within the Lease: the holder renews, its term goes on
            await renew(second)

        replies = calls_since(stack, start, "conversations.replies")
        history = calls_since(stack, start, "conversations.history")
        assert len(replies) <= 2 * open_incidents, len(replies)
        assert len(history) <= 4 + 1, len(history)  # one read of the channel, then read on
        assert not any(c.rate_limited for c in stack.slack.calls[start:])
        assert verdict(stack).ok, verdict(stack).problems


async def test_an_ack_is_answered_while_slack_still_holds_the_reply_it_owes(
    tmp_path: Path,
) -> None:
    """A command's answer waits for Slack a moment, never for a drain that Slack holds up (the
    soak's `ack`, under a history outage in a busy channel, waited more than 30 s): here the
    thread's post is held for as long as the service's Slack client would wait, two minutes."""
    clock = Clock()
    async with running_stack(
        tmp_path,
        clock=clock,
        monotonic=clock.monotonic,
        config_overrides=overrides(tmp_path),
        slack_timeout=120,
    ) as stack:
        await fire(stack, clock)
        [root] = roots(stack)
        held = stack.slack.hold_calls(lambda method, _: method == "chat.postMessage")

        answer = await stack.command(f"ack {alert_id(root)}")

        assert answer.text.startswith("Acknowledged alert"), answer.text
        assert held.held == 1  # the thread's "Acknowledged by" is still on its way
        held.release()
        await stack.service.deps.alerts.deliveries_done()
        await wait_until(
            lambda: any("Acknowledged by" in t for t in thread_texts(stack, root)), 10, "the reply"
        )
        assert verdict(stack).ok, verdict(stack).problems
