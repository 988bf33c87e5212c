"""`/healthz` fails when the loop is stuck or the Socket Mode link to Slack has gone silent."""

from __future__ import annotations

import pytest

from bot.service import liveness
from bot.service.liveness import Signs


@pytest.mark.parametrize(
    ("signs", "expected"),
    [
        (Signs(0.5, False, False, 1000), []),
        (Signs(10, False, False, 0), ["event loop: no watchdog tick for 10.0 s"]),
        (Signs(0.5, True, True, 20), []),
        (Signs(0.5, True, True, 80), ["slack: socket connected but silent for 80 s"]),
        (Signs(0.5, True, False, 100), ["slack: socket disconnected but silent for 100 s"]),
    ],
    ids=[
        "http-mode-alive",
        "loop-stuck",
        "socket-heard-recently",
        "socket-open-but-silent",
        "socket-down",
    ],
)
def test_liveness_problems(signs: Signs, expected: list[str]) -> None:
    assert liveness.problems(signs) == expected
