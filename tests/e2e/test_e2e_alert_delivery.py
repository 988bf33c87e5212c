"""Alerts are delivered exactly once, whatever Slack and the cluster do (issue 10).

One test per defect the issue reproduced, each against the real service, the simulator and the
emulator with faults injected (Slack answers late, drops the connection after doing the call,
fails for a while; the API server fails; a second replica takes the Lease mid-post; the
process dies between two steps), and each ends with the invariant checker over the final
channel (`alert_invariants`).
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from alert_invariants import resolved_incidents
from alert_stack import (
    FAST_FAILING,
    HOLD,
    SHARED_15S,
    SLACK_TIMEOUT,
    Gate,
    alert_stack,
    assert_one_clean_incident,
    check,
    fire,
    kept,
    lease_holder,
    renew,
    resolve,
    roots,
    thread_texts,
    two_replicas,
    verdict,
)
from clocks import Clock
from slack_sdk.web.async_client import AsyncWebClient

from bot.alerts.store import SqliteStore
from bot.service import jobs_alerts
from testbed.sim import breakage
from testbed.slackemu.records import Fault
from testbed.stack import ALERT_CHANNEL, CLUSTER

SLACK_DOWN = Fault(503, 0, "service_unavailable")


def slack_writes_down(method: str) -> Fault | None:
    return SLACK_DOWN if method.startswith("chat.") else None


async def test_resolution_lost__a_resolution_and_an_ack_during_a_long_outage_and_a_restart_arrive(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        await fire(stack, clock)
        [root] = roots(stack)
        alert_id = root.blocks[-1]["elements"][0]["value"].split(":")[1]

        stack.slack.fault_rule = slack_writes_down  # far longer than any retry
        acked = await stack.command(f"ack {alert_id}")
        assert acked.text.startswith(f"Acknowledged alert {alert_id}")
        await resolve(stack, clock)
        await stack.restart_service()  # the process stops with all of it still owed
        assert thread_texts(stack, root) == []

        stack.slack.fault_rule = None
        await check(stack.service)

        [ack, resolution] = thread_texts(stack, root)
        assert ack.startswith(":eyes: Acknowledged by")
        assert resolution.startswith(":white_check_mark: Resolved")
        assert resolved_incidents(stack.slack, ALERT_CHANNEL) != []
        assert_one_clean_incident(stack)
        assert (await stack.service.deps.alerts.list_alerts(CLUSTER))[0].closing == ()  # type: ignore[union-attr]


async def test_timeout_on_the_root_post__an_answer_later_than_the_timeout_gives_no_second_root(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        late = SLACK_TIMEOUT * 2
        stack.slack.fail_next("chat.postMessage", status=200, mode="delay_after", delay=late)
        await fire(stack, clock)
        await check(stack.service)
        await resolve(stack, clock)

        [root] = roots(stack)
        assert root.text.startswith("[RESOLVED")
        assert stack.slack.calls_to("conversations.history")  # looked for before posting again
        assert_one_clean_incident(stack)


async def test_dropped_connection__a_post_slack_did_before_the_drop_is_neither_resent_nor_doubled(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        stack.slack.fail_next("chat.postMessage", status=200, mode="drop_after", times=2)
        await fire(stack, clock)  # raises nothing, although aiohttp saw the server hang up

        first_calls = [c.method for c in stack.slack.calls if c.method != "auth.test"][:3]
        # Where the channel stands (Slack's clock), the post, then a look: no blind re-send.
        assert first_calls == ["conversations.history", "chat.postMessage", "conversations.history"]
        await resolve(stack, clock)
        assert_one_clean_incident(stack)


async def test_process_killed_between_the_post_and_its_record__the_restart_finds_the_root(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        gate = Gate()
        stack.slack.fail_next("chat.postMessage", status=200, mode="delay_before", gate=gate)
        breakage.dependencies_missing(stack.sim)
        await check(stack.service)
        clock.advance(HOLD)
        dying = asyncio.create_task(check(stack.service))
        await gate.arrived.wait()
        dying.cancel()  # killed while its post is on the wire
        await asyncio.gather(dying, return_exceptions=True)
        gate.set()  # ... and Slack still does it
        await stack.slack.wait_for_call("chat.postMessage")
        await stack.restart_service()
        await check(stack.service)
        await resolve(stack, clock)

        assert_one_clean_incident(stack)


async def test_lease_change_mid_post__the_new_holder_waits_for_the_deposed_replicas_root(
    tmp_path: Path,
) -> None:
    clock = Clock()
    lease = {"enabled": True, "duration": "15s"}
    async with (
        alert_stack(tmp_path, clock, lease=lease) as (stack, holders),
        two_replicas(stack) as (first, second),
    ):
        gate = Gate()
        stack.slack.fail_next("chat.postMessage", status=200, mode="delay_before", gate=gate)
        breakage.dependencies_missing(stack.sim)
        await check(first)
        clock.advance(HOLD)
        await renew(first, second)
        stuck = asyncio.create_task(check(first))  # its root post hangs on the way
        await gate.arrived.wait()

        clock.advance(1)
        await renew(second)  # sees first's record; first stops renewing
        clock.advance(16)
        await renew(second)
        assert lease_holder(stack.sim) == second.deps.lease.identity  # type: ignore[union-attr]
        await check(second)  # nothing found yet: a copy may still land, so no second page
        assert [c for c in stack.slack.calls_to("chat.postMessage") if c.ok] == []
        gate.set()  # first's copy lands after all
        await stuck

        breakage.heal(stack.sim)
        for _ in range(2):
            await renew(second)
            await check(second)
            clock.advance(HOLD)
        await renew(second)
        await check(second)
        [root] = roots(stack)
        assert root.text.startswith("[RESOLVED")
        assert not stack.slack.calls_to("chat.delete")  # nothing was doubled to delete
        # first's copy landed after the Lease moved: the holder's state kept it, as the one copy
        assert_one_clean_incident(stack, holders, await kept(second))


async def test_lease_timed_on_the_wall_clock__a_clock_step_makes_no_second_leader(
    tmp_path: Path,
) -> None:
    clock = Clock()
    lease = {"enabled": True, "duration": "15s"}
    async with (
        alert_stack(tmp_path, clock, lease=lease) as (stack, holders),
        two_replicas(stack) as (first, second),
    ):
        clock.step(2 * 3600)  # the wall clock jumps two hours; two seconds really pass
        clock.advance(2)
        await renew(second, first)
        assert jobs_alerts.is_leader(first.deps) and not jobs_alerts.is_leader(second.deps)

        breakage.dependencies_missing(stack.sim)
        for _ in range(3):
            await check(first)
            await check(second)
            clock.advance(HOLD // 2)
            await renew(first, second)
        assert len(roots(stack)) == 1
        assert_one_clean_incident(stack, holders)


async def test_damaged_state__kept_aside_said_once_and_alerting_goes_on(tmp_path: Path) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        await fire(stack, clock)
        path = str(tmp_path / "state.sqlite")
        with sqlite3.connect(path) as db:
            db.execute("UPDATE alert_state SET body = ?", ('{"schema": 2, "failures": [3]}',))

        listing = await stack.command("alerts")
        assert listing.text.startswith("Alerts: 0 active")  # not "Something went wrong"
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)
        await check(stack.service)

        notices = [
            m for m in stack.slack.root_messages(ALERT_CHANNEL) if "could not read" in m.text
        ]
        assert len(notices) == 1
        assert "kept aside" in notices[0].text
        assert len(roots(stack)) == 2  # the old incident's root, and the new one: alerting goes on
        store = SqliteStore(path)
        assert (await store.load(CLUSTER)).damage is None
        store.close()
        with sqlite3.connect(path) as db:
            [(kept,)] = db.execute("SELECT body FROM alert_state_damaged").fetchall()
        assert kept == '{"schema": 2, "failures": [3]}'


async def test_warning_counted_before_it_was_posted__a_failed_warning_is_posted_next_time(
    tmp_path: Path,
) -> None:
    clock = Clock()
    shared = {"state": {"backend": "configmap"}, "lease": {"duration": "1h"}}
    async with alert_stack(tmp_path, clock, **shared) as (stack, _):
        stack.sim.faults.add(403, resource="leases", times=None)
        stack.slack.fail_next("chat.postMessage", status=503, error="service_unavailable")
        for _ in range(4):
            if stack.slack.calls_to("chat.postMessage"):
                break
            await renew(stack.service)  # the third failure says it, and Slack fails that post
        assert stack.slack.calls_to("chat.postMessage")[0].faulted
        assert stack.slack.root_messages(ALERT_CHANNEL) == []
        await renew(stack.service)
        [warning] = stack.slack.root_messages(ALERT_CHANNEL)
        assert "cannot use its Lease" in warning.text


async def test_intermittent_api_errors__three_checks_in_four_failing_are_one_incident(
    tmp_path: Path,
) -> None:
    clock = Clock()
    fast = {"kubernetes": {"request_timeout": "2s", "retries": 0}}
    async with alert_stack(tmp_path, clock, **fast) as (stack, _):
        for _ in range(5):  # ten minutes of 30 s checks, three in four failing
            for failing in (True, True, True, False):
                stack.sim.faults.refuse_all = failing
                await check(stack.service)
                clock.advance(30)
        stack.sim.faults.refuse_all = False
        for _ in range(3):
            await check(stack.service)
            clock.advance(30)

        [root] = roots(stack)
        assert "Cannot check cluster sim" in root.text
        assert root.text.startswith("[RESOLVED")
        [resolved] = thread_texts(stack, root)
        assert resolved.startswith(":white_check_mark: Resolved")
        assert verdict(stack).ok


async def test_one_503_on_a_state_write__retried_and_an_outage_ends_with_an_all_clear(
    tmp_path: Path,
) -> None:
    clock = Clock()
    shared = {"state": {"backend": "configmap"}, "lease": {"duration": "1h"}}
    async with alert_stack(tmp_path, clock, **shared) as (stack, holders):
        await renew(stack.service)
        stack.sim.faults.add(503, resource="configmaps", verb="patch", times=1)
        await fire(stack, clock)
        assert len(roots(stack)) == 1
        assert not [m for m in stack.slack.root_messages(ALERT_CHANNEL) if "alert state" in m.text]

        # The state is read from a watched copy, so an outage shows when a check must save:
        # the cluster heals during it, and each check's step (clear since ...) cannot be kept.
        outage = stack.sim.faults.add(503, resource="configmaps", times=None)
        breakage.heal(stack.sim)
        for _ in range(3):
            clock.advance(30)
            await check(stack.service)
        outage.times = 0  # over
        for _ in range(3):
            clock.advance(30)
            await check(stack.service)

        said = [m.text for m in stack.slack.root_messages(ALERT_CHANNEL) if "alert state" in m.text]
        assert len(said) == 2
        assert "cannot keep its alert state" in said[0]
        assert said[1].startswith(":white_check_mark: kai-chatops can keep its alert state")
        assert verdict(stack, holders).ok


async def test_first_cluster_outage__two_replicas_say_the_lease_trouble_once_then_its_end(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with (
        alert_stack(tmp_path, clock, **SHARED_15S, **FAST_FAILING) as (stack, _),
        two_replicas(stack) as (first, second),
    ):
        stack.sim.faults.refuse_all = True
        for _ in range(4):
            await renew(first, second)
            clock.advance(4)
        stack.sim.faults.refuse_all = False
        await renew(first, second)
        clock.advance(HOLD)
        await renew(first, second)

        said = [m.text for m in stack.slack.root_messages(ALERT_CHANNEL)]
        assert len(said) == 2, said
        assert "cannot use its Lease" in said[0]
        assert "can use its Lease kai-chatops/kai-chatops-alerts again" in said[1]


async def test_the_emulator_returns_metadata_only_when_asked_as_slack_does(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        await fire(stack, clock)
        client = AsyncWebClient(token=stack.slack.bot_token, base_url=stack.slack.api_url)
        asked = await client.conversations_history(channel=ALERT_CHANNEL, include_all_metadata=True)
        assert asked["messages"][0]["metadata"]["event_type"] == "kai_chatops_effect"
        [root] = roots(stack)
        thread = await client.conversations_replies(
            channel=ALERT_CHANNEL, ts=root.ts, include_all_metadata=True
        )
        assert thread["messages"][0]["metadata"]["event_payload"]["effect"].endswith(":0")
        plain = await client.conversations_history(channel=ALERT_CHANNEL)
        assert "metadata" not in plain["messages"][0]
