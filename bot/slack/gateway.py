"""The outbound Slack gateway: posting and editing messages, and user-group membership.

The only module besides the app wiring that talks to the Slack Web API. 429s are retried by the
client's rate-limit handler (after `Retry-After`); other failures become `SlackUnavailable`.
Group membership is cached for a minute because `usergroups.users.list` is a Tier 2 method.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core import errors

log = logging.getLogger(__name__)

GROUP_CACHE_SECONDS = 60.0
GROUP_CACHE_STALE_MAX = 600.0  # while Slack cannot be read, members known this recently still count


class SlackUnavailable(errors.BotError):
    """Slack refused or could not be reached, after the client's own retries.

    `ambiguous`: the request may have reached Slack (a timeout, a dropped connection), so a
    post may exist although no answer came back; retrying it could post it twice.
    """

    def __init__(self, message: str, *, ambiguous: bool = False) -> None:
        super().__init__(message)
        self.ambiguous = ambiguous


class SlackGateway:
    """Messages and group membership, through one AsyncWebClient."""

    def __init__(self, client: AsyncWebClient, *, monotonic: Callable[[], float]) -> None:
        self._client = client
        self._monotonic = monotonic
        self._members: dict[str, tuple[float, frozenset[str]]] = {}
        self._handles: dict[str, str] = {}
        self._restricted: dict[str, tuple[float, bool]] = {}

    async def post(
        self, channel: str, message: Mapping[str, Any], *, thread_ts: str | None = None
    ) -> str:
        """Post a message (in a thread when `thread_ts` is given); returns its `ts`."""
        extra = {"thread_ts": thread_ts} if thread_ts else {}
        answer = await self._call("chat_postMessage", channel=channel, **message, **extra)
        return str(answer["ts"])

    async def update(self, channel: str, ts: str, message: Mapping[str, Any]) -> None:
        """Replace the text and blocks of a message the bot posted."""
        await self._call("chat_update", channel=channel, ts=ts, **message)

    async def members_of(self, groups: Iterable[str]) -> dict[str, frozenset[str]]:
        """Members of each user group (`@handle` or `S…`); unknown groups have none."""
        return {group: await self._group_members(group) for group in groups}

    async def is_guest_or_deactivated(self, user_id: str) -> bool:
        """Whether Slack says the account is a guest or deactivated (`users.info`, cached).

        An account we cannot look up counts as restricted: changes fail closed.
        """
        cached = self._restricted.get(user_id)
        if cached is not None and self._monotonic() - cached[0] < GROUP_CACHE_SECONDS:
            return cached[1]
        try:
            user = (await self._call("users_info", user=user_id)).get("user") or {}
        except SlackUnavailable as e:
            log.warning("cannot look up Slack user %s: %s", user_id, e)
            return True
        keys = ("deleted", "is_restricted", "is_ultra_restricted")
        restricted = any(bool(user.get(key)) for key in keys)
        self._restricted[user_id] = (self._monotonic(), restricted)
        return restricted

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
        if not entry.startswith("@"):
            return entry
        if entry not in self._handles:
            answer = await self._call("usergroups_list")
            for group in answer.get("usergroups") or []:
                self._handles["@" + str(group.get("handle"))] = str(group.get("id"))
        return self._handles.get(entry)

    async def _call(self, method: str, **params: Any) -> Mapping[str, Any]:
        try:
            response = await getattr(self._client, method)(**params)
        except SlackApiError as e:
            raise SlackUnavailable(f"Slack {method} failed: {e.response.get('error')}") from e
        except (SlackClientError, OSError, TimeoutError) as e:
            never_sent = type(e).__name__ in ("ClientConnectorError", "ConnectionRefusedError")
            raise SlackUnavailable(
                f"Slack {method} failed: {type(e).__name__}: {e}", ambiguous=not never_sent
            ) from e
        data: Mapping[str, Any] = response.data if isinstance(response.data, dict) else {}
        return data
