"""What the local Slack emulator remembers: frozen records of calls, messages, hooks and acks.

Plain data only. Times are `time.monotonic()` seconds, taken by the emulator when it saw the
request; Slack `ts` strings are message identities, not clocks to compute with.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

JsonObject = Mapping[str, Any]


@dataclass(frozen=True)
class ApiCall:
    """One Web API request, in arrival order, including rejected and fault-injected ones.

    `params` merges the query string and the body (form or JSON) without `token`; `blocks` and
    `attachments` sent as JSON strings in a form body are decoded. `response` is the JSON body the
    emulator answered with and `status` its HTTP status. `held`: the call was held on the wire
    (a `delay_before` fault or a `Hold`) and carried out only when let go, maybe long after its
    client gave up.
    """

    method: str
    params: JsonObject
    token: str | None
    http_method: str
    at: float
    status: int
    response: JsonObject
    faulted: bool = False
    held: bool = False

    @property
    def ok(self) -> bool:
        """Whether the emulator answered `ok: true`."""
        return bool(self.response.get("ok"))

    @property
    def rate_limited(self) -> bool:
        """Refused with a 429 for being above Slack's tier (not a test's injected fault)."""
        return self.status == 429 and not self.faulted


@dataclass(frozen=True)
class HookPost:
    """One POST to a response_url, with its JSON body and the HTTP status it got."""

    hook_id: str
    body: JsonObject
    at: float
    status: int
    connection: str = ""  # the sender's address and port: which connection the post came on

    @property
    def accepted(self) -> bool:
        """Whether the emulator answered 200 (counted, valid, not fault-injected)."""
        return self.status == 200


@dataclass(frozen=True)
class Violation:
    """A message the bot sent that breaks Slack's limits (`bot.slack.limits.check_message`).

    `source` is the API method (`chat.postMessage`, ...) or `response_url`.
    """

    source: str
    problems: tuple[str, ...]
    payload: JsonObject
    at: float


@dataclass(frozen=True)
class PostedMessage:
    """The current version of a message in a channel (edits replace it, keeping its `ts`).

    `thread_ts` is None for a root message. `edit_count` says how many `chat.update` calls (or
    response_url `replace_original` posts) changed it.
    """

    channel: str
    ts: str
    text: str
    blocks: tuple[JsonObject, ...]
    thread_ts: str | None = None
    user: str = ""
    edit_count: int = 0
    metadata: JsonObject = field(default_factory=dict)
    files: tuple[JsonObject, ...] = ()  # shared by `files.completeUploadExternal`

    @property
    def is_root(self) -> bool:
        """Whether this message starts a thread (or stands alone) rather than replying in one."""
        return self.thread_ts is None or self.thread_ts == self.ts

    def as_payload(self) -> dict[str, Any]:
        """The message as Slack embeds it in an interactivity payload's `message` field."""
        payload: dict[str, Any] = {
            "type": "message",
            "user": self.user,
            "ts": self.ts,
            "text": self.text,
            "blocks": [dict(b) for b in self.blocks],
        }
        if self.thread_ts is not None:
            payload["thread_ts"] = self.thread_ts
        if self.files:
            payload["files"] = [dict(f) for f in self.files]
        return payload


@dataclass(frozen=True)
class EphemeralMessage:
    """A `chat.postEphemeral` message: shown to one user only, never stored in the channel."""

    channel: str
    user: str
    message_ts: str
    text: str
    blocks: tuple[JsonObject, ...]
    thread_ts: str | None = None


@dataclass(frozen=True)
class SocketAck:
    """An acknowledgement frame the Socket Mode client sent back for an envelope."""

    envelope_id: str
    payload: JsonObject | None
    at: float


@dataclass(frozen=True)
class User:
    """A workspace member as `users.info` describes them."""

    id: str
    name: str
    real_name: str = ""
    is_admin: bool = False
    is_owner: bool = False
    is_bot: bool = False
    is_restricted: bool = False
    deleted: bool = False
    tz: str = "UTC"
    email: str = ""

    def as_json(self, team_id: str, *, with_email: bool = False) -> dict[str, Any]:
        """The `user` object of a `users.info` answer; `profile.email` only `with_email` (the
        token has `users:read.email`) and when the member has one, as Slack does."""
        profile = {"real_name": self.real_name or self.name, "display_name": self.name}
        if with_email and self.email:
            profile["email"] = self.email
        return {
            "id": self.id,
            "team_id": team_id,
            "name": self.name,
            "real_name": self.real_name or self.name,
            "deleted": self.deleted,
            "is_admin": self.is_admin,
            "is_owner": self.is_owner,
            "is_bot": self.is_bot,
            "is_restricted": self.is_restricted,
            "is_ultra_restricted": False,
            "tz": self.tz,
            "profile": profile,
        }


@dataclass(frozen=True)
class UserGroup:
    """A user group (`@handle`) and its members."""

    id: str
    handle: str
    members: tuple[str, ...]
    name: str = ""

    def as_json(self, team_id: str, *, include_users: bool) -> dict[str, Any]:
        """One entry of a `usergroups.list` answer."""
        group: dict[str, Any] = {
            "id": self.id,
            "team_id": team_id,
            "handle": self.handle,
            "name": self.name or self.handle,
            "is_usergroup": True,
            "date_delete": 0,
            "user_count": len(self.members),
        }
        if include_users:
            group["users"] = list(self.members)
        return group


@dataclass(frozen=True)
class Fault:
    """An injected failure for one call of a method (see `SlackEmulator.fail_next`).

    `mode` says what Slack (or a proxy in front of it) does: `answer` answers `status` with
    `error` without doing the call; `drop_before` closes the connection without doing it;
    `drop_after` does the call, then closes the connection unanswered; `delay_after` does it and
    answers after `delay` seconds (past the client's timeout); `delay_before` waits `delay`
    seconds (or until `gate` is set) and only then does and answers it (a request stuck on its
    way); `applied_error` does it and still answers `status` with `error` (a 5xx from a proxy
    after Slack applied the call).
    """

    status: int
    retry_after: int
    error: str
    mode: str = "answer"
    delay: float = 0.0
    gate: asyncio.Event | None = None

    @property
    def applies_call(self) -> bool:
        """Whether the call is carried out despite the fault."""
        return self.mode in ("drop_after", "delay_after", "delay_before", "applied_error")

    def body(self) -> dict[str, Any]:
        """The JSON body Slack sends with such a failure."""
        return {"ok": False, "error": self.error}

    def headers(self) -> dict[str, str]:
        """`Retry-After` for a 429, nothing otherwise."""
        return {"Retry-After": str(self.retry_after)} if self.status == 429 else {}
