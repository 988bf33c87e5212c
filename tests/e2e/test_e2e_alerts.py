"""Alerts end to end: the simulator breaks, the service checks, the emulator shows the channel.

The check jobs are called directly (`jobs_alerts.check_cluster`) with the service's own deps and a
clock the test moves, so `hold` and leases take no real time; the scheduler's own interval is an
hour, so it never runs a check behind a test's back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from alert_stack import HOLD, check, overrides, renew, resolve, thread_texts
from alert_stack import fire as fire_alert
from clocks import Clock

from bot.alerts import render as render_alerts
from bot.service import jobs_alerts
from bot.service.server import Service
from testbed.sim import Simulator, breakage
from testbed.slackemu import PostedMessage
from testbed.stack import ALERT_CHANNEL, CLUSTER, OPERATOR, VIEWER, Stack, running_stack

DEPENDENCIES_MESSAGE = "KAI-prometheus is missing prometheus operator"
# The simulator stamps objects with the real time, and the checks measure them by the clock.
pytestmark = pytest.mark.clock_from_now


@pytest.fixture
async def stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    async with running_stack(
        tmp_path, clock=clock, monotonic=clock.monotonic, config_overrides=overrides(tmp_path)
    ) as s:
        yield s


def roots(stack: Stack) -> list[PostedMessage]:
    return stack.slack.root_messages(ALERT_CHANNEL)


def text_of(message: PostedMessage) -> str:
    sections = [b["text"]["text"] for b in message.blocks if "text" in b]
    contexts = [e["text"] for b in message.blocks if b["type"] == "context" for e in b["elements"]]
    return "\n".join([message.text, *sections, *contexts])


def buttons(message: PostedMessage) -> list[str]:
    actions = [b for b in message.blocks if b["type"] == "actions"]
    return [e["text"]["text"] for a in actions for e in a["elements"]]


async def break_through_hold(
    stack: Stack, clock: Clock, breaking: Callable[[Simulator], None]
) -> None:
    """Break the cluster and check until `hold` has passed, seeing nothing posted a second
    before; the root is owed (and sent) by the last check."""
    await check(stack.service)
    breaking(stack.sim)
    await check(stack.service)
    clock.advance(HOLD - 1)
    await check(stack.service)
    assert roots(stack) == []
    clock.advance(1)
    await check(stack.service)


async def fire(stack: Stack, clock: Clock, service: Service | None = None) -> PostedMessage:
    """Break DependenciesFulfilled and check until the hold has passed; the one root posted."""
    await fire_alert(stack, clock, service)
    [root] = roots(stack)
    return root


async def test_dependencies_missing_posts_one_root_after_hold_with_the_condition_message(
    stack: Stack, clock: Clock
) -> None:
    await break_through_hold(stack, clock, breakage.dependencies_missing)
    clock.advance(30)
    await check(stack.service)

    [root] = roots(stack)
    assert DEPENDENCIES_MESSAGE in text_of(root)
    assert "Config kai-config" in text_of(root)
    assert buttons(root) == ["Acknowledge", "Silence 1h", "Silence 4h", "Run health check"]
    assert thread_texts(stack, root) == []
    assert stack.slack.violations == []


def apiservice_unknown(sim: Simulator) -> None:
    sim.set_condition(
        *breakage.APISERVICE, None, "Available", "Unknown", "FailedDiscoveryCheck", "timed out"
    )


def apiservice_without_conditions(sim: Simulator) -> None:
    sim.patch_status(*breakage.APISERVICE, None, {"conditions": None})


@pytest.mark.parametrize(
    ("breaking", "says"),
    [
        pytest.param(
            apiservice_unknown,
            "Available is Unknown: the aggregator could not check",
            id="available-unknown",
        ),
        pytest.param(
            apiservice_without_conditions, "no Available condition yet", id="no-condition"
        ),
    ],
)
async def test_an_apiservice_not_available_pages_after_hold_saying_which_way(
    stack: Stack, clock: Clock, breaking: Callable[[Simulator], None], says: str
) -> None:
    await break_through_hold(stack, clock, breaking)

    [root] = roots(stack)
    assert root.text.startswith(
        f"[CRITICAL] {CLUSTER}: APIService v1beta1.external.metrics.k8s.io Available: {says}"
    )
    assert buttons(root) == ["Acknowledge", "Silence 1h", "Silence 4h", "Run health check"]
    await resolve(stack, clock)
    assert stack.slack.message(ALERT_CHANNEL, root.ts).text.startswith("[RESOLVED (critical)]")


async def test_acknowledge_is_refused_to_a_viewer_and_recorded_for_an_operator(
    stack: Stack, clock: Clock
) -> None:
    root = await fire(stack, clock)

    refused = await click(stack, render_alerts.ACK_ACTION, root, VIEWER)
    assert "not allowed to acknowledge" in refused["text"]
    assert thread_texts(stack, root) == []
    assert stack.slack.message(ALERT_CHANNEL, root.ts).edit_count == 0

    done = await click(stack, render_alerts.ACK_ACTION, root, OPERATOR)
    assert done["response_type"] == "ephemeral"
    assert done["text"].startswith("Acknowledged alert")
    [reply] = thread_texts(stack, root)
    assert f"Acknowledged by <@{OPERATOR}>" in reply
    assert f"acknowledged by <@{OPERATOR}>" in text_of(stack.slack.message(ALERT_CHANNEL, root.ts))


async def test_healing_resolves_in_the_thread_and_edits_the_root(
    stack: Stack, clock: Clock
) -> None:
    root = await fire(stack, clock)
    clock.advance(600)
    await resolve(stack, clock)

    assert len(roots(stack)) == 1
    [reply] = thread_texts(stack, root)
    assert reply.startswith(":white_check_mark: Resolved at")
    edited = stack.slack.message(ALERT_CHANNEL, root.ts)
    assert edited.text.startswith("[RESOLVED (critical)]")
    assert "after firing for 11m" in text_of(edited)
    assert buttons(edited) == []


async def test_a_restart_while_firing_continues_the_same_thread(stack: Stack, clock: Clock) -> None:
    root = await fire(stack, clock)
    await stack.restart_service()
    await check(stack.service)
    assert roots(stack) == [root]

    breakage.heal(stack.sim)  # resolved while the service is down
    await stack.restart_service()
    await check(stack.service)
    clock.advance(HOLD)
    await check(stack.service)

    assert [r.ts for r in roots(stack)] == [root.ts]
    assert thread_texts(stack, root)[-1].startswith(":white_check_mark: Resolved")
    assert stack.slack.message(ALERT_CHANNEL, root.ts).text.startswith("[RESOLVED")


async def test_with_the_configmap_backend_a_restart_continues_the_same_thread(
    tmp_path: Path, clock: Clock
) -> None:
    # The Lease comes with the shared state; an hour long, so moving the clock keeps it held.
    in_cluster = overrides(tmp_path, state={"backend": "configmap"}, lease={"duration": "1h"})
    async with running_stack(
        tmp_path, clock=clock, monotonic=clock.monotonic, config_overrides=in_cluster
    ) as stack:
        await renew(stack.service)
        root = await fire(stack, clock)
        await stack.restart_service()
        await renew(stack.service)
        await resolve(stack, clock)

        assert [r.ts for r in roots(stack)] == [root.ts]
        assert thread_texts(stack, root)[-1].startswith(":white_check_mark: Resolved")
        state = stack.sim.get("v1", "ConfigMap", "kai-chatops-state-sim", "kai-chatops")
        assert state is not None
        assert '"alerts": []' in state["data"]["sim.json"]


async def test_two_rate_limited_answers_delay_the_root_which_arrives_once(
    stack: Stack, clock: Clock
) -> None:
    stack.slack.fail_next("chat.postMessage", status=429, retry_after=0, times=2)
    await fire(stack, clock)

    assert len(roots(stack)) == 1
    posts = stack.slack.calls_to("chat.postMessage")
    assert [bool(c.params.get("thread_ts")) for c in posts] == [False] * 3 + [True] * 2
    metrics = stack.service.deps.metrics.registry
    sends = "kai_chatops_slack_sends_total"
    assert metrics.get_sample_value(sends, {"outcome": "rate_limited"}) == 2
    # the root, its diagnosis, what changed before it
    assert metrics.get_sample_value(sends, {"outcome": "ok"}) == 3


async def test_metrics_show_checks_alerts_by_state_sends_and_the_last_good_check(
    stack: Stack, clock: Clock
) -> None:
    await fire(stack, clock)
    url = f"http://127.0.0.1:{stack.service.port}/metrics"
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        body = await response.text()

    assert 'kai_chatops_alert_checks_total{cluster="sim",outcome="ok"} 2.0' in body
    assert 'kai_chatops_alerts{cluster="sim",state="firing"} 1.0' in body
    assert 'kai_chatops_alerts{cluster="sim",state="pending"} 0.0' in body
    # the root, its diagnosis and what changed before it
    assert 'kai_chatops_slack_sends_total{outcome="ok"} 3.0' in body
    last = 'kai_chatops_last_successful_check_timestamp_seconds{cluster="sim"} '
    [value] = [line.removeprefix(last) for line in body.splitlines() if line.startswith(last)]
    assert float(value) == pytest.approx(clock().timestamp())


async def test_commands_list_silence_and_unsilence_an_alert_in_its_thread(
    stack: Stack, clock: Clock
) -> None:
    root = await fire(stack, clock)
    alert_id = root.blocks[-1]["elements"][0]["value"].split(":")[1]

    listing = await stack.command("alerts", user_id=VIEWER)
    assert f"`{alert_id}`" in listing.text
    assert "DependenciesFulfilled" in listing.text

    refused = await stack.command(f"silence {alert_id} 2h node drain", user_id=VIEWER)
    assert "not allowed to silence" in refused.text
    silenced = await stack.command(f"silence {alert_id} 2h node drain")
    assert silenced.text.startswith(f"Silenced alert {alert_id} for 2h (sim: ")
    lifted = await stack.command(f"unsilence {alert_id}")
    assert lifted.text.startswith(f"Lifted the silence on alert {alert_id}")

    replies = thread_texts(stack, root)
    assert f"Silenced by <@{OPERATOR}>" in replies[0]
    assert "Reason: node drain" in replies[0]
    assert "Silence lifted" in replies[1]
    unknown = await stack.command("ack zzzzzz")
    assert "No active alert 'zzzzzz'" in unknown.text


async def test_silence_1h_button_mutes_until_it_expires_then_it_fires_again_in_the_thread(
    stack: Stack, clock: Clock
) -> None:
    root = await fire(stack, clock)
    await click(stack, render_alerts.SILENCE_1H_ACTION, root, OPERATOR)
    clock.advance(3600)
    await check(stack.service)

    replies = thread_texts(stack, root)
    assert len(replies) == 2
    assert "for 1h" in replies[0]
    assert "expired" in replies[1]
    assert "firing again" in replies[1]
    assert len(roots(stack)) == 1


async def test_run_health_check_posts_the_report_in_the_alert_thread(
    stack: Stack, clock: Clock
) -> None:
    root = await fire(stack, clock)
    await click(stack, render_alerts.HEALTH_ACTION, root, VIEWER)
    [report] = thread_texts(stack, root)
    assert report.startswith("KAI health on sim: Degraded")


async def test_an_unreachable_cluster_is_one_alert_after_three_failures_resolved_on_recovery(
    tmp_path: Path, clock: Clock
) -> None:
    fast = overrides(tmp_path, kubernetes={"request_timeout": "2s", "retries": 0})
    async with running_stack(tmp_path, clock=clock, config_overrides=fast) as stack:
        stack.sim.faults.refuse_all = True
        for _ in range(4):
            await check(stack.service)
            clock.advance(30)
        [root] = roots(stack)
        assert root.text.startswith("[CRITICAL] sim: Cluster sim Reachable: Cannot check")

        stack.sim.faults.refuse_all = False
        await check(stack.service)
        assert thread_texts(stack, root) == []  # checks must work for `hold` first
        clock.advance(HOLD)
        await check(stack.service)

        [resolved] = thread_texts(stack, root)
        assert resolved.startswith(":white_check_mark: Resolved")
        checks = stack.service.deps.metrics.registry
        name = "kai_chatops_alert_checks_total"
        assert checks.get_sample_value(name, {"cluster": "sim", "outcome": "failed"}) == 4
        assert checks.get_sample_value(name, {"cluster": "sim", "outcome": "ok"}) == 2


async def test_two_replicas_post_one_root_and_the_survivor_resolves_in_its_thread(
    tmp_path: Path, clock: Clock
) -> None:
    lease = {"enabled": True, "duration": "15s"}
    async with running_stack(
        tmp_path,
        clock=clock,
        monotonic=clock.monotonic,
        config_overrides=overrides(tmp_path, lease=lease),
    ) as stack:
        first = stack.service
        await jobs_alerts.keep_lease(first.deps)
        second = stack.make_service()
        await second.start()
        try:
            await jobs_alerts.keep_lease(second.deps)
            assert jobs_alerts.is_leader(first.deps) and not jobs_alerts.is_leader(second.deps)

            breakage.dependencies_missing(stack.sim)
            for _ in range(2):
                await renew(first, second)
                await check(first)
                await check(second)
                clock.advance(HOLD)
            [root] = roots(stack)

            await first.schedule.stop()  # the holder dies: no more renewals, no release
            breakage.heal(stack.sim)
            clock.advance(1)
            await renew(second)  # sees the holder's last record
            clock.advance(15)
            await renew(second)
            assert jobs_alerts.is_leader(second.deps)
            for _ in range(2):
                await renew(second)
                await check(second)
                clock.advance(HOLD)

            assert [r.ts for r in roots(stack)] == [root.ts]
            assert thread_texts(stack, root)[-1].startswith(":white_check_mark: Resolved")
            assert stack.slack.message(ALERT_CHANNEL, root.ts).text.startswith("[RESOLVED")
        finally:
            await second.stop()


async def click(stack: Stack, action_id: str, root: PostedMessage, user: str) -> dict[str, Any]:
    delivery = await stack.driver.click_button(
        action_id, user_id=user, channel_id=ALERT_CHANNEL, message_ts=root.ts
    )
    reply = await stack.slack.wait_for_response(delivery.hook_id)
    body: dict[str, Any] = reply.body
    return body
