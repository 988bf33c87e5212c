"""The App Home in the emulator: `views.publish` keeps each user's Home tab, as Slack does.

`views.publish` (docs.slack.dev/reference/methods/views.publish) takes `user_id` and a `view`
(a JSON object, or a JSON string in a form body) and an optional `hash`; it answers the stored
view with its `id` and a new `hash`, `user_not_found`, `hash_conflict` for a stale hash, and
`view_too_large` past 250 kB. The view's limits are checked by the server before this runs.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from bot.slack.limits import MAX_VIEW_BYTES
from testbed.slackemu.methods import Answer, Params, error
from testbed.slackemu.workspace import Workspace

_NUMBERS = itertools.count(1)


def views_publish(ws: Workspace, params: Params) -> Answer:
    """`views.publish`: store the view as the user's Home tab (replacing the last one)."""
    user_id = str(params.get("user_id") or "")
    view = params.get("view")
    if not user_id or not isinstance(view, dict):
        missing = "user_id" if not user_id else "view"
        return error("invalid_arguments", response_metadata={"messages": [f"missing {missing}"]})
    if user_id not in ws.users:
        return error("user_not_found")
    if len(json.dumps(view)) > MAX_VIEW_BYTES:
        return error("view_too_large")
    current = ws.home_tabs.get(user_id)
    given_hash = params.get("hash")
    if given_hash and current is not None and current["hash"] != given_hash:
        return error("hash_conflict")
    number = next(_NUMBERS)
    view_id = current["id"] if current is not None else f"V{number:08d}"
    stored: dict[str, Any] = {
        **view,
        "id": view_id,
        "team_id": ws.team_id,
        "app_id": ws.app_id,
        "bot_id": ws.bot_id,
        "hash": f"{ws.next_ts()}.{number}",
        "state": {"values": {}},
        "root_view_id": view_id,
        "previous_view_id": None,
        "private_metadata": view.get("private_metadata", ""),
        "callback_id": view.get("callback_id", ""),
        "external_id": view.get("external_id", ""),
    }
    ws.home_tabs[user_id] = stored
    return {"ok": True, "view": stored}
