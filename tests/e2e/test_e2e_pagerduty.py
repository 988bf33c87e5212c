"""PagerDuty end to end (issue 38 item 2): the service, the Slack emulator, the simulator and
the PagerDuty stand-in (`testbed/pagerduty.py`, PagerDuty's published Events API v2), with
faults injected at the stand-in and restarts of the service between the steps of an incident.

What PagerDuty holds is read at the stand-in: the events it ingested, in order, and its alerts
(each alert's statuses and log), so "once and in order" is what PagerDuty itself would show.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from itertools import groupby
from pathlib import Path
from typing import Any

import pytest
from alert_stack import (
    HOLD,
    SHARED_15S,
    SLACK_TIMEOUT,
    check,
    fire,
    overrides,
    renew,
    resolve,
    roots,
    take_over,
    two_replicas,
)
from alertmanager_posts import alert, payload, post
from clocks import Clock
from waiting import wait_until

from bot import cli
from bot.alerts import pages
from bot.alerts import render as render_alerts
from bot.alerts.model import ALERTMANAGER
from bot.integrations.pagerduty.events import PagerDutyEnv
from testbed.pagerduty import PagerDutyStandIn, running_standin
from testbed.sim import breakage
from testbed.slackemu import PostedMessage
from testbed.slackemu.records import Fault
from testbed.stack import ALERT_CHANNEL, CLUSTER, OPERATOR, Stack, running_stack

KEY = "R0123456789abcdef0123456789abcde"  # 32 characters, as an integration key is
WORKSPACE = "https://emulator.slack.local/"  # the emulator's `auth.test` url
LIFECYCLE = ["trigger", "acknowledge", "resolve"]
WAIT = 15.0
pytestmark = pytest.mark.clock_from_now


def slack_writes_down(method: str) -> Fault | None:
    return Fault(503, 0, "service_unavailable") if method.startswith("chat.") else None


@pytest.fixture
async def pagerduty() -> AsyncIterator[PagerDutyStandIn]:
    async with running_standin() as standin:
        yield standin


@asynccontextmanager
async def paging_stack(
    tmp_path: Path, clock: Clock, standin: PagerDutyStandIn, **extra: Any
) -> AsyncIterator[Stack]:
    """The stack with `pagerduty.severities: [critical]` (and `extra` config), paging `standin`."""
    async with running_stack(
        tmp_path,
        clock=clock,
        monotonic=clock.monotonic,
        config_overrides=overrides(tmp_path, pagerduty={"severities": ["critical"]}, **extra),
        slack_timeout=SLACK_TIMEOUT,
        slack_backoffs=(0.0, 0.0, 0.0),
        pagerduty=PagerDutyEnv(KEY, standin.url),
    ) as running:
        yield running


@pytest.fixture
async def stack(tmp_path: Path, clock: Clock, pagerduty: PagerDutyStandIn) -> AsyncIterator[Stack]:
    async with paging_stack(tmp_path, clock, pagerduty) as running:
        yield running


async def incident_of(stack: Stack) -> str:
    """The ID of the one incident firing now: the `dedup_key` it must page with."""
    (state,) = await stack.service.deps.alerts.list_alerts(CLUSTER)
    (alert,) = state.alerts.values()
    return alert.incident


def ingested(standin: PagerDutyStandIn) -> list[str]:
    return [r.action for r in standin.ingested()]


async def until_ingested(standin: PagerDutyStandIn, count: int, what: str) -> None:
    await wait_until(lambda: len(standin.ingested()) >= count, WAIT, what)


async def acknowledge(stack: Stack, root: PostedMessage) -> dict[str, Any]:
    """Click the root's Acknowledge as an operator; the reply the click gets."""
    delivery = await stack.driver.click_button(
        render_alerts.ACK_ACTION, user_id=OPERATOR, channel_id=ALERT_CHANNEL, message_ts=root.ts
    )
    reply = await stack.slack.wait_for_response(delivery.hook_id)
    body: dict[str, Any] = reply.body
    return body


def assert_paged_once_in_order(standin: PagerDutyStandIn, incident: str) -> None:
    """One PagerDuty alert for the incident, triggered, acknowledged and resolved once each,
    and nothing ingested out of order (a retry after an answer that never came is the same
    event again, which PagerDuty applies to the same alert: adjacent, never reordered)."""
    (alert,) = standin.alerts_of(incident)
    assert alert.statuses == ["triggered", "acknowledged", "resolved"]
    assert [action for action, _ in groupby(ingested(standin))] == LIFECYCLE
    assert {r.event["dedup_key"] for r in standin.ingested() if r.event} == {incident}


