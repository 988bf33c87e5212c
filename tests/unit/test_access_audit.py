"""The audit record: one JSON line per action, and where its announcement is posted."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.access import audit
from bot.core import errors
from bot.slack.gateway import SlackUnavailable

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
CHANGE = audit.Change(
    "U1", "pause", "ScaledJob annia/w on prod", "ok", T0, "drain", {"until": "x"}, note="done"
)


@dataclass
class Channels:
    """Posts by channel; posting in `refuse` fails as Slack would (not_in_channel)."""

    refuse: set[str] = field(default_factory=set)
    posts: list[tuple[str, str]] = field(default_factory=list)

    async def post(
        self, channel: str, message: Mapping[str, Any], *, thread_ts: str | None = None
    ) -> str:
        if channel in self.refuse:
            raise SlackUnavailable("Slack chat_postMessage failed: not_in_channel")
        self.posts.append((channel, str(message["text"])))
        return "1.0"


def test_the_line_is_the_whole_record_as_json_with_its_fields_on_the_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    audit.log_change(CHANGE)
    [record] = caplog.records
    assert record.getMessage() == CHANGE.log_line()
    assert list(json.loads(record.getMessage())) == sorted(json.loads(record.getMessage()))
    assert json.loads(record.getMessage()) == {
        "event": "change", "user": "U1", "action": "pause", "target": "ScaledJob annia/w on prod",
        "outcome": "ok", "at": "2026-03-01T10:00:00+00:00", "reason": "drain",
        "details": {"until": "x"}, "note": "done",
    }  # fmt: skip
    fields = {k: record.__dict__[k] for k in ("user", "command", "object", "outcome")}
    assert fields == {
        "user": "U1", "command": "pause", "object": "ScaledJob annia/w on prod", "outcome": "ok",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("channel", "refuse", "expected"),
    [
        ("C0TEAM", set(), ["C0TEAM"]),
        ("D0DIRECT", set(), ["D0DIRECT", "C0ALERTS"]),
        ("C0TEAM", {"C0TEAM"}, ["C0ALERTS"]),
        ("C0ALERTS", set(), ["C0ALERTS"]),
        ("", set(), []),
    ],
    ids=["channel", "direct message", "bot not in channel", "alert channel itself", "nowhere"],
)
async def test_the_announcement_goes_to_the_channel_and_the_alert_channel_when_needed(
    channel: str, refuse: set[str], expected: list[str]
) -> None:
    slack = Channels(refuse)
    gateway: Any = slack
    await audit.record(
        CHANGE, slack=gateway, channel=channel, text="paused", alert_channel="C0ALERTS"
    )
    assert [where for where, _ in slack.posts] == expected
    assert all(text == "paused" for _, text in slack.posts)


async def test_without_slack_the_line_is_still_written(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    await audit.record(CHANGE, slack=None, channel="C0TEAM", text="paused")
    assert len(caplog.records) == 1


async def test_a_post_refused_everywhere_is_logged_never_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    slack = Channels({"D0DIRECT", "C0ALERTS"})
    gateway: Any = slack
    await audit.announce("paused", slack=gateway, channel="D0DIRECT", alert_channel="C0ALERTS")
    assert slack.posts == []
    assert [r.getMessage() for r in caplog.records] == [
        f"could not post a change's announcement in {where}: "
        "Slack chat_postMessage failed: not_in_channel"
        for where in ("D0DIRECT", "C0ALERTS")
    ]


async def test_with_no_alert_channel_a_direct_message_is_announced_there_alone() -> None:
    slack = Channels()
    gateway: Any = slack
    await audit.record(CHANGE, slack=gateway, channel="D0DIRECT", text="paused")
    await audit.announce("resumed", slack=gateway, channel="D0DIRECT")
    assert slack.posts == [("D0DIRECT", "paused"), ("D0DIRECT", "resumed")]


def test_direct_messages_are_channels_whose_id_starts_with_d() -> None:
    assert audit.is_direct_message("D0123")
    assert not audit.is_direct_message("C0123") and not audit.is_direct_message("G0123")


@pytest.mark.parametrize(
    ("error", "outcome", "posts"),
    [
        pytest.param(errors.KubeForbidden("cannot patch scaledjobs"), "failed", [], id="refused"),
        pytest.param(
            errors.KubeWriteUnknown("no answer within 5s"),
            "unknown",
            [
                (
                    "C0TEAM",
                    "kai-chatops asked to pause ScaledJob annia/w on prod (by hand &lt;here&gt;); "
                    "the cluster did not answer in time, so it may or may not have been done. "
                    "Check the object.",
                )
            ],
            id="no-answer",
        ),
    ],
)
async def test_an_action_that_raised_is_one_line_and_said_only_when_it_may_have_been_done(
    caplog: pytest.LogCaptureFixture,
    error: errors.KubeError,
    outcome: str,
    posts: list[tuple[str, str]],
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    slack = Channels()
    gateway: Any = slack

    await audit.record_error(
        CHANGE, error, who="kai-chatops", why=" (by hand <here>)", slack=gateway, channel="C0TEAM"
    )

    [line] = [json.loads(r.getMessage()) for r in caplog.records]
    assert (line["action"], line["outcome"], line["note"]) == ("pause", outcome, str(error))
    assert slack.posts == posts
