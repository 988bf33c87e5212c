"""The Web API methods the emulator answers, each a function of the workspace and the params.

Answers follow Slack's shapes and error codes closely enough for slack_sdk and Bolt. Token
checks, message validation, fault injection and recording happen in the server before these run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from testbed.slackemu.records import EphemeralMessage, PostedMessage
from testbed.slackemu.workspace import MessageNotFoundError, Workspace

Params = Mapping[str, Any]
Answer = dict[str, Any]
Method = Callable[[Workspace, Params], Answer]


def is_true(value: Any) -> bool:
    """Slack's reading of a boolean param: JSON true, or "true"/"1" in a form or query."""
    return value is True or str(value).lower() in ("true", "1")


def error(code: str, **extra: Any) -> Answer:
    """A Slack error answer (`{"ok": false, "error": code}`)."""
    return {"ok": False, "error": code, **extra}


def auth_test(ws: Workspace, params: Params) -> Answer:
    """`auth.test`: who the bot token belongs to (Bolt calls this once at startup)."""
    return {
        "ok": True,
        "url": "https://emulator.slack.local/",
        "team": "Emulator",
        "user": ws.users[ws.bot_user_id].name,
        "team_id": ws.team_id,
        "user_id": ws.bot_user_id,
        "bot_id": ws.bot_id,
        "app_id": ws.app_id,
        "is_enterprise_install": False,
    }


def chat_post_message(ws: Workspace, params: Params) -> Answer:
    """`chat.postMessage`: store the message (in a thread when `thread_ts` is set)."""
    channel = str(params.get("channel") or "")
    if not channel:
        return error("channel_not_found")
    try:
        message = ws.post(
            channel,
            text=str(params.get("text") or ""),
            blocks=params.get("blocks") or (),
            thread_ts=_optional_str(params.get("thread_ts")),
            metadata=params.get("metadata"),
        )
    except MessageNotFoundError:
        return error("thread_not_found")
    body = message.as_payload() | {"bot_id": ws.bot_id, "app_id": ws.app_id}
    return {"ok": True, "channel": channel, "ts": message.ts, "message": body}


def chat_update(ws: Workspace, params: Params) -> Answer:
    """`chat.update`: edit a stored message; omitted `text`/`blocks`/`metadata` keep their old
    value, given `metadata` replaces the message's."""
    channel, ts = str(params.get("channel") or ""), str(params.get("ts") or "")
    try:
        message = ws.update(
            channel,
            ts,
            text=_optional_str(params.get("text")),
            blocks=params.get("blocks"),
            metadata=params.get("metadata") or None,
        )
    except MessageNotFoundError:
        return error("message_not_found")
    body = message.as_payload() | {"bot_id": ws.bot_id, "edited": {"user": ws.bot_user_id}}
    return {"ok": True, "channel": channel, "ts": ts, "text": message.text, "message": body}


def chat_delete(ws: Workspace, params: Params) -> Answer:
    """`chat.delete`: remove a message the bot posted."""
    channel, ts = str(params.get("channel") or ""), str(params.get("ts") or "")
    try:
        ws.delete(channel, ts)
    except MessageNotFoundError:
        return error("message_not_found")
    return {"ok": True, "channel": channel, "ts": ts}


def conversations_history(ws: Workspace, params: Params) -> Answer:
    """`conversations.history`: the channel's top-level messages, newest first, between
    `oldest` and `latest` (exclusive unless `inclusive`), paged by `limit` and `cursor`;
    message metadata only with `include_all_metadata`, as Slack does."""
    channel = str(params.get("channel") or "")
    if not channel:
        return error("channel_not_found")
    messages = [m for m in reversed(ws.root_messages(channel)) if _in_window(m.ts, params)]
    return _page(messages, params)


