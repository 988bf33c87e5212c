"""The emulator's test controls: injected faults, calls held on the wire, Slack's clock, a busy
channel, and the workspace's people. No HTTP here; the server asks `_hold` per request.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

from testbed.slackemu.holding import CallMatch, Hold
from testbed.slackemu.records import Fault, PostedMessage, User, UserGroup
from testbed.slackemu.views import EmulatorViews
from testbed.slackemu.workspace import Workspace


class EmulatorControls(EmulatorViews):
    """What a test changes in the emulator (the server, `SlackEmulator`, serves it)."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        self._faults: dict[str, deque[Fault]] = {}
        # A test's random fault schedule: asked for every call no queued fault answers.
        self.fault_rule: Callable[[str], Fault | None] | None = None
        self._holds: list[Hold] = []

    def add_user(
        self,
        user_id: str,
        name: str,
        *,
        is_admin: bool = False,
        is_owner: bool = False,
        is_bot: bool = False,
        is_restricted: bool = False,
        deleted: bool = False,
        real_name: str = "",
        tz: str = "UTC",
        email: str = "",
    ) -> User:
        """Add (or replace) a member that `users.info` knows."""
        user = User(
            user_id, name, real_name, is_admin, is_owner, is_bot, is_restricted, deleted, tz, email
        )
        self.workspace.add_user(user)
        return user

    def add_usergroup(
        self, group_id: str, handle: str, members: Iterable[str], *, name: str = ""
    ) -> UserGroup:
        """Add (or replace) a user group; call again to change its members mid-test."""
        group = UserGroup(group_id, handle.removeprefix("@"), tuple(members), name)
        self.workspace.add_usergroup(group)
        return group

    @property
    def clock_offset(self) -> timedelta:
        """How far Slack's clock (message `ts`) is from the wall clock; settable at any time
        (`ts` still never goes back: set it before the messages it should stamp)."""
        return self.workspace.clock_offset

    @clock_offset.setter
    def clock_offset(self, offset: timedelta) -> None:
        self.workspace.clock_offset = offset

    def flood(
        self, channel: str, count: int, *, thread_ts: str | None = None, user: str = "U0NOISE"
    ) -> list[PostedMessage]:
        """`count` messages from a human `user` landing at once in `channel` (or in the thread
        of `thread_ts`): a busy channel. No API call is recorded; waiters are woken once.

        Raises:
            LookupError: `thread_ts` names no message in the channel.
        """
        posted = self.workspace.flood(channel, count, thread_ts=thread_ts, user=user)
        self._changes.notify()
        return posted

    def hold_calls(self, match: CallMatch) -> Hold:
        """Hold every call `match(method, params)` picks on the wire until `Hold.release()`;
        then Slack carries each out and answers, whether or not its client still waits
        (`testbed.slackemu.holding.metadata_by(params)` names a message's poster)."""
        hold = Hold(match)
        self._holds.append(hold)
        return hold

    def fail_next(
        self,
        method: str,
        *,
        status: int = 429,
        retry_after: int = 1,
        error: str = "ratelimited",
        times: int = 1,
        mode: str = "answer",
        delay: float = 0.0,
        gate: asyncio.Event | None = None,
    ) -> None:
        """Make the next `times` calls of `method` fail instead of being served.

        A 429 carries `Retry-After: retry_after`; any status answers `{"ok": false, "error"}`
        (use `status=200` for a plain Slack error such as `channel_not_found`). `mode` (see
        `Fault`) drops the connection before or after doing the call, answers late, or answers
        an error after doing it; `gate` holds a `delay_before` call until the test sets it.
        `method` may also be `"response_url"` to fail posts to hooks.
        Faulted calls are recorded.
        """
        queue = self._faults.setdefault(method, deque())
        queue.extend(Fault(status, retry_after, error, mode, delay, gate) for _ in range(times))

    def faults_left(self, method: str) -> int:
        """How many of the failures `fail_next` queued for `method` no call has taken yet (a
        test knows its call reached Slack once this drops)."""
        return len(self._faults.get(method, ()))

    async def _hold(self, method: str, params: dict[str, Any], fault: Fault | None) -> bool:
        """Hold a call on the wire if a `delay_before` fault or a `Hold` says so; whether it
        was held (it is carried out when this returns)."""
        if fault is not None:
            if fault.mode == "delay_before":
                await _wait(fault)
                return True
            return False
        hold = next((h for h in self._holds if h.is_holding and h.match(method, params)), None)
        if hold is None:
            return False
        hold.held += 1
        self._changes.notify()
        await hold.gate.wait()
        hold.landed += 1
        return True

    def _take_fault(self, method: str) -> Fault | None:
        queue = self._faults.get(method)
        if queue:
            return queue.popleft()
        return self.fault_rule(method) if self.fault_rule is not None else None


async def _wait(fault: Fault) -> None:
    """Hold a `delay_before` call: until its gate is set, or for its delay."""
    if fault.gate is not None:
        await fault.gate.wait()
    else:
        await asyncio.sleep(fault.delay)
