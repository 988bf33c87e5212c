"""Reading the alert channel back (bot/alerts/channel_reads.py): one read serves every look as
recent as it, a read made again reads on from the newest message it saw, and a deleted copy is
forgotten."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from bot.alerts.channel_reads import METADATA_EVENT, ChannelReads, Fresh
from bot.slack.gateway import SlackUnavailable


def message(ts: str, effect: str = "", thread_ts: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"ts": ts, "thread_ts": thread_ts}
    if effect:
        found["metadata"] = {"event_type": METADATA_EVENT, "event_payload": {"effect": effect}}
    return found


class Channel:
    """A channel's messages, counting the reads and what each read asked from."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.asked: list[str | None] = []

    async def find_messages(
        self,
        channel: str,
        *,
        thread_ts: str | None = None,
        oldest: str | None = None,
        latest: str | None = None,
    ) -> list[Mapping[str, Any]]:
        self.asked.append(oldest if latest is None else f"{oldest}..{latest}")
        low, high = float(oldest) if oldest else 0.0, float(latest) if latest else 1e12
        return [
            m for m in self.messages if m["thread_ts"] == thread_ts and low < float(m["ts"]) <= high
        ]

    async def thread_head(self, channel: str, thread_ts: str) -> Mapping[str, Any] | None:
        return next((m for m in self.messages if m["ts"] == thread_ts), None)

    async def newest_ts(self, channel: str) -> str:
        return str(self.messages[-1]["ts"]) if self.messages else ""


async def test_a_read_as_recent_as_a_look_asks_serves_it_without_asking_slack() -> None:
    slack, now = Channel(), [10.0]
    reads = ChannelReads(slack, monotonic=lambda: now[0])
    slack.messages = [message("100.000001", "inc-a:0"), message("100.000002", "inc-b:0")]
    first = await reads.find_effects("C1", after="", fresh=Fresh(10.0, reads.reads))
    second = await reads.find_effects("C1", after="100.000001", fresh=Fresh(10.0, 0))
    assert first is not None and set(first) == {"inc-a:0", "inc-b:0"}
    assert second is not None and set(second) == {"inc-b:0"}  # filtered, not read again
    assert len(slack.asked) == 1


async def test_a_look_that_needs_a_later_read_reads_on_from_the_newest_message_seen() -> None:
    slack, now = Channel(), [10.0]
    reads = ChannelReads(slack, monotonic=lambda: now[0])
    slack.messages = [message(f"100.{n:06d}") for n in range(1, 500)]
    slack.messages.append(message("100.000600", "inc-a:0"))
    await reads.find_effects("C1", after="")
    slack.messages.append(message("100.000700", "inc-a:0"))  # a late copy lands
    seen = reads.reads
    now[0] = 20.0
    found = await reads.find_effects("C1", after="", fresh=Fresh(20.0, seen))
    assert slack.asked == [None, "100.000600"]  # the second read asked only for what is new
    assert found is not None and [c.ts for c in found["inc-a:0"]] == ["100.000600", "100.000700"]


async def test_a_deleted_copy_is_forgotten_by_every_kept_read() -> None:
    slack = Channel()
    reads = ChannelReads(slack)
    slack.messages = [message("100.000001", "inc-a:0"), message("100.000002", "inc-a:0")]
    await reads.find_effects("C1", after="")
    reads.forget("C1", "100.000002")
    found = await reads.find_effects("C1", after="", fresh=Fresh(0.0, 0))
    assert found is not None and [c.ts for c in found["inc-a:0"]] == ["100.000001"]
    assert len(slack.asked) == 1


async def test_a_read_that_fails_is_dont_know_and_keeps_nothing() -> None:
    class Down(Channel):
        async def find_messages(
            self,
            channel: str,
            *,
            thread_ts: str | None = None,
            oldest: str | None = None,
            latest: str | None = None,
        ) -> list[Mapping[str, Any]]:
            from bot.slack.gateway import SlackUnavailable

            raise SlackUnavailable("Slack conversations_history failed: service_unavailable")

    reads = ChannelReads(Down())
    assert await reads.find_effects("C1", after="") is None
    assert await reads.find_effects("C1", after="", fresh=Fresh(0.0, 0)) is None


async def test_a_look_from_an_older_anchor_reads_only_what_lies_before_the_kept_read() -> None:
    slack, now = Channel(), [10.0]
    reads = ChannelReads(slack, monotonic=lambda: now[0])
    slack.messages = [message("100.000001", "old:0"), message("100.000500", "new:0")]
    await reads.find_effects("C1", after="100.000400")
    found = await reads.find_effects("C1", after="")  # an older incident's look
    assert slack.asked == ["100.000400", "None..100.000400", "100.000500"]
    assert found is not None and set(found) == {"old:0", "new:0"}


class Gated(Channel):
    """A channel whose reads wait at a gate until the test opens it (then fail, when `down`)."""

    def __init__(self, *, down: bool = False) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.reading = asyncio.Event()
        self.down = down

    async def find_messages(
        self,
        channel: str,
        *,
        thread_ts: str | None = None,
        oldest: str | None = None,
        latest: str | None = None,
    ) -> list[Mapping[str, Any]]:
        self.reading.set()
        await self.gate.wait()
        found = await super().find_messages(
            channel, thread_ts=thread_ts, oldest=oldest, latest=latest
        )
        if self.down:
            raise SlackUnavailable("Slack conversations_history failed: service_unavailable")
        return found


async def test_looks_for_copies_asked_together_share_one_read_of_the_channel() -> None:
    slack = Gated()
    reads = ChannelReads(slack)
    slack.messages = [message(f"100.{n:06d}", f"inc-{n}:0") for n in range(1, 301)]
    looks = [asyncio.create_task(reads.find_effects("C1", after="100.000000")) for _ in range(300)]
    await slack.reading.wait()
    slack.gate.set()
    found = await asyncio.gather(*looks)
    assert all(f is not None and len(f) == 300 for f in found)
    # The first look's read, then one for the 299 asked while it was under way: not one each.
    assert len(slack.asked) == 2


async def test_a_read_begun_before_a_look_was_asked_does_not_answer_it() -> None:
    slack = Gated()
    reads = ChannelReads(slack)
    slack.messages = [message("100.000001", "inc-a:0")]
    first = asyncio.create_task(reads.find_effects("C1", after=""))
    await slack.reading.wait()  # the first read is under way
    slack.messages.append(message("100.000002", "inc-a:1"))  # a copy lands meanwhile
    second = asyncio.create_task(reads.find_effects("C1", after=""))
    slack.gate.set()
    assert set(await first or {}) <= {"inc-a:0", "inc-a:1"}
    assert set(await second or {}) == {"inc-a:0", "inc-a:1"}  # read again: it may have landed
    assert len(slack.asked) == 2


async def test_looks_waiting_on_a_read_that_fails_are_dont_know_without_a_read_each() -> None:
    slack = Gated(down=True)
    reads = ChannelReads(slack)
    looks = [asyncio.create_task(reads.find_effects("C1", after="")) for _ in range(50)]
    await slack.reading.wait()
    slack.gate.set()
    assert await asyncio.gather(*looks) == [None] * 50
    assert len(slack.asked) == 2  # the first look's, then one for the 49 asked meanwhile
