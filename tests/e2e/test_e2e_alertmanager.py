"""Alertmanager's webhook end to end, posted straight to the service as Alertmanager posts it
(the real Alertmanager's own tests: tests/cluster/test_alertmanager_real.py): one incident per
notification group, its thread told what joins and resolves, exactly once across retries,
restarts and two replicas; bad input refused and nothing posted; Silence with Alertmanager down
said on the button's reply."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from alert_stack import Gate, alert_stack, overrides, renew, take_over, two_replicas
from alertmanager_posts import alert, payload, post
from clocks import Clock
from waiting import wait_until

from bot.alerts import render as render_alerts
from bot.alerts.model import ALERTMANAGER
from bot.service import jobs_alerts
from bot.service.server import Service
from testbed.slackemu import PostedMessage
from testbed.stack import ALERT_CHANNEL, OPERATOR, Stack, running_stack

# Nothing listens on port 9 of loopback: an Alertmanager that is down.
DOWN = {"alertmanager": {"url": "http://127.0.0.1:9"}}
ANSWERED_WITHIN = 10.0  # seconds: a deadline for the answer of a saved webhook, not a wait
SHARED = {"state": {"backend": "configmap"}, "lease": {"duration": "15s"}}


@pytest.fixture
async def stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    async with alert_stack(tmp_path, clock, **DOWN) as (s, _):
        yield s


def roots(stack: Stack) -> list[PostedMessage]:
    return stack.slack.root_messages(ALERT_CHANNEL)


def replies(stack: Stack, root: PostedMessage) -> list[str]:
    return [m.text for m in stack.slack.thread(ALERT_CHANNEL, root.ts)]


async def groups_seen_by(service: Service) -> bool:
    """Whether `service`'s copy of the shared state (followed by watch) holds an open group."""
    return bool((await service.deps.alert_store.load(ALERTMANAGER)).state.alerts)


def shown(message: PostedMessage) -> str:
    sections = [b["text"]["text"] for b in message.blocks if "text" in b]
    return "\n".join([message.text, *sections])


async def test_a_group_is_one_root_its_thread_told_what_joins_and_resolves_each_once(
    stack: Stack,
) -> None:
    first = alert(pod="kai-scheduler-default-0", summary="the scheduler is <down> & out")
    status, _ = await post(stack.service, payload(first))
    assert status == 200
    [root] = roots(stack)
    assert root.text.startswith("[CRITICAL] Alertmanager: group alertname=KaiSchedulerDown")
    assert "the scheduler is &lt;down&gt; &amp; out" in shown(root)  # escaped
    assert [b["text"]["text"] for b in root.blocks[-1]["elements"]] == [
        "Acknowledge",
        "Silence 1h",
        "Silence 4h",
    ]

    alert_id = str(root.blocks[-1]["elements"][0]["value"]).split(":")[1]
    listing = await stack.command("alerts")
    assert f"`{alert_id}` Alertmanager · group alertname=KaiSchedulerDown" in listing.text
    acked = await stack.command(f"ack {alert_id}")
    assert acked.text.startswith(f"Acknowledged alert {alert_id} (Alertmanager: ")

    second = alert(pod="kai-scheduler-default-1")
    await post(stack.service, payload(first))  # Alertmanager's retry: nothing new
    for _ in range(2):
        await post(stack.service, payload(first, second))
    assert len(roots(stack)) == 1
    [acknowledged, joined] = replies(stack, root)
    assert acknowledged.startswith(f":eyes: Acknowledged by <@{OPERATOR}>")
    assert "Now firing too" in joined and "kai-scheduler-default-1" in joined
    assert "kai-scheduler-default-1" in shown(stack.slack.message(ALERT_CHANNEL, root.ts))

    gone = {**first, "status": "resolved"}
    await post(stack.service, payload(gone, second))
    await post(stack.service, payload(gone, second))
    left = replies(stack, root)[2]
    assert "Resolved" in left and "kai-scheduler-default-0" in left

    done = {**second, "status": "resolved"}
    for _ in range(2):
        await post(stack.service, payload(done))
    texts = replies(stack, root)
    assert len(texts) == 4 and texts[3].startswith(":white_check_mark: Resolved at")
    edited = stack.slack.message(ALERT_CHANNEL, root.ts)
    assert edited.text.startswith("[RESOLVED (critical)] Alertmanager")
    assert not any(b["type"] == "actions" for b in edited.blocks)
    assert len(roots(stack)) == 1


async def test_a_late_firing_copy_after_the_resolution_opens_nothing_a_new_firing_does(
    stack: Stack,
) -> None:
    firing = alert(pod="p")
    await post(stack.service, payload(firing))
    await post(stack.service, payload({**firing, "status": "resolved"}))
    await post(stack.service, payload(firing))  # the other Alertmanager's copy, late
    assert len(roots(stack)) == 1
    again = alert(pod="p", starts="2026-12-06T12:00:00Z")
    await post(stack.service, payload(again))
    assert len(roots(stack)) == 2