def conversations_replies(ws: Workspace, params: Params) -> Answer:
    """`conversations.replies`: one thread, its parent first then the replies oldest first,
    paged like `conversations.history`."""
    channel, ts = str(params.get("channel") or ""), str(params.get("ts") or "")
    try:
        parent = ws.get_message(channel, ts)
    except MessageNotFoundError:
        return error("thread_not_found")
    thread = [parent, *ws.thread(channel, parent.thread_ts or parent.ts)]
    return _page([m for m in thread if _in_window(m.ts, params)], params)


def _in_window(ts: str, params: Params) -> bool:
    inclusive = is_true(params.get("inclusive"))
    value = float(ts)
    oldest, latest = params.get("oldest"), params.get("latest")
    if oldest not in (None, "") and (
        value < float(oldest) or (value == float(oldest) and not inclusive)
    ):
        return False
    return latest in (None, "") or value < float(latest) or (value == float(latest) and inclusive)


def _page(messages: list[PostedMessage], params: Params) -> Answer:
    limit = max(1, min(int(params.get("limit") or 100), 999))
    start = int(params.get("cursor") or 0)
    page = messages[start : start + limit]
    with_metadata = is_true(params.get("include_all_metadata"))
    more = start + limit < len(messages)
    return {
        "ok": True,
        "messages": [_listed(m, with_metadata) for m in page],
        "has_more": more,
        "response_metadata": {"next_cursor": str(start + limit) if more else ""},
    }


def _listed(message: PostedMessage, with_metadata: bool) -> dict[str, Any]:
    listed = message.as_payload()
    if with_metadata and message.metadata:
        listed["metadata"] = dict(message.metadata)
    return listed


def chat_post_ephemeral(ws: Workspace, params: Params) -> Answer:
    """`chat.postEphemeral`: remember a message only `user` sees; it is not in the channel."""
    channel, user = str(params.get("channel") or ""), str(params.get("user") or "")
    if not channel:
        return error("channel_not_found")
    if not user:
        return error("user_not_found")
    message = EphemeralMessage(
        channel=channel,
        user=user,
        message_ts=ws.next_ts(),
        text=str(params.get("text") or ""),
        blocks=tuple(params.get("blocks") or ()),
        thread_ts=_optional_str(params.get("thread_ts")),
    )
    ws.ephemerals.append(message)
    return {"ok": True, "message_ts": message.message_ts}


def users_info(ws: Workspace, params: Params) -> Answer:
    """`users.info`: one member's profile and flags (`is_admin`, `deleted`, ...)."""
    user = ws.users.get(str(params.get("user") or ""))
    if user is None:
        return error("user_not_found")
    with_email = "users:read.email" in ws.scopes
    return {"ok": True, "user": user.as_json(ws.team_id, with_email=with_email)}


def usergroups_list(ws: Workspace, params: Params) -> Answer:
    """`usergroups.list`: every group, so handles like `@platform-oncall` map to ids."""
    include_users = is_true(params.get("include_users"))
    groups = [g.as_json(ws.team_id, include_users=include_users) for g in ws.usergroups.values()]
    return {"ok": True, "usergroups": groups}


def usergroups_users_list(ws: Workspace, params: Params) -> Answer:
    """`usergroups.users.list`: the member ids of one group."""
    group = ws.usergroups.get(str(params.get("usergroup") or ""))
    if group is None:
        return error("no_such_subteam")
    return {"ok": True, "users": list(group.members)}


def _optional_str(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


METHODS: dict[str, Method] = {
    "auth.test": auth_test,
    "chat.postMessage": chat_post_message,
    "chat.update": chat_update,
    "chat.delete": chat_delete,
    "chat.postEphemeral": chat_post_ephemeral,
    "conversations.history": conversations_history,
    "conversations.replies": conversations_replies,
    "users.info": users_info,
    "usergroups.list": usergroups_list,
    "usergroups.users.list": usergroups_users_list,
}

MESSAGE_METHODS = frozenset({"chat.postMessage", "chat.update", "chat.postEphemeral"})
"""Methods whose params are a message that `check_message` validates."""
