"""Reading the alert channel back: which messages carry which effect IDs, read as seldom as
the looks allow.

A read of a channel (`conversations.history`) or a thread (`conversations.replies`) is kept:
a later look as recent as a kept read (`Fresh`) is answered from it, so one read of a channel
serves every incident that looks at it, and a read that has to be made again reads on from
the newest message the last one saw (a message a later read has not seen can only be newer:
Slack stamps it when it lands), a page where the whole channel would be many. Threads are read
whole unless they are longer than a page. What the bot deletes is forgotten in every kept read.
Every read goes to the last page: a read that could not finish is "don't know" (None).
Reads of one channel or thread are made one at a time: looks asked while a read is under way
wait for it and are answered by the next read, one for all of them (a fleet-wide failure's
thousand look-ups for copies cost a few reads, not a thousand).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, Protocol

from bot.alerts.looks import ts_order
from bot.alerts.model import AlertState
from bot.slack.gateway import SlackUnavailable

log = logging.getLogger("bot.alerts.delivery")  # the name these warnings always had

METADATA_EVENT = "kai_chatops_effect"  # Slack metadata event_type: letters and underscores
THREADS_KEPT = 500  # threads whose last read is kept (channels' always are)
LONG_READ = 200  # messages (a page): a thread this long is read on, not read whole again


class MessageReader(Protocol):
    """Reading messages back (`bot.slack.gateway.SlackGateway`)."""

    async def find_messages(
        self,
        channel: str,
        *,
        thread_ts: str | None = None,
        oldest: str | None = None,
        latest: str | None = None,
    ) -> list[Mapping[str, Any]]: ...

    async def thread_head(self, channel: str, thread_ts: str) -> Mapping[str, Any] | None: ...

    async def newest_ts(self, channel: str) -> str: ...


@dataclass(frozen=True)
class MessageCopy:
    """A message found in Slack carrying an effect ID: its ts and, for a root, the digest of
    what it shows (`shown`, "" when unknown)."""

    ts: str
    shown: str = ""


@dataclass(frozen=True)
class _Scan:
    """What is known of a channel (or a thread) from `after` to `newest` (the newest ts
    read), as of the `number`th read, begun at `read_at` (the drain's monotonic clock): its
    messages carrying effect IDs."""

    number: int
    read_at: float
    after: str
    newest: str
    effects: dict[str, list[MessageCopy]]
    size: int = 0  # messages the last read saw
    whole: bool = True  # the last read was of everything since `after` (not read on)


@dataclass(frozen=True)
class Fresh:
    """How recent a read must be to serve a look: begun at or after `since` (the drain's
    monotonic clock) and made after the first `after_read` reads."""

    since: float
    after_read: int


class ChannelReads:
    """The kept reads of every channel and thread one desk looks at."""

    def __init__(
        self, reader: MessageReader | None, *, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self._reader = reader
        self._monotonic = monotonic  # the drain's clock, which `Fresh.since` is read on
        self._newest: dict[str, str] = {}  # channel -> the newest Slack ts seen there
        self._scans: dict[tuple[str, str], _Scan] = {}  # (channel, thread) -> last read
        self._turns: dict[tuple[str, str], tuple[asyncio.Lock, int]] = {}  # reads asked, by key
        self._failed: dict[tuple[str, str], int] = {}  # key -> the number of its failed read
        self.reads = 0  # reads of a channel or thread made so far, for `Fresh`

    async def anchor(self, channel: str) -> str:
        """A Slack ts that anything posted from now on comes after: the newest this process
        has seen in `channel`, else the channel's newest message ("" when Slack cannot say:
        a later search then reads the whole channel)."""
        if channel in self._newest or self._reader is None:
            return self._newest.get(channel, "")
        try:
            self.saw(channel, await self._reader.newest_ts(channel))
        except SlackUnavailable as e:
            log.warning("cannot read the newest message of %s: %s", channel, e)
        return self._newest.get(channel, "")

    async def find_effects(
        self,
        channel: str,
        *,
        thread_ts: str = "",
        after: str = "",
        fresh: Fresh | None = None,
        scan_from: str | None = None,
    ) -> dict[str, list[MessageCopy]] | None:
        """Every message carrying an effect ID in the channel, or in one thread, newer than
        `after`: effect ID -> copies, oldest first; None when Slack could not be read.

        With `fresh`, a read of the same channel or thread as recent as that, from no later
        than `after`, answers instead of a new one: one read of a channel serves every
        incident that looks at it. `scan_from` (older than `after`) widens a new read so
        that it can serve the others too.
        """
        key = (channel, thread_ts)
        # Without `fresh`, any read begun after this look was asked serves it.
        fresh = fresh if fresh is not None else Fresh(self._monotonic(), self.reads)
        async with self._turn(key):
            kept = self._scans.get(key)
            if kept is not None and _serves(kept, fresh, after):
                return _newer(kept.effects, after)
            if self._failed.get(key, 0) > fresh.after_read:
                return None  # a read begun since failed: no later one would know more now
            self.reads += 1
            number, start = self.reads, _earlier(after, scan_from)
            scan = await self._read(key, kept, start, number)
            if scan is None:
                self._failed[key] = number
                for old in list(self._failed)[: max(0, len(self._failed) - THREADS_KEPT)]:
                    del self._failed[old]
                return None
            self._failed.pop(key, None)
            self._keep(key, scan)
        return _newer(scan.effects, after)

    @asynccontextmanager
    async def _turn(self, key: tuple[str, str]) -> AsyncIterator[None]:
        """One read of `key` at a time; the lock lives while anyone waits for it."""
        lock, waiting = self._turns.get(key, (asyncio.Lock(), 0))
        self._turns[key] = (lock, waiting + 1)
        try:
            async with lock:
                yield
        finally:
            lock, waiting = self._turns[key]
            if waiting > 1:
                self._turns[key] = (lock, waiting - 1)
            else:
                del self._turns[key]

    async def _read(
        self, key: tuple[str, str], kept: _Scan | None, start: str, number: int
    ) -> _Scan | None:
        """The `number`th read, of `key`, reaching back to `start`."""
        channel, thread_ts = key
        read_at = self._monotonic()
        # A channel, or a thread too long for one page, is read on from what was read before.
        known = kept if kept is not None and (not thread_ts or kept.size >= LONG_READ) else None
        if known is not None and ts_order(start) < ts_order(known.after):
            known = await self._read_back(channel, thread_ts, known, start)
            if known is None:
                return None
        if known is not None:
            return await self._read_on(channel, thread_ts, known, number, read_at)
        return await self._read_from(channel, thread_ts, start, number, read_at)

    async def _read_from(
        self, channel: str, thread_ts: str, start: str, number: int, read_at: float
    ) -> _Scan | None:
        read = await self._read_effects(channel, thread_ts, start)
        if read is None:
            return None
        effects, newest, size = read
        return _Scan(number, read_at, start, newest or start, effects, size)

    async def _read_on(
        self, channel: str, thread_ts: str, known: _Scan, number: int, read_at: float
    ) -> _Scan | None:
        """A channel read before, read on from the newest message it saw: a message a later
        read has not seen can only be newer (Slack stamps it when it lands), so what the two
        reads saw together is the whole channel since `known.after`. A channel is a busy
        place; this reads a page where the whole would be many."""
        read = await self._read_effects(channel, thread_ts, known.newest)
        if read is None:
            return None
        effects, newest, size = read
        merged = {e: list(c) for e, c in known.effects.items()}
        for effect, copies in effects.items():
            seen = {c.ts for c in merged.get(effect, [])}
            merged.setdefault(effect, []).extend(c for c in copies if c.ts not in seen)
        newest = newest or known.newest
        return _Scan(number, read_at, known.after, newest, merged, known.size + size, False)

    async def _read_back(
        self, channel: str, thread_ts: str, known: _Scan, start: str
    ) -> _Scan | None:
        """A kept read widened to begin at `start`: only what lies between `start` and where
        it began is read (None when that cannot be read: then all is read afresh)."""
        read = await self._read_effects(channel, thread_ts, start, up_to=known.after)
        if read is None:
            return None
        effects, _, size = read
        merged = {e: list(c) for e, c in effects.items()}
        for effect, copies in known.effects.items():
            seen = {c.ts for c in merged.get(effect, [])}
            merged.setdefault(effect, []).extend(c for c in copies if c.ts not in seen)
        return replace(known, after=start, effects=merged, size=known.size + size)

    async def _read_effects(
        self, channel: str, thread_ts: str, after: str, *, up_to: str = ""
    ) -> tuple[dict[str, list[MessageCopy]], str, int] | None:
        """The messages newer than `after` (and no newer than `up_to`, when given) that carry
        effect IDs, the newest ts read, and how many messages were read."""
        if self._reader is None:
            return None
        try:
            found = await self._reader.find_messages(
                channel, thread_ts=thread_ts or None, oldest=after or None, latest=up_to or None
            )
        except SlackUnavailable as e:
            log.warning("cannot look for alert messages in Slack: %s", e)
            return None
        effects: dict[str, list[MessageCopy]] = {}
        newest = ""
        for message in sorted(found, key=lambda m: ts_order(str(m.get("ts")))):
            newest = str(message.get("ts") or "") or newest
            self.saw(channel, newest)
            if effect := effect_of(message):
                copy = MessageCopy(
                    str(message.get("ts")), str(_payload(message).get("shown") or "")
                )
                effects.setdefault(effect, []).append(copy)
        return effects, newest, len(found)

    def _keep(self, key: tuple[str, str], scan: _Scan) -> None:
        """Keep `scan` for later looks: every channel's, and the `THREADS_KEPT` threads read
        last (a kept read is its effects' IDs and ts, a few bytes each)."""
        self._scans.pop(key, None)
        self._scans[key] = scan
        threads = [k for k in self._scans if k[1]]
        for old in threads[: max(0, len(threads) - THREADS_KEPT)]:
            del self._scans[old]

    async def root_now(self, alert: AlertState) -> MessageCopy | None:
        """The root as Slack shows it now (its ts and the digest it carries): from the read of
        its thread just made when that read was whole, else read afresh (one call); None
        when it is gone or Slack cannot say."""
        channel, incident = alert.root_channel, f"{alert.incident}:0"
        kept = self._scans.get((channel, alert.root_ts))
        if kept is not None and kept.whole:
            return next((c for c in kept.effects.get(incident, []) if c.ts == alert.root_ts), None)
        if self._reader is None:
            return None
        try:
            head = await self._reader.thread_head(channel, alert.root_ts)
        except SlackUnavailable as e:
            log.warning("cannot read the root of %s: %s", alert.incident, e)
            return None
        if head is None or effect_of(head) != incident:
            return None
        return MessageCopy(str(head.get("ts")), str(_payload(head).get("shown") or ""))

    def saw(self, channel: str, ts: str) -> None:
        """A message of `channel` was seen with this ts (Slack's clock moved on there)."""
        if ts and ts_order(ts) > ts_order(self._newest.get(channel, "")):
            self._newest[channel] = ts

    def forget(self, channel: str, ts: str) -> None:
        """A message is gone: no kept read of the channel may show it any more."""
        for (where, thread), scan in list(self._scans.items()):
            if where == channel:
                effects = {e: [c for c in cs if c.ts != ts] for e, cs in scan.effects.items()}
                self._scans[(where, thread)] = replace(scan, effects=effects)


def _payload(message: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = message.get("metadata")
    if not isinstance(metadata, Mapping) or metadata.get("event_type") != METADATA_EVENT:
        return {}
    payload = metadata.get("event_payload")
    return payload if isinstance(payload, Mapping) else {}


def effect_of(message: Mapping[str, Any]) -> str:
    """The effect ID a message found in Slack carries ("" for any other message)."""
    return str(_payload(message).get("effect") or "")


def _earlier(after: str, scan_from: str | None) -> str:
    """Where a new read starts: `after`, or `scan_from` when that is older."""
    if scan_from is not None and ts_order(scan_from) < ts_order(after):
        return scan_from
    return after


def _serves(scan: _Scan, fresh: Fresh, after: str) -> bool:
    """Whether `scan` is recent enough for `fresh` and reaches back to `after`."""
    recent = scan.read_at >= fresh.since and scan.number > fresh.after_read
    return recent and ts_order(scan.after) <= ts_order(after)


def _newer(effects: Mapping[str, list[MessageCopy]], after: str) -> dict[str, list[MessageCopy]]:
    """The copies of each effect newer than `after` (effects with none left out)."""
    bound = ts_order(after)
    newer = {e: [c for c in copies if ts_order(c.ts) > bound] for e, copies in effects.items()}
    return {e: copies for e, copies in newer.items() if copies}
