"""The service's clocks, moved by the test: time passes only when the test says so.

The `clock` fixture (tests/conftest.py) starts at `START`, a fixed instant the tests' texts and due
times are written against; a module marked `pytest.mark.clock_start(T0)` starts it at its own T0.
A module whose simulator stamps objects with the real time (the alert checks compare those stamps
with the clock) marks itself `pytest.mark.clock_from_now`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

START = datetime(2026, 8, 24, 8, 0, tzinfo=UTC)


class Clock:
    """The service's wall clock (call it) and its monotonic clock (`monotonic`, from 0); `advance`
    moves both on, `at` sets both, `step` moves only the wall clock (NTP correcting it, say)."""

    def __init__(self, start: datetime | None = None) -> None:
        self.start = datetime.now(UTC) if start is None else start
        self.now = self.start
        self.ticks = 0.0

    def __call__(self) -> datetime:
        return self.now

    def monotonic(self) -> float:
        return self.ticks

    def advance(self, by: timedelta | float) -> None:
        """Move both clocks on by `by` (a timedelta, or seconds)."""
        seconds = by.total_seconds() if isinstance(by, timedelta) else by
        self.now += timedelta(seconds=seconds)
        self.ticks += seconds

    def at(self, seconds: float) -> datetime:
        """Set both clocks `seconds` past the start; the wall time then."""
        self.ticks = seconds
        self.now = self.start + timedelta(seconds=seconds)
        return self.now

    def step(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
