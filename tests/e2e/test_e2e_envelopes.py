"""What Slack could send that the bot does not expect (issue 36, not yet probed): Socket Mode
frames that are not JSON, envelopes with a `payload` of the wrong shape, huge or nested past
any parser's depth, of a type the bot does not know, and forged clicks; signed interactive
payloads over HTTP nested or huge. Each changes nothing, and the service goes on answering."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from raw_slack import origin, send, signed
from stack_steps import patches

from bot.slack import blocks as render
from testbed.slackemu import SlackEmulator
from testbed.slackemu.payloads import block_actions_payload, message_container
from testbed.stack import DEMO_CHANNEL, Stack, running_stack

DEEP = 100_000  # far past Python's recursion limit (1000) and any JSON parser's default depth


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def envelope(kind: str, payload: str) -> str:
    """An envelope as a frame, its `payload` spliced in as written."""
    head = f'{{"envelope_id": "e-{kind}", "type": "{kind}", "accepts_response_payload": false, '
    return head + f'"payload": {payload}}}'


FRAMES = {
    "not json": "{this is not json",
    "not an object": "[1, 2, 3]",
    "no type": '{"envelope_id": "e1"}',
    "payload a string": envelope("interactive", '"payload"'),
    "payload a list": envelope("slash_commands", "[1, 2]"),
    "payload null": envelope("events_api", "null"),
    "payload nested past any depth": envelope("interactive", nested(DEEP)),
    "payload of 3 MB": envelope("slash_commands", json.dumps({"text": "x" * 3_000_000})),
    "an unknown envelope type": envelope("telepathy", '{"thought": "pause everything"}'),
    "a slash command with no command": envelope("slash_commands", '{"text": "pause a/b"}'),
}


@pytest.fixture
async def socket_stack(tmp_path: Path) -> AsyncIterator[Stack]:
    async with running_stack(tmp_path, socket_mode=True) as running:
        yield running


@pytest.mark.parametrize("frame", list(FRAMES.values()), ids=list(FRAMES))
async def test_a_socket_mode_frame_the_bot_cannot_use_changes_nothing_and_it_goes_on(
    socket_stack: Stack, frame: str
) -> None:
    stack = socket_stack
    await stack.command("health")  # Bolt's first request looks the bot up (auth.test)
    stack.sim.clear_requests()

    await stack.slack.socket.send_frame(frame)
    after = await stack.command("health")  # answered in full: the frame before is behind us

    assert after.text.startswith("KAI health"), after.text
    assert stack.slack.socket.is_connected
    assert patches(stack) == []
    said = [m.text for m in stack.slack.messages(DEMO_CHANNEL)]
    assert [text for text in said if not text.startswith("KAI health")] == []


async def test_a_forged_confirm_in_socket_mode_is_refused_and_changes_nothing(
    socket_stack: Stack,
) -> None:
    stack = socket_stack
    ask = await stack.command("pause annia/annia-worker drain")
    assert ask.message is not None
    forged = json.loads(json.dumps(ask.message))
    for block in forged["blocks"]:
        for element in block.get("elements") or []:
            if element.get("action_id") == render.CONFIRM_ACTION:
                element["value"] = element["value"].replace("a", "b", 1)  # edited in flight
    stack.sim.clear_requests()

    refused = await stack.click("Confirm", forged)

    assert "This confirmation is not valid; nothing was changed." in refused.text
    assert patches(stack) == []


def click_payload(stack: Stack, actions: str) -> str:
    """A block_actions payload (a click on Confirm) whose `actions` are spliced in as written."""
    action = {"action_id": render.CONFIRM_ACTION, "block_id": "b", "type": "button", "value": "x"}
    body = block_actions_payload(
        origin(stack),
        action=action,
        container=message_container(DEMO_CHANNEL, "1.000001", is_ephemeral=True),
        message=None,
        response_url=stack.slack.new_response_url(channel_id=DEMO_CHANNEL),
    )
    return json.dumps(body).replace(json.dumps([action]), actions)


PAYLOADS = {
    "nested past any depth": (lambda stack: nested(DEEP), 400),
    "actions nested past any depth": (lambda stack: click_payload(stack, nested(DEEP)), 400),
    "not json": (lambda stack: "{not json", 400),
    "a string": (lambda stack: '"block_actions"', 400),
    "of 2 MB": (lambda stack: click_payload(stack, json.dumps(["x" * 2_000_000])), 413),
}


@pytest.mark.parametrize(("make", "answered"), list(PAYLOADS.values()), ids=list(PAYLOADS))
async def test_a_signed_interactive_payload_nested_or_huge_changes_nothing_and_it_goes_on(
    tmp_path: Path, make: object, answered: int
) -> None:
    async with running_stack(tmp_path) as stack:
        await stack.command("health")
        stack.sim.clear_requests()
        url = stack.slack.new_response_url(channel_id=DEMO_CHANNEL)
        body = urlencode({"payload": make(stack)})  # type: ignore[operator]

        status, _ = await send(stack, signed(stack, body, url))
        after = await stack.command("health")

        assert status == answered  # before issue 36: 500, a traceback in the log
        assert after.text.startswith("KAI health"), after.text
        assert patches(stack) == []
        assert stack.slack.responses(SlackEmulator.hook_id_of(url)) == []
