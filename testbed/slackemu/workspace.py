"""The emulated workspace's state: users, user groups, and the messages in each channel.

No HTTP here; `methods.py` reads and changes this state for Web API calls and the server for
response_url posts. Message `ts` values are unique and strictly increasing.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from testbed.slackemu.records import EphemeralMessage, PostedMessage, User, UserGroup


class MessageNotFoundError(LookupError):
    """No message with that `ts` in that channel."""


# What deploy/slack-app-manifest.yaml asks for (not `users:read.email`: only
# `access.impersonate: email` needs it).
BOT_SCOPES = frozenset(
    {"commands", "chat:write", "channels:history", "groups:history"}
    | {"usergroups:read", "users:read", "files:write"}
)


class Workspace:
    """One Slack workspace with one bot user, as the emulator's Web API sees it."""

    def __init__(
        self,
        *,
        team_id: str,
        bot_user_id: str,
        bot_id: str,
        app_id: str,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.team_id = team_id
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.app_id = app_id
        self.users: dict[str, User] = {bot_user_id: User(bot_user_id, "kai", is_bot=True)}
        # The bot token's scopes, listed in every answer's `x-oauth-scopes` header, as Slack
        # does; `users:read.email` decides whether `users.info` shows emails.
        self.scopes: set[str] = set(BOT_SCOPES)
        self.usergroups: dict[str, UserGroup] = {}
        self.ephemerals: list[EphemeralMessage] = []
        self.home_tabs: dict[str, dict[str, Any]] = {}  # user ID -> their Home tab's view
        self._channels: dict[str, dict[str, PostedMessage]] = {}
        self._wall_clock = wall_clock
        # Slack's clock against the service's: `ts` is the wall clock plus this (hours off, say).
        self.clock_offset = timedelta(0)
        self._last_ts_micros = 0

    def next_ts(self) -> str:
        """A fresh message `ts` ("1700000000.000100" style): Slack's clock (the wall clock plus
        `clock_offset`), never repeated and strictly increasing, as Slack's are per channel."""
        now = self._wall_clock() + self.clock_offset.total_seconds()
        micros = max(int(now * 1_000_000), self._last_ts_micros + 1)
        self._last_ts_micros = micros
        return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"

    def add_user(self, user: User) -> None:
        """Add or replace a member."""
        self.users[user.id] = user

    def add_usergroup(self, group: UserGroup) -> None:
        """Add or replace a user group."""
        self.usergroups[group.id] = group

    def find_usergroup(self, handle: str) -> UserGroup | None:
        """The group with this handle (with or without a leading `@`), if any."""
        wanted = handle.removeprefix("@")
        return next((g for g in self.usergroups.values() if g.handle == wanted), None)

    def post(
        self,
        channel: str,
        *,
        text: str,
        blocks: Sequence[Mapping[str, Any]] = (),
        thread_ts: str | None = None,
        user: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        files: Sequence[Mapping[str, Any]] = (),
    ) -> PostedMessage:
        """Store a new message in `channel` (sharing `files`) and return it.

        Raises:
            MessageNotFoundError: `thread_ts` names no message in the channel.
        """
        if thread_ts is not None:
            thread_ts = self.get_message(channel, thread_ts).thread_ts or thread_ts
        message = PostedMessage(
            channel=channel,
            ts=self.next_ts(),
            text=text,
            blocks=tuple(blocks),
            thread_ts=thread_ts,
            user=user or self.bot_user_id,
            metadata=dict(metadata or {}),
            files=tuple(files),
        )
        self._channels.setdefault(channel, {})[message.ts] = message
        return message

    def update(
        self,
        channel: str,
        ts: str,
        *,
        text: str | None,
        blocks: Sequence[Mapping[str, Any]] | None,
        metadata: Mapping[str, Any] | None = None,
    ) -> PostedMessage:
        """Edit a stored message; a `None` field keeps its old value, as `chat.update` does
        (given `metadata` replaces the old metadata; omitted, it stays).

        Raises:
            MessageNotFoundError: no such message.
        """
        old = self.get_message(channel, ts)
        new = dataclasses.replace(
            old,
            text=old.text if text is None else text,
            blocks=old.blocks if blocks is None else tuple(blocks),
            metadata=old.metadata if metadata is None else dict(metadata),
            edit_count=old.edit_count + 1,
        )
        self._channels[channel][ts] = new
        return new

    def delete(self, channel: str, ts: str) -> None:
        """Remove a message (as `chat.delete`); its replies, if any, stay.

        Raises:
            MessageNotFoundError: no such message.
        """
        self.get_message(channel, ts)
        del self._channels[channel][ts]

    def get_message(self, channel: str, ts: str) -> PostedMessage:
        """The current version of one message.

        Raises:
            MessageNotFoundError: no such message.
        """
        try:
            return self._channels[channel][ts]
        except KeyError:
            raise MessageNotFoundError(f"no message {ts} in {channel}") from None

    def flood(
        self, channel: str, count: int, *, thread_ts: str | None = None, user: str
    ) -> list[PostedMessage]:
        """`count` plain messages from `user` at once (in `thread_ts`'s thread when given).

        Raises:
            MessageNotFoundError: `thread_ts` names no message in the channel.
        """
        return [
            self.post(channel, text=f"noise {n}", thread_ts=thread_ts, user=user)
            for n in range(count)
        ]

    def messages(self, channel: str) -> list[PostedMessage]:
        """Every message in the channel, roots and replies, oldest first."""
        # Stored in ts order already (ts strictly increase; an edit keeps its slot).
        return list(self._channels.get(channel, {}).values())

    def root_messages(self, channel: str) -> list[PostedMessage]:
        """The channel's top-level messages, oldest first."""
        return [m for m in self.messages(channel) if m.is_root]

    def thread(self, channel: str, thread_ts: str) -> list[PostedMessage]:
        """The replies under one root message, oldest first (the root itself excluded)."""
        return [m for m in self.messages(channel) if m.thread_ts == thread_ts and m.ts != thread_ts]

    def channels(self) -> list[str]:
        """The channels that hold at least one message."""
        return list(self._channels)