async def test_a_critical_incident_is_triggered_acknowledged_and_resolved_in_pagerduty_once(
    stack: Stack, clock: Clock, pagerduty: PagerDutyStandIn
) -> None:
    await fire(stack, clock)
    incident = await incident_of(stack)
    await until_ingested(pagerduty, 1, "the trigger")
    [root] = roots(stack)

    trigger = pagerduty.ingested()[0].event
    assert trigger is not None and trigger["dedup_key"] == incident
    payload = trigger["payload"]
    assert (payload["severity"], payload["source"]) == ("critical", CLUSTER)
    assert trigger["payload"]["summary"] in root.text
    thread = f"{WORKSPACE}archives/{ALERT_CHANNEL}/p{root.ts.replace('.', '')}"
    assert trigger["links"] == [{"href": thread, "text": "Slack thread"}]

    done = await acknowledge(stack, root)
    assert done["text"].startswith("Acknowledged alert")
    await until_ingested(pagerduty, 2, "the acknowledge")
    assert pagerduty.alerts_of(incident)[0].status == "acknowledged"

    await resolve(stack, clock)
    await until_ingested(pagerduty, 3, "the resolve")

    assert ingested(pagerduty) == LIFECYCLE
    assert_paged_once_in_order(pagerduty, incident)


async def test_a_severity_not_configured_pages_nothing(
    stack: Stack, clock: Clock, pagerduty: PagerDutyStandIn
) -> None:
    await fire(stack, clock, breaking=breakage.operator_down)  # a warning
    [warning] = roots(stack)
    assert warning.text.startswith("[WARNING]")

    # A critical one after it: had the warning paged, its trigger would have come first.
    await fire(stack, clock)
    await until_ingested(pagerduty, 1, "the critical incident's trigger")

    assert ingested(pagerduty) == ["trigger"]
    (event,) = (r.event for r in pagerduty.ingested())
    assert event is not None and event["payload"]["severity"] == "critical"
    assert len(roots(stack)) == 2


async def test_429_500_and_answers_dropped_after_the_event_was_taken_lose_and_double_nothing(
    stack: Stack, clock: Clock, pagerduty: PagerDutyStandIn
) -> None:
    pagerduty.fail_next(429, times=2)
    pagerduty.drop_next_after_applying()
    await fire(stack, clock)
    incident = await incident_of(stack)
    await until_ingested(pagerduty, 2, "the trigger, sent again after its lost answer")
    [root] = roots(stack)

    pagerduty.fail_next(500)
    await acknowledge(stack, root)
    await until_ingested(pagerduty, 3, "the acknowledge after a 500")

    pagerduty.drop_next_after_applying()
    await resolve(stack, clock)
    await until_ingested(pagerduty, 5, "the resolve, sent again after its lost answer")

    answered = [r.status for r in pagerduty.received]
    assert answered == [429, 429, 0, 202, 500, 202, 0, 202]
    assert ingested(pagerduty) == ["trigger", "trigger", "acknowledge", "resolve", "resolve"]
    assert_paged_once_in_order(pagerduty, incident)


async def test_an_outage_and_restarts_between_the_steps_lose_nothing_and_hold_no_slack_reply(
    stack: Stack, clock: Clock, pagerduty: PagerDutyStandIn
) -> None:
    pagerduty.outage = 503
    await fire(stack, clock)
    incident = await incident_of(stack)
    [root] = roots(stack)  # PagerDuty down holds no Slack message back
    await wait_until(lambda: pagerduty.received, WAIT, "a try at the trigger")

    await stack.restart_service()
    await check(stack.service)  # the new process tries while PagerDuty is still down
    pagerduty.outage = 0
    await check(stack.service)  # a check at rest: what is owed still goes out
    await until_ingested(pagerduty, 1, "the trigger, after the restart")

    pagerduty.outage = 503
    done = await acknowledge(stack, root)
    assert done["text"].startswith("Acknowledged alert")
    await stack.restart_service()
    pagerduty.outage = 0
    await check(stack.service)
    await until_ingested(pagerduty, 2, "the acknowledge, after the second restart")

    await resolve(stack, clock)
    await until_ingested(pagerduty, 3, "the resolve")

    assert ingested(pagerduty) == LIFECYCLE
    assert 503 in [r.status for r in pagerduty.received]
    assert_paged_once_in_order(pagerduty, incident)


async def test_slack_down_holds_the_page_back_only_until_root_wait_then_it_links_the_channel(
    stack: Stack, clock: Clock, pagerduty: PagerDutyStandIn
) -> None:
    stack.slack.fault_rule = slack_writes_down
    await fire(stack, clock)
    assert roots(stack) == [] and pagerduty.received == []  # waits for the thread's link

    clock.advance(pages.ROOT_WAIT.total_seconds())
    tries = len(stack.slack.calls_to("chat.postMessage"))
    seen: list[int] = []  # Slack's tries when PagerDuty took the trigger
    pagerduty.observer = lambda _: seen.append(len(stack.slack.calls_to("chat.postMessage")))
    checking = asyncio.create_task(check(stack.service))  # Slack's retries take a while
    await until_ingested(pagerduty, 1, "the trigger without its thread")
    assert seen[0] == tries  # paged before this drain's first try at Slack, not after all
    checking.cancel()  # the rest is Slack's retries, which other tests cover

    (trigger,) = (r.event for r in pagerduty.ingested())
    assert trigger is not None
    assert trigger["links"] == [
        {"href": f"{WORKSPACE}archives/{ALERT_CHANNEL}", "text": "Slack thread"}
    ]


