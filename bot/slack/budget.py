"""Slack's budget, spent on purpose: one limiter per Web API method, shared by all the work.

Slack allows each method so many calls a minute (`bot.slack.tiers`) and answers 429 above that.
Every call the service makes goes through its method's `Lane` (posts: one lane per channel)
before it is sent: a token bucket a little under Slack's allowance, with small bursts, whose
waiting calls are served most urgent first (`Priority`; among equals, the one with the most
time left before its deadline), so a new page never queues behind a convergence read. A 429
that comes anyway closes the lane for its `Retry-After`, for every caller at once. A call may
carry a deadline (`sent_by`): one that could not be sent by then is refused unsent (`NotSent`),
so its caller knows it was surely not applied.

The priority and deadline of a call are the caller's context (`urgency`), so that the calls of
one piece of work (a page and the look-up before it) share them without being threaded through
every signature. No I/O here: the client (`bot.slack.client`) asks a lane before each call.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import heapq
import itertools
import math
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

from bot.slack import tiers


class Priority(enum.IntEnum):
    """Who waits for a call: the lower, the sooner it is served."""

    PAGE = 0  # a new page: an incident's root (and the look for a copy of it)
    THREAD = 1  # its diagnosis, the replies and the edits an open incident owes
    ANSWER = 2  # a command's or a click's answer, approval requests, announcements
    CONVERGE = 3  # reads and deletes that make the channel agree with the state
    BACKGROUND = 4  # the Home tab, reminders, eviction notices


@dataclass(frozen=True)
class Urgency:
    """A call's priority and the monotonic time by which it must have been sent (None: none)."""

    priority: Priority = Priority.ANSWER
    sent_by: float | None = None


_DEFAULT = Urgency()
_URGENCY: ContextVar[Urgency | None] = ContextVar("slack_urgency", default=None)
SAFETY = 0.9  # share of Slack's allowance spent: the rest absorbs clocks that differ
BURST_SHARE = 10  # a lane's burst: a tenth of a minute's allowance (at least one call)


class NotSent(Exception):
    """The call was not sent: its deadline came while it waited for its method's budget."""


@contextlib.contextmanager
def urgency(priority: Priority, *, sent_by: float | None = None) -> Iterator[None]:
    """The calls made inside (and in tasks started inside) have this priority and deadline."""
    token = _URGENCY.set(Urgency(priority, sent_by))
    try:
        yield
    finally:
        _URGENCY.reset(token)


def current() -> Urgency:
    """The urgency of the calls made now."""
    return _URGENCY.get() or _DEFAULT


class Leaving:
    """Whether a piece of work's call went to Slack: `asked` once a budgeted client has it,
    `sent` once its lane let it go. A caller that gives up on it while it still waits for its
    budget (`unsent`) knows it was surely not applied: a stalled event loop fires the caller's
    time limit with the lane's deadline, and a call cut there was recorded as "unknown", to be
    looked for in the channel before it is sent again (bench/fleet_ha.py)."""

    def __init__(self) -> None:
        self.asked = False
        self.sent = False

    @property
    def unsent(self) -> bool:
        return self.asked and not self.sent


_LEAVING: ContextVar[Leaving | None] = ContextVar("slack_leaving", default=None)


@contextlib.contextmanager
def leaving() -> Iterator[Leaving]:
    """The calls made inside (and in tasks started inside) say whether they went."""
    found = Leaving()
    token = _LEAVING.set(found)
    try:
        yield found
    finally:
        _LEAVING.reset(token)


def watched_call() -> Leaving | None:
    """What the call made now reports to (None: nobody asks)."""
    return _LEAVING.get()


@dataclass(order=True)
class _Waiter:
    """Served by priority; among equals, the one with the most time left to be sent (no
    deadline: all the time), then first come. Under a backlog the first to come are those
    nearest their deadline: served oldest first, a call sent just before it had a second for
    Slack to answer before its right to act ended, and half the roots of a thousand clusters
    failing at once were cut there, their outcome unknown and looked for in the channel
    (bench/fleet_ha.py). One whose deadline comes first is refused unsent: surely not applied."""

    priority: int
    later: float  # minus the deadline: the latest deadline first
    seq: int
    future: asyncio.Future[None] = field(compare=False)


