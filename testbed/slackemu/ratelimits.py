"""Slack's rate-limit tiers, enforced by the emulator as Slack enforces them.

Each method has an allowance per minute (`bot.slack.tiers`), per workspace; `chat.postMessage`
one per channel. A call above it is answered HTTP 429 `{"ok": false, "error": "ratelimited"}`
with `Retry-After` (whole seconds until the oldest call in the window leaves it) and is not
carried out. The window is a sliding minute on the emulator's monotonic clock, so a burst is
tolerated up to the allowance and never more.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.slack import tiers

Key = tuple[str, str]  # (method, channel or "")


@dataclass
class RateLimits:
    """The windows of every method (and channel, for posts); `allowance` overrides a method's
    calls per minute (a test of the limits themselves may make them small)."""

    clock: Callable[[], float]
    allowance: Mapping[str, int] = field(default_factory=dict)
    window: float = tiers.WINDOW_SECONDS
    _calls: dict[Key, deque[float]] = field(default_factory=dict)
    refused: int = 0

    def admit(self, method: str, params: Mapping[str, Any]) -> int | None:
        """Count the call if it is within its allowance (None); else the seconds to put in
        `Retry-After`, and the call is not counted."""
        key, limit = self._limit(method, params)
        if limit is None:
            return None
        now = self.clock()
        calls = self._calls.setdefault(key, deque())
        while calls and calls[0] <= now - self.window:
            calls.popleft()
        if len(calls) < limit:
            calls.append(now)
            return None
        self.refused += 1
        return max(1, math.ceil(calls[0] + self.window - now))

    def _limit(self, method: str, params: Mapping[str, Any]) -> tuple[Key, int | None]:
        if method == tiers.POST_METHOD:
            limit = self.allowance.get(method, tiers.POSTS_PER_CHANNEL_PER_MINUTE)
            return (method, str(params.get("channel") or "")), limit
        return (method, ""), self.allowance.get(method, tiers.tolerated(method))
