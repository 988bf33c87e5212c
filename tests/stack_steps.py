"""The step and the reads of a running stack that the change tests share, written once.

`confirm` asks for a change and clicks its Confirm; `patches` are the PATCHes the simulator
recorded, `channel_texts` a channel's messages, `audit_lines` the audit log's JSON lines.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from testbed.sim.faults import RecordedRequest
from testbed.stack import DEMO_CHANNEL, Stack


async def confirm(stack: Stack, text: str) -> None:
    """Ask for the change `text` and click Confirm on the question."""
    ask = await stack.command(text)
    assert ask.message is not None, ask.text
    await stack.click("Confirm", ask.message)


def patches(stack: Stack) -> list[RecordedRequest]:
    return [r for r in stack.sim.requests if r.method == "PATCH"]


def channel_texts(stack: Stack, channel: str = DEMO_CHANNEL) -> list[str]:
    return [m.text for m in stack.slack.messages(channel)]


def audit_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "kai_chatops.audit"]