async def test_serve_refuses_pagerduty_without_its_integration_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "clusters: [{name: prod, kubeconfig: /nowhere, context: prod}]\n"
        "slack: {alert_channel: C0ALERTS}\n"
        "pagerduty: {severities: [critical]}\n"
    )
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "secret")
    monkeypatch.delenv("PAGERDUTY_ROUTING_KEY", raising=False)

    status = await asyncio.to_thread(cli.main, ["serve", "--config", str(config), "--port", "0"])

    assert status == 2
    assert "PAGERDUTY_ROUTING_KEY: missing; pagerduty is configured" in capsys.readouterr().err


async def test_an_event_pagerduty_refuses_as_invalid_is_given_up_loudly_and_the_next_goes_on(
    stack: Stack, clock: Clock, pagerduty: PagerDutyStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    pagerduty.fail_next(400)
    await fire(stack, clock)
    await wait_until(lambda: pagerduty.received, WAIT, "the trigger's one try")
    [root] = roots(stack)

    await acknowledge(stack, root)
    await until_ingested(pagerduty, 1, "the acknowledge after the refused trigger")

    assert [(r.action, r.status) for r in pagerduty.received] == [
        ("trigger", 400),
        ("acknowledge", 202),
    ]
    assert "PagerDuty refuses trigger for good: HTTP 400" in caplog.text
    metrics = stack.service.deps.metrics.render().decode()
    assert 'kai_chatops_pagerduty_events_total{action="trigger",outcome="refused"} 1.0' in metrics


async def test_an_alertmanager_group_of_a_listed_severity_is_paged_and_resolved_too(
    tmp_path: Path, clock: Clock, pagerduty: PagerDutyStandIn
) -> None:
    down = {"url": "http://127.0.0.1:9"}  # its silences are not asked here
    async with paging_stack(tmp_path, clock, pagerduty, alertmanager=down) as stack:
        await post(stack.service, payload(alert(pod="kai-scheduler-default-0")))
        await until_ingested(pagerduty, 1, "the group's trigger")
        await post(stack.service, payload(alert(pod="kai-scheduler-default-0", status="resolved")))
        await until_ingested(pagerduty, 2, "the group's resolve")

    assert ingested(pagerduty) == ["trigger", "resolve"]
    (trigger,) = [r.event for r in pagerduty.ingested() if r.action == "trigger"]
    assert trigger is not None and trigger["dedup_key"].startswith(f"{ALERTMANAGER}/")
    (paged,) = pagerduty.alerts
    assert paged.statuses == ["triggered", "resolved"]


async def test_a_new_lease_holder_sends_what_the_deposed_one_could_not_and_only_the_holder_sends(
    tmp_path: Path, clock: Clock, pagerduty: PagerDutyStandIn
) -> None:
    async with (
        paging_stack(tmp_path, clock, pagerduty, **SHARED_15S) as stack,
        two_replicas(stack) as (first, second),
    ):
        pagerduty.outage = 503
        breakage.dependencies_missing(stack.sim)
        await check(first)
        clock.advance(HOLD)
        await renew(first, second)
        await check(first)
        incident = await incident_of(stack)
        await wait_until(lambda: pagerduty.received, WAIT, "the first holder's try")
        await check(second)  # not the holder: it sends nothing
        tried = len(pagerduty.received)

        await take_over(stack, clock, second)
        pagerduty.outage = 0
        await check(first)  # deposed: still nothing
        assert len(pagerduty.received) == tried
        await check(second)
        await until_ingested(pagerduty, 1, "the trigger, from the new holder")

        acked = await stack.command(f"ack {incident.split('/')[1]}")  # answered by the deposed one
        assert acked.text.startswith("Acknowledged alert")
        await first.deps.alerts.deliveries_done()
        assert ingested(pagerduty) == ["trigger"]  # the deposed replica sent nothing
        await check(second)
        await until_ingested(pagerduty, 2, "the acknowledge, from the holder")

        breakage.heal(stack.sim)
        await check(second)
        clock.advance(HOLD)
        await renew(second)
        await check(second)
        await until_ingested(pagerduty, 3, "the resolve")

    assert ingested(pagerduty) == LIFECYCLE
    assert_paged_once_in_order(pagerduty, incident)
