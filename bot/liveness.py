"""Whether the service is alive (`/healthz`), decided from timestamps only: pure.

Alive means the event loop turns (a watchdog task ticks) and, in Socket Mode, the connection to
Slack has carried something (a message or a pong) recently: an open socket that receives nothing,
not even pings, is down.
"""

from __future__ import annotations

from dataclasses import dataclass

LOOP_STUCK_AFTER = 5.0  # seconds without a watchdog tick
SLACK_SILENT_AFTER = 60.0  # seconds without a frame or pong (the client pings every 10 s)


@dataclass(frozen=True)
class Signs:
    """What the service last saw, in monotonic seconds (None: never)."""

    now: float
    last_loop_tick: float
    socket_mode: bool
    slack_connected: bool
    slack_last_heard: float | None
    started: float


def problems(signs: Signs) -> list[str]:
    """Why the service should be restarted; empty when it is alive."""
    found = []
    stuck = signs.now - signs.last_loop_tick
    if stuck > LOOP_STUCK_AFTER:
        found.append(f"event loop: no watchdog tick for {stuck:.1f} s")
    if signs.socket_mode:
        heard = signs.slack_last_heard if signs.slack_last_heard is not None else signs.started
        silent = signs.now - heard
        if silent > SLACK_SILENT_AFTER:
            state = "connected" if signs.slack_connected else "disconnected"
            found.append(f"slack: socket {state} but silent for {silent:.0f} s")
    return found