class Lane:
    """One method's (or one channel's posts') token bucket, serving waiters by priority."""

    def __init__(self, per_minute: float, *, burst: int, monotonic: Callable[[], float]) -> None:
        self.rate = per_minute / 60.0
        self.burst = max(1, burst)
        self._monotonic = monotonic
        self._tokens = float(self.burst)
        self._stamp = monotonic()
        self._closed_until = 0.0
        self._waiters: list[_Waiter] = []
        self._seq = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self.waited = 0  # calls that had to wait (for the metrics)

    async def take(self, urgency: Urgency) -> None:
        """Wait for a token, behind every more urgent waiter.

        Raises:
            NotSent: `urgency.sent_by` came first.
        """
        if not self._waiters and self._take_now():
            return
        self.waited += 1
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        later = -math.inf if urgency.sent_by is None else -urgency.sent_by
        waiter = _Waiter(int(urgency.priority), later, next(self._seq), future)
        heapq.heappush(self._waiters, waiter)
        self._serve()
        timeout = None
        if urgency.sent_by is not None:
            timeout = max(0.0, urgency.sent_by - self._monotonic())
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            if future.done():  # served in the same instant: it may go
                return
            future.cancel()
            raise NotSent("no Slack budget before its deadline") from None
        finally:
            if not future.done():
                future.cancel()
            self._serve()

    def close_for(self, seconds: float) -> None:
        """Slack said 429: nobody calls this method for `seconds` (its `Retry-After`)."""
        self._closed_until = max(self._closed_until, self._monotonic() + seconds)
        self._tokens = 0.0
        self._serve()

    def _take_now(self) -> bool:
        self._refill()
        if self._monotonic() < self._closed_until or self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True

    def _refill(self) -> None:
        """Tokens come at `rate`, never while the lane is closed, up to `burst`."""
        now = self._monotonic()
        since = max(self._stamp, self._closed_until)
        if now > since:
            self._tokens = min(float(self.burst), self._tokens + (now - since) * self.rate)
        self._stamp = max(self._stamp, now)

    def _serve(self) -> None:
        """Hand tokens to the most urgent waiters; when none is left, wake when one comes."""
        while self._waiters and self._waiters[0].future.done():
            heapq.heappop(self._waiters)  # given up
        while self._waiters and self._take_now():
            waiter = heapq.heappop(self._waiters)
            if not waiter.future.done():
                waiter.future.set_result(None)
            while self._waiters and self._waiters[0].future.done():
                heapq.heappop(self._waiters)
        if self._waiters and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._next_token(), self._wake)

    def _wake(self) -> None:
        self._timer = None
        self._serve()

    def _next_token(self) -> float:
        now = self._monotonic()
        if now < self._closed_until:
            return self._closed_until - now + 1.0 / self.rate
        return max(0.001, (1.0 - self._tokens) / self.rate)


class Budget:
    """Every lane of one Slack app, made on first use."""

    def __init__(self, *, monotonic: Callable[[], float], safety: float = SAFETY) -> None:
        self._monotonic = monotonic
        self._safety = safety
        self._lanes: dict[tuple[str, str], Lane] = {}

    def lane(self, method: str, channel: str = "") -> Lane | None:
        """The lane of `method` (posts: of `channel`); None when Slack gives it no tier here."""
        if method == tiers.POST_METHOD:
            key, allowance = (method, channel), tiers.POSTS_PER_CHANNEL_PER_MINUTE
        else:
            per_minute = tiers.per_minute(method)
            if per_minute is None:
                return None
            key, allowance = (method, ""), per_minute
        lane = self._lanes.get(key)
        if lane is None:
            burst = max(1, allowance // BURST_SHARE)
            lane = Lane(allowance * self._safety, burst=burst, monotonic=self._monotonic)
            self._lanes[key] = lane
        return lane

    def waited(self) -> int:
        """How many calls have waited for budget, on every lane."""
        return sum(lane.waited for lane in self._lanes.values())
