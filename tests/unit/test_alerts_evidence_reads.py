"""An alert's evidence read when it fires (`bot.alerts.evidence_reads`): the read's message, or
one line saying why there is none; never an exception that would cost the page its thread."""

from __future__ import annotations

import pytest

from bot.alerts.evidence_reads import read_or_say
from bot.core import errors
from bot.slack.blocks import Message, text_message


async def test_the_reads_message_is_the_evidence() -> None:
    async def read() -> Message:
        return text_message("node gpu-node-1 now")

    assert (await read_or_say("node gpu-node-1", "prod", read))["text"] == "node gpu-node-1 now"


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (errors.KubeUnavailable("the API server did not answer"), "did not answer"),
        (KeyError("status"), "an internal error (the details are in the service log)"),
    ],
    ids=["cluster-would-not-say", "a-bug"],
)
async def test_a_failed_read_is_one_line_saying_why(
    error: Exception, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def read() -> Message:
        raise error

    message = await read_or_say("node gpu-node-1", "prod", read)

    assert "node gpu-node-1" in message["text"] and said in message["text"]
    assert "gpu-node-1 on prod" in caplog.text
