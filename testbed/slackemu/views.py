"""Reading what the emulator recorded, and waiting for it: the test-facing half of the emulator.

`SlackEmulator` (server.py) serves and records; this base class only reads its records and
waits on its change signal. Nothing here changes state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from testbed.slackemu.hooks import HookRegistry
from testbed.slackemu.records import (
    ApiCall,
    EphemeralMessage,
    HookPost,
    PostedMessage,
    Violation,
)
from testbed.slackemu.socket import SocketHub
from testbed.slackemu.waiting import ChangeSignal
from testbed.slackemu.workspace import Workspace

T = TypeVar("T")


class EmulatorViews:
    """Channel views, call and response_url records, and waits over them."""

    calls: list[ApiCall]
    violations: list[Violation]
    socket: SocketHub
    _hooks: HookRegistry

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._changes = ChangeSignal()

    def messages(self, channel: str) -> list[PostedMessage]:
        """Every message in a channel (roots and thread replies), oldest first, as edited."""
        return self.workspace.messages(channel)

    def root_messages(self, channel: str) -> list[PostedMessage]:
        """A channel's top-level messages, oldest first."""
        return self.workspace.root_messages(channel)

    def thread(self, channel: str, thread_ts: str) -> list[PostedMessage]:
        """The replies in the thread under `thread_ts`, oldest first (root excluded)."""
        return self.workspace.thread(channel, thread_ts)

    def message(self, channel: str, ts: str) -> PostedMessage:
        """The current version of one message.

        Raises:
            LookupError: no such message in that channel.
        """
        return self.workspace.get_message(channel, ts)

    def ephemerals(
        self, *, channel: str | None = None, user: str | None = None
    ) -> list[EphemeralMessage]:
        """`chat.postEphemeral` messages, optionally only those in a channel or for a user."""
        return [
            m
            for m in self.workspace.ephemerals
            if (channel is None or m.channel == channel) and (user is None or m.user == user)
        ]

    def responses(self, hook_id: str) -> list[HookPost]:
        """The posts one response_url received, in order."""
        return self._hooks.posts(hook_id)

    @property
    def hook_posts(self) -> list[HookPost]:
        """Every response_url post, in order."""
        return self._hooks.all_posts()

    def calls_to(self, method: str) -> list[ApiCall]:
        """The recorded calls of one Web API method, in order."""
        return [c for c in self.calls if c.method == method]

    async def wait_for(
        self,
        predicate: Callable[[], T],
        *,
        timeout: float = 5.0,  # noqa: ASYNC109
    ) -> T:
        """Wait until `predicate()` is truthy (checked after every recorded change); return it.

        Raises:
            TimeoutError: not within `timeout` seconds.
        """
        return await self._changes.wait_for(predicate, timeout, "a condition")

    async def wait_for_response(
        self,
        hook_id: str,
        *,
        count: int = 1,
        timeout: float = 5.0,  # noqa: ASYNC109
    ) -> HookPost:
        """Wait for the `count`-th post to a response_url and return it.

        Raises:
            TimeoutError: fewer posts arrived within `timeout` seconds.
        """
        posts = await self._changes.wait_for(
            lambda: _at_least(self._hooks.posts(hook_id), count),
            timeout,
            f"post #{count} to response_url {hook_id}",
        )
        return posts[count - 1]

    async def wait_for_call(
        self,
        method: str,
        *,
        count: int = 1,
        timeout: float = 5.0,  # noqa: ASYNC109
    ) -> ApiCall:
        """Wait for the `count`-th call of a Web API method and return it.

        Raises:
            TimeoutError: fewer calls arrived within `timeout` seconds.
        """
        calls = await self._changes.wait_for(
            lambda: _at_least(self.calls_to(method), count),
            timeout,
            f"call #{count} of {method}",
        )
        return calls[count - 1]

    def home_view(self, user_id: str) -> dict[str, Any] | None:
        """The view last published to the user's Home tab (`views.publish`), if any."""
        return self.workspace.home_tabs.get(user_id)

    async def wait_for_home(
        self,
        user_id: str,
        *,
        count: int = 1,
        timeout: float = 5.0,  # noqa: ASYNC109
    ) -> dict[str, Any]:
        """Wait until `count` views were published to the user's Home tab; the latest one.

        Raises:
            TimeoutError: fewer within `timeout` seconds.
        """

        def published() -> list[ApiCall]:
            calls = [
                c for c in self.calls_to("views.publish") if c.params.get("user_id") == user_id
            ]
            done = [c for c in calls if c.response.get("ok")]
            return _at_least(done, count)

        await self._changes.wait_for(published, timeout, f"{count} Home view(s) for {user_id}")
        return self.workspace.home_tabs[user_id]

    async def wait_socket_connected(self, timeout: float = 5.0) -> None:  # noqa: ASYNC109
        """Wait until a Socket Mode client is connected.

        Raises:
            TimeoutError: none connected within `timeout` seconds.
        """
        await self._changes.wait_for(
            lambda: self.socket.is_connected, timeout, "a Socket Mode connection"
        )

    async def wait_for_messages(
        self,
        channel: str,
        *,
        count: int = 1,
        thread_ts: str | None = None,
        timeout: float = 5.0,  # noqa: ASYNC109
    ) -> list[PostedMessage]:
        """Wait until a channel holds `count` root messages (or thread replies, with `thread_ts`).

        Returns:
            All of them (at least `count`), oldest first.

        Raises:
            TimeoutError: fewer within `timeout` seconds.
        """

        def enough() -> list[PostedMessage]:
            found = self.thread(channel, thread_ts) if thread_ts else self.root_messages(channel)
            return _at_least(found, count)

        where = f"thread {thread_ts} in {channel}" if thread_ts else channel
        return await self._changes.wait_for(enough, timeout, f"{count} message(s) in {where}")


def _at_least(items: list[T], count: int) -> list[T]:
    """The items when there are at least `count` of them, else an empty (falsy) list."""
    return items if len(items) >= count else []