@pytest.mark.parametrize(
    ("body", "token", "status"),
    [
        (payload(alert()), "wrong-token", 401),
        (payload(alert()), None, 401),
        ({**payload(alert()), "version": "3"}, "ok", 400),
        (b'{"version": "4", "alerts": [', "ok", 400),
        (payload({k: v for k, v in alert().items() if k != "fingerprint"}), "ok", 400),
        (b"x" * (2 * 1024 * 1024), "ok", 413),
    ],
    ids=["wrong-token", "no-token", "version-3", "not-json", "alert-without-fingerprint", "huge"],
)
async def test_bad_input_is_refused_and_posts_nothing(
    stack: Stack, body: dict[str, Any] | bytes, token: str | None, status: int
) -> None:
    kwargs = {} if token == "ok" else {"token": token}
    got, text = await post(stack.service, body, **kwargs)  # type: ignore[arg-type]
    assert got == status
    if status == 401:
        assert text == "unauthorized\n"
    assert roots(stack) == []
    assert (await stack.service.deps.alert_store.load(ALERTMANAGER)).state.alerts == {}


async def test_silence_with_alertmanager_down_is_said_on_the_button_and_nothing_is_silenced(
    stack: Stack,
) -> None:
    await post(stack.service, payload(alert(pod="p")))
    [root] = roots(stack)
    delivery = await stack.driver.click_button(
        render_alerts.SILENCE_1H_ACTION,
        user_id=OPERATOR,
        channel_id=ALERT_CHANNEL,
        message_ts=root.ts,
    )
    answer = await stack.slack.wait_for_response(delivery.hook_id)
    said = answer.body["text"]
    assert "Alertmanager at http://127.0.0.1:9 did not answer" in said
    assert "nothing was silenced" in said
    assert replies(stack, root) == []
    assert "silenced" not in shown(stack.slack.message(ALERT_CHANNEL, root.ts))


async def test_an_alert_naming_kai_gets_the_diagnosis_then_what_changed_before_it(
    stack: Stack,
) -> None:
    await post(stack.service, payload(alert(namespace="kai-scheduler", pod="binder-0")))
    [root] = roots(stack)
    [first, second] = replies(stack, root)
    assert first.startswith(("Diagnosis of ", "Could not diagnose ")), first
    assert second.startswith("What changed on sim in the hour before"), second


async def test_a_restart_continues_the_same_thread(stack: Stack) -> None:
    firing = alert(pod="p")
    await post(stack.service, payload(firing))
    await stack.restart_service()
    await post(stack.service, payload(firing))  # Alertmanager's retry after the restart
    await post(stack.service, payload({**firing, "status": "resolved"}))
    [root] = roots(stack)
    [resolved] = replies(stack, root)
    assert resolved.startswith(":white_check_mark: Resolved at")


async def test_two_replicas_post_each_group_once_whichever_takes_the_webhook(
    tmp_path: Path, clock: Clock
) -> None:
    async with (
        alert_stack(tmp_path, clock, **DOWN, **SHARED) as (stack, _),
        two_replicas(stack) as (holder, other),
    ):
        firing = alert(pod="p")
        await post(other, payload(firing))  # saved by the replica that does not post
        assert roots(stack) == []
        await wait_until(lambda: groups_seen_by(holder), 10, "the holder's copy of the state")
        await jobs_alerts.look_at_alertmanager(holder.deps)  # the holder's periodic look
        [root] = roots(stack)
        await post(holder, payload(firing))  # the HA pair's other Alertmanager
        assert len(roots(stack)) == 1

        await take_over(stack, clock, other)
        await renew(holder)
        await post(holder, payload({**firing, "status": "resolved"}))  # no longer the holder
        assert replies(stack, root) == []

        async def resolved_seen() -> bool:
            return not await groups_seen_by(other)

        await wait_until(resolved_seen, 10, "the new holder's copy of the state")
        await jobs_alerts.look_at_alertmanager(other.deps)
        [resolved] = replies(stack, root)
        assert resolved.startswith(":white_check_mark: Resolved at")
        assert len(roots(stack)) == 1


async def test_the_webhook_is_served_in_socket_mode_too(tmp_path: Path, clock: Clock) -> None:
    configured = overrides(tmp_path, **DOWN)
    async with running_stack(
        tmp_path, clock=clock, socket_mode=True, config_overrides=configured
    ) as stack:
        assert (await post(stack.service, payload(alert()), token="wrong"))[0] == 401
        assert (await post(stack.service, payload(alert())))[0] == 200
        assert len(roots(stack)) == 1


async def test_the_webhook_is_answered_once_saved_while_slack_still_holds_the_root(
    tmp_path: Path, clock: Clock
) -> None:
    configured = overrides(tmp_path, **DOWN)
    # Slack's own timeout (30 s): a webhook that waited for the post would wait that long.
    async with running_stack(tmp_path, clock=clock, config_overrides=configured) as stack:
        gate = Gate()
        stack.slack.fail_next("chat.postMessage", status=200, mode="delay_before", gate=gate)
        firing = payload(alert(pod="p"))
        answered = post(stack.service, firing, delivered=False)
        assert (await asyncio.wait_for(answered, ANSWERED_WITHIN))[0] == 200
        await gate.arrived.wait()  # the root is on the wire, Slack has not done it yet
        assert roots(stack) == []
        gate.set()
        await stack.service.deps.alerts.deliveries_done()
        await post(stack.service, firing)  # Alertmanager's retry
        assert len(roots(stack)) == 1
