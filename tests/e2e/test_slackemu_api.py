"""The local Slack emulator's Web API and response_urls, driven by the real slack_sdk and Bolt."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from waiting import wait_until

from testbed.slackemu import SlackDriver, SlackEmulator, metadata_by

SIGNING_SECRET = "test-signing-secret"
CHANNEL = "C0ALERTS"
CONFIRM_BLOCK = {
    "type": "actions",
    "block_id": "confirm-pause",
    "elements": [
        {
            "type": "button",
            "action_id": "confirm",
            "text": {"type": "plain_text", "text": "Confirm"},
            "value": "pause:annia/annia-worker",
        }
    ],
}


@pytest.fixture
async def slack() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator() as emulator:
        emulator.add_user("U0ALICE", "alice", is_admin=True)
        emulator.add_usergroup("S0ONCALL", "platform-oncall", ["U0ALICE", "U0BOB"])
        yield emulator


@pytest.fixture
def client(slack: SlackEmulator) -> AsyncWebClient:
    return AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)


class Bot:
    """A tiny Bolt app served over HTTP: `/kai` acks then responds; a button edits its message."""

    def __init__(self, slack: SlackEmulator) -> None:
        client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
        self.app = AsyncApp(client=client, signing_secret=SIGNING_SECRET)
        self.commands: list[str] = []
        self.clicks: list[dict[str, Any]] = []
        self.app.command("/kai")(self.on_command)
        self.app.action("confirm")(self.on_confirm)

    async def on_command(
        self, ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond
    ) -> None:
        self.commands.append(command["text"])
        await ack(text=f"working on {command['text']}")
        await respond(text=f"done: {command['text']}")

    async def on_confirm(self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        await ack()
        self.clicks.append(body)
        clicked_by = body["user"]["id"]
        await respond(text=f"Confirmed by <@{clicked_by}>", replace_original=True)


@pytest.fixture
async def bot(slack: SlackEmulator) -> AsyncIterator[tuple[Bot, SlackDriver]]:
    app = Bot(slack)
    runner = web.AppRunner(app.app.web_app(path="/slack/events"))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    url = f"http://127.0.0.1:{port}/slack/events"
    async with SlackDriver(slack, bot_url=url, signing_secret=SIGNING_SECRET) as driver:
        yield app, driver
    await runner.cleanup()


async def test_auth_test_names_the_bot_user_and_team(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    answer = await client.auth_test()

    assert (answer["user_id"], answer["team_id"]) == ("U0KAIBOT", "T0EMULATOR")
    assert slack.calls_to("auth.test")[0].token == slack.bot_token


async def test_posted_messages_get_unique_increasing_ts_and_threads_hold_replies(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    root = await client.chat_postMessage(channel=CHANNEL, text="KAI degraded")
    reply = await client.chat_postMessage(
        channel=CHANNEL, text="still firing", thread_ts=root["ts"]
    )
    other = await client.chat_postMessage(channel=CHANNEL, text="another alert")

    assert float(root["ts"]) < float(reply["ts"]) < float(other["ts"])
    assert [m.text for m in slack.root_messages(CHANNEL)] == ["KAI degraded", "another alert"]
    assert [m.text for m in slack.thread(CHANNEL, root["ts"])] == ["still firing"]
    assert reply["message"]["thread_ts"] == root["ts"]


async def test_chat_update_edits_the_message_in_place(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    root = await client.chat_postMessage(channel=CHANNEL, text="firing")

    await client.chat_update(channel=CHANNEL, ts=root["ts"], text="resolved")

    message = slack.message(CHANNEL, root["ts"])
    assert (message.text, message.edit_count) == ("resolved", 1)
    assert len(slack.messages(CHANNEL)) == 1


async def test_updating_an_unknown_message_is_message_not_found(client: AsyncWebClient) -> None:
    with pytest.raises(SlackApiError) as raised:
        await client.chat_update(channel=CHANNEL, ts="1.000001", text="x")

    assert raised.value.response["error"] == "message_not_found"


async def test_ephemeral_messages_are_kept_apart_from_the_channel(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    answer = await client.chat_postEphemeral(channel=CHANNEL, user="U0ALICE", text="only you")

    assert answer["message_ts"]
    assert [m.text for m in slack.ephemerals(user="U0ALICE")] == ["only you"]
    assert slack.messages(CHANNEL) == []


async def test_usergroup_members_are_listed_for_get_as_slack_sdk_sends_it(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    answer = await client.usergroups_users_list(usergroup="S0ONCALL")

    assert answer["users"] == ["U0ALICE", "U0BOB"]
    assert slack.calls_to("usergroups.users.list")[0].http_method == "GET"


@pytest.mark.parametrize("encoding", ["form", "json"], ids=["form-body", "json-body"])
async def test_usergroup_members_are_listed_for_post_bodies(
    slack: SlackEmulator, encoding: str
) -> None:
    headers = {"Authorization": f"Bearer {slack.bot_token}"}
    body: dict[str, Any] = {"data": {"usergroup": "S0ONCALL"}}
    if encoding == "json":
        body = {"json": {"usergroup": "S0ONCALL"}}
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{slack.api_url}usergroups.users.list", headers=headers, **body) as response,
    ):
        answer = await response.json()

    assert answer == {"ok": True, "users": ["U0ALICE", "U0BOB"]}


async def test_an_unknown_usergroup_is_no_such_subteam(client: AsyncWebClient) -> None:
    with pytest.raises(SlackApiError) as raised:
        await client.usergroups_users_list(usergroup="S0NOPE")

    assert raised.value.response["error"] == "no_such_subteam"


async def test_usergroups_list_maps_handles_to_ids(client: AsyncWebClient) -> None:
    answer = await client.usergroups_list(include_users=True)

    assert [(g["handle"], g["id"], g["users"]) for g in answer["usergroups"]] == [
        ("platform-oncall", "S0ONCALL", ["U0ALICE", "U0BOB"])
    ]


async def test_users_info_reports_the_admin_flag(client: AsyncWebClient) -> None:
    answer = await client.users_info(user="U0ALICE")

    assert (answer["user"]["name"], answer["user"]["is_admin"]) == ("alice", True)


@pytest.mark.parametrize(
    ("token", "error"),
    [
        ("xoxb-wrong", "invalid_auth"),
        (None, "not_authed"),
        ("xapp-emulator-app-token", "not_allowed_token_type"),
    ],
    ids=["wrong-token", "no-token", "app-token-for-a-bot-method"],
)
async def test_calls_without_the_right_token_are_refused(
    slack: SlackEmulator, token: str | None, error: str
) -> None:
    client = AsyncWebClient(token=token, base_url=slack.api_url)

    with pytest.raises(SlackApiError) as raised:
        await client.chat_postMessage(channel=CHANNEL, text="hi")

    assert raised.value.response["error"] == error
    assert slack.messages(CHANNEL) == []


async def test_an_unknown_method_is_unknown_method(client: AsyncWebClient) -> None:
    with pytest.raises(SlackApiError) as raised:
        await client.api_call("chat.teleport")

    assert raised.value.response["error"] == "unknown_method"


async def test_apps_connections_open_needs_an_app_token(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    answer = await client.apps_connections_open(app_token=slack.app_token)

    assert answer["url"].startswith(f"ws://127.0.0.1:{slack.url.rsplit(':', 1)[1]}/socket?ticket=")
    with pytest.raises(SlackApiError) as raised:
        await client.apps_connections_open(app_token=slack.bot_token)
    assert raised.value.response["error"] == "not_allowed_token_type"


async def test_a_message_over_the_limits_is_refused_and_recorded_as_a_violation(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}]

    with pytest.raises(SlackApiError) as raised:
        await client.chat_postMessage(channel=CHANNEL, text="fallback", blocks=blocks)

    assert raised.value.response["error"] == "invalid_blocks"
    assert raised.value.response["errors"] == ["blocks[0].text.text: 3001 characters (limit 3000)"]
    assert [v.source for v in slack.violations] == ["chat.postMessage"]
    assert slack.messages(CHANNEL) == []


async def test_blocks_sent_as_a_form_field_are_recorded_decoded(slack: SlackEmulator) -> None:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]
    form = {"channel": CHANNEL, "text": "hi", "blocks": json.dumps(blocks)}
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"{slack.api_url}chat.postMessage",
            data=form,
            headers={"Authorization": f"Bearer {slack.bot_token}"},
        ) as response,
    ):
        assert (await response.json())["ok"] is True

    assert slack.calls[-1].params["blocks"] == blocks
    assert slack.violations == []


async def test_a_rate_limited_post_is_retried_after_retry_after_and_both_calls_are_recorded(
    slack: SlackEmulator, client: AsyncWebClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # slack_sdk sleeps Retry-After plus random() seconds; pin the jitter to keep the test fast.
    monkeypatch.setattr(random, "random", lambda: 0.0)
    client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=1))
    slack.fail_next("chat.postMessage", retry_after=0)

    answer = await client.chat_postMessage(channel=CHANNEL, text="alert")

    assert answer["ok"] is True
    first, second = slack.calls_to("chat.postMessage")
    assert (first.status, first.faulted, first.response["error"]) == (429, True, "ratelimited")
    assert (second.status, second.faulted) == (200, False)
    assert len(slack.messages(CHANNEL)) == 1


async def test_a_rate_limit_without_a_retry_handler_surfaces_status_and_retry_after(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    slack.fail_next("chat.update", retry_after=7)

    with pytest.raises(SlackApiError) as raised:
        await client.chat_update(channel=CHANNEL, ts="1.1", text="x")

    assert raised.value.response.status_code == 429
    assert raised.value.response.headers["Retry-After"] == "7"


async def test_an_injected_slack_error_answers_ok_false_for_the_next_calls_only(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    slack.fail_next("users.info", status=200, error="user_not_found", times=2)

    for _ in range(2):
        with pytest.raises(SlackApiError):
            await client.users_info(user="U0ALICE")
    answer = await client.users_info(user="U0ALICE")

    assert answer["user"]["id"] == "U0ALICE"


async def test_a_response_url_takes_five_posts_then_answers_used_url(slack: SlackEmulator) -> None:
    url = slack.new_response_url()
    statuses = []
    async with aiohttp.ClientSession() as session:
        for n in range(6):
            async with session.post(url, json={"text": f"update {n}"}) as response:
                statuses.append((response.status, await response.text()))

    assert statuses == [(200, "ok")] * 5 + [(404, "used_url")]
    assert len(slack.responses(slack.hook_id_of(url))) == 6


async def test_an_invalid_response_url_post_is_refused_and_recorded(slack: SlackEmulator) -> None:
    url = slack.new_response_url()
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, json={"blocks": [{"type": "divider"}]}) as response,
    ):
        assert response.status == 400

    assert slack.violations[0].source == "response_url"
    assert slack.violations[0].problems[0].startswith("text: missing")


async def test_a_signed_command_is_acked_and_answered_on_its_response_url(
    slack: SlackEmulator, bot: tuple[Bot, SlackDriver]
) -> None:
    _, driver = bot

    delivery = await driver.send_command("health --cluster prod", user_id="U0ALICE")
    reply = await slack.wait_for_response(delivery.hook_id, timeout=5)

    assert (delivery.mode, delivery.status) == ("http", 200)
    assert delivery.ack_text == "working on health --cluster prod"
    assert 0 < delivery.latency < 3
    assert reply.body["text"] == "done: health --cluster prod"
    assert slack.violations == []


@pytest.mark.parametrize(
    "tampering",
    [{"signature": "v0=forged"}, {"timestamp_offset": -400}],
    ids=["forged-signature", "stale-timestamp"],
)
async def test_a_badly_signed_command_gets_401_and_no_reply(
    slack: SlackEmulator, bot: tuple[Bot, SlackDriver], tampering: dict[str, Any]
) -> None:
    app, driver = bot

    delivery = await driver.send_command("pause annia/annia-worker", user_id="U0ALICE", **tampering)

    assert delivery.status == 401
    assert app.commands == []
    assert slack.responses(delivery.hook_id) == []


async def test_a_button_click_replaces_the_channel_message_it_came_from(
    slack: SlackEmulator, client: AsyncWebClient, bot: tuple[Bot, SlackDriver]
) -> None:
    _, driver = bot
    posted = await client.chat_postMessage(channel=CHANNEL, text="Pause?", blocks=[CONFIRM_BLOCK])

    delivery = await driver.click_button(
        "confirm", user_id="U0ALICE", channel_id=CHANNEL, message_ts=posted["ts"]
    )
    await slack.wait_for_response(delivery.hook_id)

    assert delivery.status == 200
    message = slack.message(CHANNEL, posted["ts"])
    assert (message.text, message.edit_count) == ("Confirmed by <@U0ALICE>", 1)


async def test_a_reply_to_an_unknown_thread_is_refused(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    with pytest.raises(SlackApiError) as raised:
        await client.chat_postMessage(channel=CHANNEL, text="reply", thread_ts="1.000001")

    assert raised.value.response["error"] == "thread_not_found"


async def test_a_failing_response_url_answers_the_injected_status_once(
    slack: SlackEmulator,
) -> None:
    url = slack.new_response_url()
    slack.fail_next("response_url", status=500, error="internal_error")
    async with aiohttp.ClientSession() as session:
        statuses = []
        for _ in range(2):
            async with session.post(url, json={"text": "hi"}) as response:
                statuses.append(response.status)

    assert statuses == [500, 200]
    assert [p.accepted for p in slack.responses(slack.hook_id_of(url))] == [False, True]


async def test_waiting_for_thread_replies_returns_them_once_they_arrive(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    root = await client.chat_postMessage(channel=CHANNEL, text="firing")
    waiting = asyncio.ensure_future(slack.wait_for_messages(CHANNEL, thread_ts=root["ts"]))
    await client.chat_postMessage(channel=CHANNEL, text="acknowledged", thread_ts=root["ts"])

    replies = await waiting

    assert [m.text for m in replies] == ["acknowledged"]


async def test_waiting_for_a_response_that_never_comes_times_out(slack: SlackEmulator) -> None:
    url = slack.new_response_url()

    with pytest.raises(TimeoutError, match="response_url"):
        await slack.wait_for_response(slack.hook_id_of(url), timeout=0.05)


async def test_a_click_on_an_ephemeral_reply_carries_the_button_but_no_message(
    slack: SlackEmulator, bot: tuple[Bot, SlackDriver]
) -> None:
    app, driver = bot
    ephemeral_reply = {"text": "Pause?", "blocks": [CONFIRM_BLOCK]}

    delivery = await driver.click_button(
        "confirm", user_id="U0ALICE", channel_id=CHANNEL, message=ephemeral_reply
    )
    reply = await slack.wait_for_response(delivery.hook_id)

    (click,) = app.clicks
    assert click["container"]["is_ephemeral"] is True
    assert "message" not in click
    action = click["actions"][0]
    assert (action["block_id"], action["value"]) == ("confirm-pause", "pause:annia/annia-worker")
    assert reply.body["replace_original"] is True


def home(blocks: int) -> dict[str, Any]:
    section = {"type": "section", "text": {"type": "mrkdwn", "text": "x"}}
    return {"type": "home", "blocks": [section] * blocks}


async def test_views_publish_keeps_the_home_tab_and_refuses_what_slack_refuses(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    published = await client.views_publish(user_id="U0ALICE", view=home(100))
    view = published["view"]
    assert slack.home_view("U0ALICE") == view and view["id"].startswith("V")

    with pytest.raises(SlackApiError) as too_many:
        await client.views_publish(user_id="U0ALICE", view=home(101))
    assert too_many.value.response["error"] == "invalid_arguments"
    assert "view.blocks: 101 blocks (limit 100)" in slack.violations[-1].problems
    with pytest.raises(SlackApiError) as stale:
        await client.views_publish(user_id="U0ALICE", view=home(1), hash="1.0")
    assert stale.value.response["error"] == "hash_conflict"
    with pytest.raises(SlackApiError) as nobody:
        await client.views_publish(user_id="U0NOBODY", view=home(1))
    assert nobody.value.response["error"] == "user_not_found"
    again = await client.views_publish(user_id="U0ALICE", view=home(2), hash=view["hash"])
    assert again["view"]["id"] == view["id"] and len(slack.home_view("U0ALICE")["blocks"]) == 2


async def test_message_ts_follow_slacks_clock_set_hours_behind_the_wall_clock(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    slack.clock_offset = timedelta(hours=-3)
    posted = await client.chat_postMessage(channel=CHANNEL, text="late clock")
    behind = time.time() - float(posted["ts"])
    assert 3 * 3600 - 60 < behind < 3 * 3600 + 60


async def test_message_ts_follow_slacks_clock_set_hours_ahead_and_still_increase(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    slack.clock_offset = timedelta(hours=2)
    first = await client.chat_postMessage(channel=CHANNEL, text="one")
    second = await client.chat_postMessage(channel=CHANNEL, text="two")
    assert 2 * 3600 - 60 < float(first["ts"]) - time.time() < 2 * 3600 + 60
    assert float(first["ts"]) < float(second["ts"])


async def test_chat_update_replaces_metadata_when_given_and_keeps_it_when_omitted(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    old = {"event_type": "kai_chatops_effect", "event_payload": {"effect": "a:0", "by": "r1"}}
    new = {"event_type": "kai_chatops_effect", "event_payload": {"effect": "a:0", "by": "r2"}}
    root = await client.chat_postMessage(channel=CHANNEL, text="firing", metadata=old)

    await client.chat_update(channel=CHANNEL, ts=root["ts"], text="still firing")
    assert slack.message(CHANNEL, root["ts"]).metadata == old
    await client.chat_update(channel=CHANNEL, ts=root["ts"], text="resolved", metadata=new)
    assert slack.message(CHANNEL, root["ts"]).metadata == new


async def test_a_flood_of_thousands_buries_a_message_under_pages_of_history(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    root = await client.chat_postMessage(channel=CHANNEL, text="the alert")
    slack.flood(CHANNEL, 3000)
    slack.flood(CHANNEL, 1200, thread_ts=root["ts"], user="U0BOB")

    first_page = await client.conversations_history(channel=CHANNEL, limit=200)
    assert first_page["has_more"] and all(m["user"] == "U0NOISE" for m in first_page["messages"])
    assert len(slack.root_messages(CHANNEL)) == 3001
    assert len(slack.thread(CHANNEL, root["ts"])) == 1200
    replies = await client.conversations_replies(channel=CHANNEL, ts=root["ts"], limit=200)
    assert replies["messages"][0]["text"] == "the alert" and replies["has_more"]


async def test_a_post_held_on_the_wire_lands_after_the_client_gave_up_and_hung_up(
    slack: SlackEmulator,
) -> None:
    gate = asyncio.Event()
    slack.fail_next("chat.postMessage", status=200, mode="delay_before", gate=gate)
    client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url, timeout=30)
    posting = asyncio.create_task(client.chat_postMessage(channel=CHANNEL, text="held"))
    # The client gives up once its call is on the wire (however long a busy machine took).
    await wait_until(lambda: slack.faults_left("chat.postMessage") == 0, 10, "the call to arrive")
    posting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await posting
    assert slack.messages(CHANNEL) == []

    gate.set()
    call = await slack.wait_for_call("chat.postMessage")
    assert call.ok and [m.text for m in slack.messages(CHANNEL)] == ["held"]


async def test_observers_see_each_applied_call_with_the_channel_as_it_just_became(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    seen: list[tuple[str, int]] = []
    slack.observers.append(lambda c: seen.append((c.method, len(slack.messages(CHANNEL)))))
    root = await client.chat_postMessage(channel=CHANNEL, text="one")
    await client.chat_delete(channel=CHANNEL, ts=root["ts"])
    assert seen == [("chat.postMessage", 1), ("chat.delete", 0)]


async def test_held_calls_of_one_poster_wait_on_the_wire_and_land_on_release(
    slack: SlackEmulator,
) -> None:
    mine = {"event_type": "kai_chatops_effect", "event_payload": {"effect": "a:1", "by": "r1"}}
    theirs = {"event_type": "kai_chatops_effect", "event_payload": {"effect": "a:2", "by": "r2"}}
    hold = slack.hold_calls(lambda method, params: metadata_by(params) == "r1")
    impatient = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url, timeout=0.3)
    with pytest.raises((TimeoutError, aiohttp.ClientError)):
        await impatient.chat_postMessage(channel=CHANNEL, text="slow", metadata=mine)
    await impatient.chat_postMessage(channel=CHANNEL, text="fast", metadata=theirs)
    assert (hold.held, [m.text for m in slack.messages(CHANNEL)]) == (1, ["fast"])

    hold.release()
    await slack.wait_for(lambda: hold.all_landed)
    assert [m.text for m in slack.messages(CHANNEL)] == ["fast", "slow"]


# --- Slack's rate-limit tiers (testbed/slackemu/ratelimits.py, bot/slack/tiers.py) ----------


async def test_a_tier_3_method_above_50_calls_a_minute_is_answered_429_and_not_carried_out(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    client.retry_handlers = []  # slack_sdk would wait out Retry-After and try again
    posted = await client.chat_postMessage(channel=CHANNEL, text="to edit")
    for n in range(50):
        await client.chat_update(channel=CHANNEL, ts=posted["ts"], text=f"edit {n}")
    with pytest.raises(SlackApiError) as refused:
        await client.chat_update(channel=CHANNEL, ts=posted["ts"], text="one too many")
    assert refused.value.response.status_code == 429
    assert refused.value.response["error"] == "ratelimited"
    assert 1 <= int(refused.value.response.headers["Retry-After"]) <= 60
    assert slack.messages(CHANNEL)[0].text == "edit 49"  # the refused edit was not applied
    last = slack.calls[-1]
    assert last.rate_limited and last.method == "chat.update"


async def test_posts_are_limited_per_channel_and_other_methods_keep_their_own_allowance(
    client: AsyncWebClient,
) -> None:
    client.retry_handlers = []
    async with SlackEmulator(rate_limits={"chat.postMessage": 3}) as slack:
        client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
        client.retry_handlers = []
        for n in range(3):
            await client.chat_postMessage(channel=CHANNEL, text=f"page {n}")
        with pytest.raises(SlackApiError) as refused:
            await client.chat_postMessage(channel=CHANNEL, text="page 3")
        assert refused.value.response.status_code == 429
        await client.chat_postMessage(channel="C0OTHER", text="another channel")
        await client.conversations_history(channel=CHANNEL)
        assert [m.text for m in slack.messages(CHANNEL)] == ["page 0", "page 1", "page 2"]


async def test_a_tier_frees_itself_a_minute_after_the_calls_that_filled_it() -> None:
    now = [1000.0]
    async with SlackEmulator(clock=lambda: now[0], rate_limits={"usergroups.list": 2}) as slack:
        client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
        client.retry_handlers = []
        await client.usergroups_list()
        now[0] += 30
        await client.usergroups_list()
        with pytest.raises(SlackApiError) as refused:
            await client.usergroups_list()
        assert refused.value.response.headers["Retry-After"] == "30"
        now[0] += 30.5  # the first call has left the window, the second has not
        await client.usergroups_list()
        with pytest.raises(SlackApiError):
            await client.usergroups_list()


async def test_without_rate_limits_a_test_may_call_as_often_as_it_likes() -> None:
    async with SlackEmulator(rate_limits=False) as slack:
        client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
        for _ in range(60):
            await client.conversations_history(channel=CHANNEL)
        assert not any(call.rate_limited for call in slack.calls)
