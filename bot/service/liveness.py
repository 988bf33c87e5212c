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
    """How long since the watchdog ticked, and (Socket Mode) since Slack last said anything."""

    loop_stuck_for: float
    socket_mode: bool
    slack_connected: bool
    slack_silent_for: float


def problems(
    signs: Signs,
    *,
    loop_stuck_after: float = LOOP_STUCK_AFTER,
    slack_silent_after: float = SLACK_SILENT_AFTER,
) -> list[str]:
    """Why the service should be restarted; empty when it is alive."""
    found = []
    if signs.loop_stuck_for > loop_stuck_after:
        found.append(f"event loop: no watchdog tick for {signs.loop_stuck_for:.1f} s")
    if signs.socket_mode and signs.slack_silent_for > slack_silent_after:
        state = "connected" if signs.slack_connected else "disconnected"
        found.append(f"slack: socket {state} but silent for {signs.slack_silent_for:.0f} s")
    return found
