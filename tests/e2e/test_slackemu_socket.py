"""The emulator's Socket Mode: a real Bolt AsyncSocketModeHandler connects, acks and reconnects."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from testbed.slackemu import SlackDriver, SlackEmulator

CHANNEL = "C0DEMO"


@pytest.fixture
async def slack() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator() as emulator:
        emulator.add_user("U0ALICE", "alice")
        yield emulator


def build_app(slack: SlackEmulator) -> AsyncApp:
    """A tiny Bolt app: `/kai` acks with a JSON body and responds; `ack_button` acks."""
    client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
    app = AsyncApp(client=client)

    @app.command("/kai")
    async def on_command(ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond) -> None:
        await ack(text=f"working on {command['text']}", response_type="ephemeral")
        await respond(text=f"done: {command['text']}", response_type="in_channel")

    @app.action("acknowledge")
    async def on_click(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        await ack()
        await respond(text=f"Acknowledged by <@{body['user']['id']}>", replace_original=True)

    return app


@pytest.fixture
async def connected(slack: SlackEmulator) -> AsyncIterator[SlackDriver]:
    handler = AsyncSocketModeHandler(build_app(slack), app_token=slack.app_token)
    await handler.connect_async()  # type: ignore[no-untyped-call]
    async with SlackDriver(slack) as driver:
        await driver.wait_socket_connected(timeout=5)
        yield driver
    await handler.close_async()  # type: ignore[no-untyped-call]


async def test_the_client_connects_through_apps_connections_open_and_gets_hello(
    slack: SlackEmulator, connected: SlackDriver
) -> None:
    opened = slack.calls_to("apps.connections.open")

    assert [(c.token, c.ok) for c in opened] == [(slack.app_token, True)]
    assert slack.socket.is_connected
    assert len(slack.socket.connections) == 1


async def test_a_command_round_trips_over_socket_mode(
    slack: SlackEmulator, connected: SlackDriver
) -> None:
    delivery = await connected.send_command("health", user_id="U0ALICE", channel_id=CHANNEL)
    reply = await slack.wait_for_response(delivery.hook_id, timeout=5)

    assert (delivery.mode, delivery.status, delivery.envelope_id) == (
        "socket",
        200,
        slack.socket.acks[-1].envelope_id,
    )
    assert delivery.body == {"text": "working on health", "response_type": "ephemeral"}
    assert reply.body["text"] == "done: health"
    assert [m.text for m in slack.root_messages(CHANNEL)] == ["done: health"]


async def test_a_command_nobody_handles_gets_no_ack(
    slack: SlackEmulator, connected: SlackDriver
) -> None:
    delivery = await connected.send_command(
        "health", user_id="U0ALICE", command="/other", ack_timeout=0.5
    )

    assert (delivery.status, delivery.acked, delivery.body) == (None, False, None)


async def test_a_button_click_round_trips_over_socket_mode_and_edits_the_message(
    slack: SlackEmulator, connected: SlackDriver
) -> None:
    client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
    alert = await client.chat_postMessage(
        channel=CHANNEL,
        text="KAI degraded",
        blocks=[
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "action_id": "acknowledge",
                        "text": {"type": "plain_text", "text": "Acknowledge"},
                        "value": "alert-1",
                    }
                ],
            }
        ],
    )

    delivery = await connected.click_button(
        "acknowledge", user_id="U0ALICE", channel_id=CHANNEL, message_ts=alert["ts"]
    )
    await slack.wait_for_response(delivery.hook_id)

    assert delivery.acked
    assert slack.message(CHANNEL, alert["ts"]).text == "Acknowledged by <@U0ALICE>"


async def test_after_a_disconnect_request_the_client_reconnects_and_commands_still_work(
    slack: SlackEmulator, connected: SlackDriver
) -> None:
    first = slack.socket.connections[0]

    await slack.socket.disconnect()
    await slack.wait_socket_connected(timeout=5)
    delivery = await connected.send_command("alerts", user_id="U0ALICE")

    assert not first.is_open
    assert len(slack.calls_to("apps.connections.open")) == 2
    assert delivery.acked


async def test_after_a_dropped_connection_the_client_reconnects(
    slack: SlackEmulator, connected: SlackDriver
) -> None:
    await slack.socket.drop_connections()
    await slack.wait_for(lambda: len(slack.socket.open_connections) == 1, timeout=5)

    delivery = await connected.send_command("alerts", user_id="U0ALICE")

    assert delivery.acked
    assert len(slack.socket.connections) == 2


async def test_a_socket_without_a_ticket_from_apps_connections_open_is_refused(
    slack: SlackEmulator,
) -> None:
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.WSServerHandshakeError) as raised:
            await session.ws_connect(f"{slack.url.replace('http', 'ws')}/socket?ticket=guess")

    assert raised.value.status == 401


async def test_the_wire_protocol_is_hello_then_envelopes_answered_by_acks(
    slack: SlackEmulator,
) -> None:
    client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
    opened = await client.apps_connections_open(app_token=slack.app_token)
    async with aiohttp.ClientSession() as session, session.ws_connect(opened["url"]) as ws:
        hello = await ws.receive_json(timeout=5)
        sending = asyncio.ensure_future(
            SlackDriver(slack).send_command("help", user_id="U0ALICE", mode="socket")
        )
        envelope = await ws.receive_json(timeout=5)
        await ws.send_json({"envelope_id": envelope["envelope_id"], "payload": {"text": "ok"}})
        delivery = await sending

    assert hello["type"] == "hello"
    assert hello["connection_info"] == {"app_id": "A0EMULATOR"}
    assert (envelope["type"], envelope["accepts_response_payload"]) == ("slash_commands", True)
    assert envelope["payload"]["command"] == "/kai"
    assert envelope["payload"]["response_url"] == delivery.response_url
    assert delivery.body == {"text": "ok"}
