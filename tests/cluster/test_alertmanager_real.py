"""The bot behind the real Alertmanager (v0.35.0, built from its Go module by cluster_build.py):
alerts posted to Alertmanager's API reach one thread per notification group through its webhook
(version 4, the bearer token of `http_config.authorization`), and Silence in Slack makes a
silence Alertmanager holds (equality matchers from the group's common labels, `createdBy` the
Slack user), which unsilence expires. One Alertmanager for the module; each test's service is
routed to by a reload of its configuration."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alertmanager import Alertmanager
from waiting import wait_until

from bot.alerts import render as render_alerts
from testbed.slackemu import PostedMessage
from testbed.stack import ALERT_CHANNEL, ALERTMANAGER_TOKEN, OPERATOR, Stack, running_stack

WAIT = 30.0  # seconds: bounds a failure (a notification comes within a second)


@pytest.fixture(scope="module")
def alertmanager(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Alertmanager]:
    manager = Alertmanager(tmp_path_factory.mktemp("alertmanager"))
    try:
        yield manager
    finally:
        manager.stop()


@pytest.fixture
async def stack(tmp_path: Path, alertmanager: Alertmanager) -> AsyncIterator[Stack]:
    overrides = {"alertmanager": {"url": alertmanager.url}}
    async with running_stack(tmp_path, config_overrides=overrides) as s:
        webhook = f"http://127.0.0.1:{s.service.port}/alertmanager"
        alertmanager.route_to(webhook, ALERTMANAGER_TOKEN)
        yield s


def prometheus_alert(name: str, *, resolved: bool = False, **labels: str) -> dict[str, Any]:
    """An alert as Prometheus posts it to `/api/v2/alerts` (`endsAt` in the past: resolved)."""
    now = datetime.now(UTC)
    sent: dict[str, Any] = {
        "labels": {"alertname": name, **labels},
        "annotations": {"summary": f"{name} on {labels.get('pod', 'the cluster')}"},
        "startsAt": (now - timedelta(minutes=5)).isoformat(),
    }
    if resolved:
        sent["endsAt"] = (now - timedelta(seconds=1)).isoformat()
    return sent


def replies(stack: Stack, root: PostedMessage) -> list[str]:
    return [m.text for m in stack.slack.thread(ALERT_CHANNEL, root.ts)]


async def one_root(stack: Stack) -> PostedMessage:
    roots = await stack.slack.wait_for(
        lambda: stack.slack.root_messages(ALERT_CHANNEL), timeout=WAIT
    )
    [root] = roots
    return root


async def test_a_group_fires_joins_and_resolves_in_one_thread(
    stack: Stack, alertmanager: Alertmanager
) -> None:
    labels = {"severity": "critical", "namespace": "gpu-jobs"}
    alertmanager.post_alerts(prometheus_alert("QueueStuck", pod="a", **labels))
    root = await one_root(stack)
    assert root.text.startswith("[CRITICAL] Alertmanager: group alertname=QueueStuck")

    alertmanager.post_alerts(prometheus_alert("QueueStuck", pod="b", **labels))
    await wait_until(lambda: replies(stack, root), WAIT, "a reply for the alert that joined")
    assert "Now firing too" in replies(stack, root)[0] and "pod=b" in replies(stack, root)[0]

    alertmanager.post_alerts(prometheus_alert("QueueStuck", pod="a", resolved=True, **labels))
    await wait_until(lambda: len(replies(stack, root)) >= 2, WAIT, "a reply for the resolved")
    assert replies(stack, root)[1].startswith(":white_check_mark: Resolved at")
    assert "pod=a" in replies(stack, root)[1]

    alertmanager.post_alerts(prometheus_alert("QueueStuck", pod="b", resolved=True, **labels))

    def resolved() -> bool:
        return stack.slack.message(ALERT_CHANNEL, root.ts).text.startswith("[RESOLVED")

    await wait_until(resolved, WAIT, "the root edited resolved")
    assert len(replies(stack, root)) == 3
    assert len(stack.slack.root_messages(ALERT_CHANNEL)) == 1


async def test_silence_makes_an_alertmanager_silence_and_unsilence_expires_it(
    stack: Stack, alertmanager: Alertmanager
) -> None:
    alertmanager.post_alerts(prometheus_alert("NodeGpuLost", node="gpu-7", severity="warning"))
    root = await one_root(stack)
    delivery = await stack.driver.click_button(
        render_alerts.SILENCE_1H_ACTION,
        user_id=OPERATOR,
        channel_id=ALERT_CHANNEL,
        message_ts=root.ts,
    )
    answer = await stack.slack.wait_for_response(delivery.hook_id, timeout=WAIT)
    assert answer.body["text"].startswith("Silenced alert ")

    [silence] = [s for s in alertmanager.silences() if s["status"]["state"] == "active"]
    assert silence["createdBy"] == OPERATOR
    assert {(m["name"], m["value"], m["isRegex"], m["isEqual"]) for m in silence["matchers"]} == {
        ("alertname", "NodeGpuLost", False, True),
        ("node", "gpu-7", False, True),
        ("severity", "warning", False, True),
    }
    ends = datetime.fromisoformat(silence["endsAt"])
    assert timedelta(minutes=59) < ends - datetime.now(UTC) <= timedelta(hours=1)
    alert_id = str(root.blocks[-1]["elements"][0]["value"]).split(":")[1]
    assert alert_id in silence["comment"]

    lifted = await stack.command(f"unsilence {alert_id}")
    assert lifted.text.startswith(f"Lifted the silence on alert {alert_id}")
    [after] = [s for s in alertmanager.silences() if s["id"] == silence["id"]]
    assert after["status"]["state"] == "expired"
