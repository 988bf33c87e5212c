"""Narrow fakes for the alert desk's own tests: a Slack gateway that keeps what it was asked
(and fails on cue), backoff waits that only count, and the desk wired to them (the `sim` and
`store` they use are the e2e tier's defaults, `tests/e2e/conftest.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.alerts.drain import Poster
from bot.alerts.usecase import AlertDesk
from bot.config import settings as config
from bot.core.metrics import Metrics
from bot.kube.gateway import KubeGateway
from bot.slack.gateway import SlackUnavailable
from testbed.sim import Simulator, breakage

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
SETTINGS = config.parse_settings(
    {
        "clusters": [{"name": "sim"}],
        "slack": {"alert_channel": "C0ALERTS"},
        "alerts": {"hold": "60s", "repeat": "4h"},
    }
)


@dataclass
class FakeSlack:
    """Keeps posts (with their metadata) and edits; fails the next `failures` calls, each of
    which still lands when `lands` (a dropped connection after Slack applied the call)."""

    failures: int = 0
    ambiguous: bool = False  # fail as a timeout would: the post may have landed
    lands: bool = False
    posts: list[tuple[str, str, str | None]] = field(default_factory=list)
    edits: list[tuple[str, str]] = field(default_factory=list)
    stored: list[dict[str, Any]] = field(default_factory=list)

    async def post(
        self,
        channel: str,
        message: Mapping[str, Any],
        *,
        thread_ts: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        ts = f"1700000000.{len(self.stored) + 1:06d}"
        failing = self._failing()
        if not failing or self.lands:
            self.posts.append((channel, str(message["text"]), thread_ts))
            self.stored.append({"ts": ts, "thread_ts": thread_ts, "metadata": metadata})
        if failing:
            raise SlackUnavailable("Slack chat_postMessage failed", ambiguous=self.ambiguous)
        return ts

    async def update(
        self,
        channel: str,
        ts: str,
        message: Mapping[str, Any],
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        if self._failing():
            raise SlackUnavailable("Slack chat_update failed", ambiguous=self.ambiguous)
        self.edits.append((ts, str(message["text"])))
        for stored in self.stored:
            if stored["ts"] == ts and metadata is not None:
                stored["metadata"] = metadata

    async def delete(self, channel: str, ts: str) -> None:
        self.stored = [m for m in self.stored if m["ts"] != ts]

    async def find_messages(
        self,
        channel: str,
        *,
        thread_ts: str | None = None,
        oldest: str | None = None,
        latest: str | None = None,
    ) -> list[Mapping[str, Any]]:
        return [m for m in self.stored if m["thread_ts"] == thread_ts]

    async def thread_head(self, channel: str, thread_ts: str) -> Mapping[str, Any] | None:
        return next((m for m in self.stored if m["ts"] == thread_ts), None)

    async def newest_ts(self, channel: str) -> str:
        return str(self.stored[-1]["ts"]) if self.stored else ""

    def _failing(self) -> bool:
        if self.failures:
            self.failures -= 1
            return True
        return False


class Waits:
    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


def make_desk(
    store: Any,
    slack: FakeSlack,
    waits: Waits | None = None,
    metrics: Metrics | None = None,
    *,
    poster: Poster | None = None,
) -> AlertDesk:
    poster = poster or Poster("replica-test", lambda: True, lambda: T0)
    return AlertDesk(
        SETTINGS, store, slack, metrics or Metrics(), poster=poster, sleep=waits or Waits()
    )


async def fire(desk: AlertDesk, gateway: KubeGateway, sim: Simulator) -> None:
    breakage.dependencies_missing(sim)
    await desk.run_check(gateway, T0)
    await desk.run_check(gateway, T0 + timedelta(seconds=60))
