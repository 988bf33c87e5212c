"""`/healthz` fails when the loop is stuck or the Socket Mode link to Slack has gone silent."""

from __future__ import annotations

import pytest

from bot import liveness
from bot.liveness import Signs


@pytest.mark.parametrize(
    ("signs", "expected"),
    [
        (Signs(100, 99.5, False, False, None, 0), []),
        (Signs(100, 90, False, False, None, 0), ["event loop: no watchdog tick for 10.0 s"]),
        (Signs(100, 99.5, True, True, 80, 0), []),
        (Signs(100, 99.5, True, True, 20, 0), ["slack: socket connected but silent for 80 s"]),
        (
            Signs(100, 99.5, True, False, None, 0),
            ["slack: socket disconnected but silent for 100 s"],
        ),
        (Signs(30, 29.5, True, False, None, 0), []),
    ],
    ids=[
        "http-mode-alive",
        "loop-stuck",
        "socket-heard-recently",
        "socket-open-but-silent",
        "socket-never-heard-since-start",
        "socket-still-starting",
    ],
)
def test_liveness_problems(signs: Signs, expected: list[str]) -> None:
    assert liveness.problems(signs) == expected
