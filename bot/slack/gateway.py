"""The outbound Slack gateway: posting, editing, finding and deleting messages, files, groups.

The only module besides the app wiring that talks to the Slack Web API. Each call is spent from
the client's budget (`bot.slack.budget`), which also meets 429s; nothing else is retried behind
the caller's back. Every other failure becomes `SlackUnavailable`, which says which of the two
remaining outcomes a write had: surely not applied (Slack answered with an error, or no
connection was made), or unknown (a timeout, a dropped connection, a 5xx: Slack may have
applied it). Group membership, each member's groups and `users.info` are cached for a minute
(`usergroups.list` and `usergroups.users.list` are Tier 2 methods).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core import errors
from bot.slack.client import SlackNotSent

log = logging.getLogger(__name__)

GROUP_CACHE_SECONDS = 60.0
GROUP_CACHE_STALE_MAX = 600.0  # while Slack cannot be read, members known this recently still count


HISTORY_PAGE = 200  # messages per conversations.history / conversations.replies page
# Answers that say the write was not applied, but that the same write will never succeed.
PERMANENT_ERRORS = frozenset(
    {"message_not_found", "cant_update_message", "cant_delete_message", "thread_not_found"}
)


class SlackUnavailable(errors.BotError):
    """Slack refused or could not be reached, after the client's own rate-limit retries.

    `ambiguous`: the request may have reached Slack (a timeout, a dropped connection, a 5xx),
    so a post may exist although no answer came back; retrying it blindly could post it twice.
    Otherwise the write surely was not applied; `error` is Slack's error code, if it gave one.
    """

    def __init__(
        self, message: str, *, ambiguous: bool = False, error: str = "", answered: bool = False
    ) -> None:
        super().__init__(message)
        self.ambiguous = ambiguous
        self.error = error
        self.answered = answered  # Slack answered (even a 5xx): nothing of it can land later

    @property
    def is_permanent(self) -> bool:
        """Not applied, and trying again cannot help (the message is gone, say)."""
        return not self.ambiguous and self.error in PERMANENT_ERRORS


EMAIL_SCOPE = "users:read.email"


@dataclass(frozen=True)
class Email:
    """A member's email as `users.info` gave it ("" when it gave none), and whether the app's
    token lacks the scope that shows it (Slack leaves `profile.email` out then, no error)."""

    address: str
    scope_missing: bool


class SlackGateway:
    """Messages and group membership, through one AsyncWebClient."""

    def __init__(self, client: AsyncWebClient, *, monotonic: Callable[[], float]) -> None:
        self._client = client
        self._monotonic = monotonic
        self._members: dict[str, tuple[float, frozenset[str]]] = {}
        self._handles: dict[str, str] = {}
        self._handles_read: float | None = None  # when usergroups.list was last read
        self._users: dict[str, tuple[float, Mapping[str, Any], str]] = {}
        self._groups_read: tuple[float, dict[str, frozenset[str]]] | None = None

    @property
    def client(self) -> AsyncWebClient:
        """The client it posts through: the Bolt app and the probes use it too (one pool)."""
        return self._client

    async def post(
        self,
        channel: str,
        message: Mapping[str, Any],
        *,
        thread_ts: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """Post a message (in a thread when `thread_ts` is given); returns its `ts`.

        `metadata` is Slack message metadata (`event_type`, `event_payload`), which
        `find_messages` returns, so a post whose answer was lost can be found.

        Raises:
            SlackUnavailable: not applied, or (`ambiguous`) unknown.
        """
        extra: dict[str, Any] = {"thread_ts": thread_ts} if thread_ts else {}
        if metadata is not None:
            extra["metadata"] = dict(metadata)
        answer = await self._call("chat_postMessage", channel=channel, **message, **extra)
        return str(answer["ts"])

    async def update(
        self,
        channel: str,
        ts: str,
        message: Mapping[str, Any],
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Replace the text and blocks of a message the bot posted (and its metadata, when
        given: it says which version of the message the edit shows).

        Raises:
            SlackUnavailable: not applied, or (`ambiguous`) unknown.
        """
        extra: dict[str, Any] = {} if metadata is None else {"metadata": dict(metadata)}
        await self._call("chat_update", channel=channel, ts=ts, **message, **extra)

    async def delete(self, channel: str, ts: str) -> None:
        """Delete a message the bot posted (a copy that lost a race).

        Raises:
            SlackUnavailable: not applied, or (`ambiguous`) unknown.
        """
        await self._call("chat_delete", channel=channel, ts=ts)

    async def upload_file(
        self, channel: str, thread_ts: str, name: str, content: str, comment: str
    ) -> str:
        """Share a text file in the thread `thread_ts` of `channel`: files.getUploadURLExternal,
        the bytes POSTed to its upload URL, files.completeUploadExternal (Slack's method pages;
        slack_sdk's `files_upload_v2`). Returns its ID. Raises SlackUnavailable."""
        answer = await self._call(
            "files_upload_v2", channel=channel, thread_ts=thread_ts, filename=name, title=name,
            content=content.encode(), initial_comment=comment,
        )  # fmt: skip
        return str((answer.get("file") or {}).get("id") or "")

    async def find_messages(
        self,
        channel: str,
        *,
        thread_ts: str | None = None,
        oldest: str | None = None,
        latest: str | None = None,
    ) -> list[Mapping[str, Any]]:
        """The channel's top-level messages newer than `oldest` (`conversations.history`), or
        one thread's messages newer than it (`conversations.replies`), and no newer than
        `latest` when given, with their metadata: every page, however many, since a partial
        answer would read as "absent".

        Raises:
            SlackUnavailable: Slack could not be read to the end.
        """
        method = "conversations_replies" if thread_ts else "conversations_history"
        params: dict[str, Any] = {
            "channel": channel,
            "limit": HISTORY_PAGE,
            "include_all_metadata": True,
        }
        params |= {"ts": thread_ts} if thread_ts else {}
        params |= {"oldest": oldest} if oldest else {}
        params |= {"latest": latest, "inclusive": True} if latest else {}
        found: list[Mapping[str, Any]] = []
        cursor, seen = "", set()
        while True:
            page = await self._call(method, cursor=cursor or None, **params)
            found.extend(page.get("messages") or [])
            cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
            if not cursor:
                return found
            if cursor in seen:  # a cursor that loops would never end: "could not read"
                raise SlackUnavailable(f"{method} returned the cursor {cursor!r} twice")
            seen.add(cursor)

    async def thread_head(self, channel: str, thread_ts: str) -> Mapping[str, Any] | None:
        """A thread's parent message as it stands now, with its metadata (one
        `conversations.replies` page of one); None when the thread is gone.

        Raises:
            SlackUnavailable: Slack could not be read.
        """
        try:
            page = await self._call(
                "conversations_replies",
                channel=channel,
                ts=thread_ts,
                limit=1,
                include_all_metadata=True,
            )
        except SlackUnavailable as e:
            if e.error == "thread_not_found":
                return None
            raise
        messages = page.get("messages") or []
        return messages[0] if messages else None

    async def newest_ts(self, channel: str) -> str:
        """The `ts` of the newest message in the channel ("" for an empty channel): a point
        on Slack's own clock that anything posted later comes after.

        Raises:
            SlackUnavailable: Slack could not be read.
        """
        page = await self._call("conversations_history", channel=channel, limit=1)
        messages = page.get("messages") or []
        return str(messages[0].get("ts") or "") if messages else ""

    async def members_of(self, groups: Iterable[str]) -> dict[str, frozenset[str]]:
        """Members of each user group (`@handle` or `S…`); unknown groups have none."""
        return {group: await self._group_members(group) for group in groups}

    async def members_now(self, groups: Iterable[str]) -> dict[str, frozenset[str]]:
        """Members of each user group, asked of Slack now (unknown groups have none), for
        checks at start that must tell "no members" from "Slack could not say".

        Raises:
            SlackUnavailable: Slack could not be asked.
        """
        members: dict[str, frozenset[str]] = {}
        for group in groups:
            group_id = await self._group_id(group)
            if group_id is None:
                members[group] = frozenset()
                continue
            answer = await self._call("usergroups_users_list", usergroup=group_id)
            members[group] = frozenset(answer.get("users") or [])
        return members

    async def resolve_mentions(self, entries: Iterable[str]) -> list[str]:
        """Each entry as `bot.slack.blocks.mention` takes it: user and group IDs as they are,
        `@handles` resolved to their group IDs (`usergroups.list`, cached). A handle that
        cannot be resolved (unknown, or Slack cannot say) stays as written, so it is shown as
        text, and is logged: a page is never held back for want of a mention."""
        resolved = []
        for entry in entries:
            try:
                group = await self._group_id(entry)
            except SlackUnavailable as e:
                log.warning("cannot resolve user group %s, mentioned as text: %s", entry, e)
                group = None
            if group is None:
                log.warning("no user group with the handle %s; mentioned as text", entry)
            resolved.append(group or entry)
        return resolved

    async def is_guest_or_deactivated(self, user_id: str) -> bool:
        """Whether Slack says the account is a guest or deactivated (`users.info`, cached).

        An account we cannot look up counts as restricted: changes fail closed.
        """
        try:
            user, _ = await self._user(user_id)
        except SlackUnavailable as e:
            log.warning("cannot look up Slack user %s: %s", user_id, e)
            return True
        return _is_restricted(user)

    async def is_guest_or_deactivated_now(self, user_id: str) -> bool:
        """As `is_guest_or_deactivated`, asked of Slack now (`users.info`, the cache renewed).

        Raises:
            SlackUnavailable: Slack could not be asked.
        """
        self._users.pop(user_id, None)
        user, _ = await self._user(user_id)
        return _is_restricted(user)

    async def email_of(self, user_id: str) -> Email:
        """The member's `profile.email` (`users.info`, cached), and whether the token's scopes
        (Slack's `x-oauth-scopes` answer header) lack `users:read.email`.

        Raises:
            SlackUnavailable: Slack could not be asked.
        """
        user, scopes = await self._user(user_id)
        address = str((user.get("profile") or {}).get("email") or "")
        listed = {scope.strip() for scope in scopes.split(",") if scope.strip()}
        return Email(address, scope_missing=bool(listed) and EMAIL_SCOPE not in listed)

    async def handles_of(self, user_id: str) -> tuple[str, ...]:
        """The handles (without `@`) of every user group the member is in, sorted: one
        `usergroups.list` with its members for everyone, cached for a minute.

        Raises:
            SlackUnavailable: Slack could not be asked.
        """
        read = self._groups_read
        if read is None or self._monotonic() - read[0] >= GROUP_CACHE_SECONDS:
            answer = await self._call("usergroups_list", include_users=True)
            groups = {
                str(group.get("handle")): frozenset(group.get("users") or [])
                for group in answer.get("usergroups") or []
                if not group.get("date_delete")
            }
            read = self._groups_read = (self._monotonic(), groups)
        return tuple(sorted(handle for handle, users in read[1].items() if user_id in users))

    async def _user(self, user_id: str) -> tuple[Mapping[str, Any], str]:
        """`users.info`'s `user` and the token's scopes as Slack listed them, cached."""
        cached = self._users.get(user_id)
        if cached is not None and self._monotonic() - cached[0] < GROUP_CACHE_SECONDS:
            return cached[1], cached[2]
        answer, headers = await self._call_with_headers("users_info", user=user_id)
        user: Mapping[str, Any] = answer.get("user") or {}
        scopes = str(headers.get("x-oauth-scopes") or headers.get("X-OAuth-Scopes") or "")
        self._users[user_id] = (self._monotonic(), user, scopes)
        return user, scopes

    async def _group_members(self, entry: str) -> frozenset[str]:
        cached = self._members.get(entry)
        if cached is not None and self._monotonic() - cached[0] < GROUP_CACHE_SECONDS:
            return cached[1]
        try:
            group_id = await self._group_id(entry)
            answer = (
                await self._call("usergroups_users_list", usergroup=group_id) if group_id else {}
            )
            members = frozenset(answer.get("users") or [])
        except SlackUnavailable as e:
            # Fail closed: nobody gains rights from a group we cannot read, and a recent answer
            # is kept only for a while (a removed operator must not keep rights forever).
            log.warning("cannot read members of user group %s: %s", entry, e)
            recent = cached is not None and self._monotonic() - cached[0] < GROUP_CACHE_STALE_MAX
            return cached[1] if cached is not None and recent else frozenset()
        self._members[entry] = (self._monotonic(), members)
        return members

    async def _group_id(self, entry: str) -> str | None:
        """The group ID of `@handle` (an ID is its own); None for an unknown handle. The
        handles are read again for an unknown one, at most once a minute (Tier 2)."""
        if not entry.startswith("@"):
            return entry
        read = self._handles_read
        fresh = read is not None and self._monotonic() - read < GROUP_CACHE_SECONDS
        if entry not in self._handles and not fresh:
            answer = await self._call("usergroups_list")
            self._handles_read = self._monotonic()
            for group in answer.get("usergroups") or []:
                self._handles["@" + str(group.get("handle"))] = str(group.get("id"))
        return self._handles.get(entry)

    async def _call(self, method: str, **params: Any) -> Mapping[str, Any]:
        return (await self._call_with_headers(method, **params))[0]

    async def _call_with_headers(
        self, method: str, **params: Any
    ) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        try:
            response = await getattr(self._client, method)(**params)
        except SlackApiError as e:
            raise _answered_with_error(method, e) from e
        except (SlackClientError, aiohttp.ClientError, OSError, TimeoutError, ValueError) as e:
            raise SlackUnavailable(
                f"Slack {method} failed: {type(e).__name__}: {e}", ambiguous=not _never_sent(e)
            ) from e
        data: Mapping[str, Any] = response.data if isinstance(response.data, dict) else {}
        headers = response.headers if isinstance(response.headers, Mapping) else {}
        return data, headers


def _answered_with_error(method: str, e: SlackApiError) -> SlackUnavailable:
    """An error answer means "not applied", except a 5xx: a proxy or Slack itself may have
    failed after the write was done."""
    status = int(getattr(e.response, "status_code", 200) or 200)
    code = str(e.response.get("error") or f"HTTP {status}")
    return SlackUnavailable(
        f"Slack {method} failed: {code}", ambiguous=status >= 500, error=code, answered=True
    )


def _never_sent(e: BaseException) -> bool:
    """Whether the request surely never reached Slack: the connection itself was refused or
    could not be made (DNS, TCP, TLS). Everything else (a timeout, a dropped connection, a
    broken answer) may have happened after Slack applied the call."""
    return isinstance(e, aiohttp.ClientConnectorError | ConnectionRefusedError | SlackNotSent)


def _is_restricted(user: Mapping[str, Any]) -> bool:
    """A guest (single- or multi-channel) or a deactivated account, as `users.info` says."""
    return any(bool(user.get(key)) for key in ("deleted", "is_restricted", "is_ultra_restricted"))
