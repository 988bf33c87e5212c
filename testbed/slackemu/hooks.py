"""response_url endpoints: issued per command or click, used at most five times, like Slack's.

An accepted post is recorded; an `in_channel` reply also lands in the channel and a
`replace_original` edits the message the button came from, so channel views stay true.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.slack.limits import check_message
from testbed.slackemu.methods import is_true
from testbed.slackemu.records import HookPost
from testbed.slackemu.workspace import MessageNotFoundError, Workspace

MAX_HOOK_USES = 5


@dataclass
class Hook:
    """One response_url and where it answers to."""

    hook_id: str
    channel_id: str | None
    message_ts: str | None
    posts: list[HookPost] = field(default_factory=list)

    @property
    def uses(self) -> int:
        """How many posts Slack would count against the five allowed."""
        return sum(1 for p in self.posts if p.accepted)


@dataclass(frozen=True)
class HookAnswer:
    """What the emulator answers a response_url post with, and what was wrong with it."""

    status: int
    text: str
    problems: tuple[str, ...] = ()


class HookRegistry:
    """Every response_url the emulator issued, with the posts each one received."""

    def __init__(self, workspace: Workspace, *, max_uses: int = MAX_HOOK_USES) -> None:
        self._workspace = workspace
        self._max_uses = max_uses
        self._hooks: dict[str, Hook] = {}

    def create(self, *, channel_id: str | None, message_ts: str | None) -> str:
        """A new hook id; posts to it reply in `channel_id` / replace `message_ts` there."""
        hook_id = secrets.token_hex(8)
        self._hooks[hook_id] = Hook(hook_id, channel_id, message_ts)
        return hook_id

    def posts(self, hook_id: str) -> list[HookPost]:
        """The posts one hook received, in order (empty for an unknown id)."""
        hook = self._hooks.get(hook_id)
        return list(hook.posts) if hook else []

    def all_posts(self) -> list[HookPost]:
        """Every post to every hook, in order."""
        return sorted((p for h in self._hooks.values() for p in h.posts), key=lambda p: p.at)

    def answer(self, hook_id: str, body: Mapping[str, Any]) -> HookAnswer:
        """Judge one post: unknown hook, used up, invalid message, or accepted (and applied)."""
        hook = self._hooks.get(hook_id)
        if hook is None:
            return HookAnswer(404, "no_service")
        if hook.uses >= self._max_uses:
            return HookAnswer(404, "used_url")
        problems = tuple(check_message(body))
        if problems:
            return HookAnswer(400, "invalid_blocks", problems)
        self._apply(hook, body)
        return HookAnswer(200, "ok")

    def record(self, post: HookPost) -> None:
        """Keep a post under its hook (posts to unknown hooks are kept under their id too)."""
        hook = self._hooks.setdefault(post.hook_id, Hook(post.hook_id, None, None))
        hook.posts.append(post)

    def _apply(self, hook: Hook, body: Mapping[str, Any]) -> None:
        if hook.channel_id is None:
            return
        text, blocks = body.get("text"), body.get("blocks")
        try:
            if is_true(body.get("replace_original")) and hook.message_ts is not None:
                self._workspace.update(hook.channel_id, hook.message_ts, text=text, blocks=blocks)
            elif body.get("response_type") == "in_channel":
                posted = self._workspace.post(
                    hook.channel_id,
                    text=str(text or ""),
                    blocks=blocks or (),
                    thread_ts=body.get("thread_ts"),
                )
                # A slash command's response_url then edits what it posted, as Slack does.
                if hook.message_ts is None:
                    hook.message_ts = posted.ts
        except MessageNotFoundError:
            # An ephemeral original is not in the channel; Slack replaces it out of our view.
            return
