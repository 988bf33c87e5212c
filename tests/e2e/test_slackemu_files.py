"""The emulator shares files as Slack documents it (testbed/slackemu/files.py), driven by the
real slack_sdk: `files.getUploadURLExternal`, the bytes to the upload URL, then
`files.completeUploadExternal`, each refusal in Slack's words, Tier 4 like Slack's."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.web.async_client import AsyncWebClient

from testbed.slackemu import SlackEmulator

CHANNEL = "C0ALERTS"
DRAFT = "# Postmortem draft\n\n- `10:02:11Z` **HelmRelease flux-system/kai** upgrade — été\n"


@pytest.fixture
async def slack() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator() as emulator:
        yield emulator


@pytest.fixture
def client(slack: SlackEmulator) -> AsyncWebClient:
    client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
    client.retry_handlers = []
    return client


async def test_a_file_uploaded_in_three_steps_is_shared_in_the_thread_with_its_bytes(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    root = await client.chat_postMessage(channel=CHANNEL, text="[CRITICAL] kai-config missing")
    answer = await client.files_upload_v2(
        channel=CHANNEL,
        thread_ts=root["ts"],
        filename="postmortem.md",
        title="postmortem.md",
        content=DRAFT.encode(),
        initial_comment="Postmortem draft",
    )
    file_id = answer["file"]["id"]
    [reply] = slack.thread(CHANNEL, root["ts"])
    assert reply.text == "Postmortem draft"
    assert [f["id"] for f in reply.files] == [file_id]
    shared = slack.files.by_id[file_id]
    assert shared.text == DRAFT and shared.length == len(DRAFT.encode())  # bytes, not chars
    methods = [c.method for c in slack.calls]
    assert methods[-2:] == ["files.getUploadURLExternal", "files.completeUploadExternal"]


async def test_an_upload_url_takes_a_multipart_form_too_and_only_once(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    url = await client.files_getUploadURLExternal(filename="a.md", length=5)
    form = aiohttp.FormData()
    form.add_field("filename", b"hello", filename="a.md")
    async with aiohttp.ClientSession() as session:
        async with session.post(url["upload_url"], data=form) as first:
            assert first.status == 200
        async with session.post(url["upload_url"], data=b"hello") as again:
            assert again.status != 200
    assert slack.files.by_id[url["file_id"]].text == "hello"


async def test_an_upload_of_another_size_than_announced_is_refused_and_never_shared(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    url = await client.files_getUploadURLExternal(filename="a.md", length=3)
    async with (
        aiohttp.ClientSession() as session,
        session.post(url["upload_url"], data=b"four") as answer,
    ):
        assert answer.status == 400
    with pytest.raises(SlackApiError) as refused:
        await client.files_completeUploadExternal(
            files=[{"id": url["file_id"]}], channel_id=CHANNEL
        )
    assert refused.value.response["error"] == "file_not_found"
    assert slack.messages(CHANNEL) == []


async def test_completing_twice_or_without_files_is_refused_in_slacks_words(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    await client.files_upload_v2(channel=CHANNEL, filename="a.md", content=b"abc")
    [shared] = slack.files.by_id.values()
    with pytest.raises(SlackApiError) as twice:
        await client.files_completeUploadExternal(files=[{"id": shared.id}], channel_id=CHANNEL)
    assert twice.value.response["error"] == "file_not_found"  # "can only be called once"
    with pytest.raises(SlackApiError) as empty:
        await client.api_call("files.completeUploadExternal", params={"files": "[]"})
    assert empty.value.response["error"] == "invalid_arguments"
    with pytest.raises(SlackApiError) as nameless:
        await client.api_call("files.getUploadURLExternal", params={"length": 3})
    assert nameless.value.response["error"] == "invalid_arguments"
    assert len(slack.messages(CHANNEL)) == 1


async def test_without_files_write_the_upload_is_refused_naming_the_scope(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    slack.workspace.scopes.discard("files:write")
    with pytest.raises((SlackApiError, SlackRequestError)) as refused:
        await client.files_upload_v2(channel=CHANNEL, filename="a.md", content=b"abc")
    assert isinstance(refused.value, SlackApiError)
    assert refused.value.response["error"] == "missing_scope"
    assert refused.value.response["needed"] == "files:write"
    assert slack.files.by_id == {} and slack.messages(CHANNEL) == []


async def test_a_file_shared_in_a_thread_that_does_not_exist_is_refused(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    with pytest.raises(SlackApiError) as refused:
        await client.files_upload_v2(
            channel=CHANNEL, thread_ts="1.000001", filename="a.md", content=b"abc"
        )
    assert refused.value.response["error"] == "thread_not_found"
    assert slack.messages(CHANNEL) == []


async def test_getting_upload_urls_is_tier_4_above_100_a_minute() -> None:
    async with SlackEmulator() as slack:
        client = AsyncWebClient(token=slack.bot_token, base_url=slack.api_url)
        client.retry_handlers = []
        for _ in range(100):
            await client.files_getUploadURLExternal(filename="a.md", length=1)
        with pytest.raises(SlackApiError) as refused:
            await client.files_getUploadURLExternal(filename="a.md", length=1)
        assert refused.value.response.status_code == 429
        assert len(slack.files.by_id) == 100  # the refused call made no file
