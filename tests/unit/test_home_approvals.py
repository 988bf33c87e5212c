"""The Home tab's changes waiting for approval: shown only when something waits, and within the
view's limits however many wait, beside every other part at its fullest."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.models import Finding, Health, HealthReport
from bot.home.model import AlertLine, ApprovalLine, ChangeLine, ClusterStatus, HeldObject, Home
from bot.home.render import home_view
from bot.slack import limits

NOW = datetime(2026, 8, 24, 12, 0, tzinfo=UTC)


def texts(view: dict[str, object]) -> str:
    return "\n".join(str(block) for block in view["blocks"])  # type: ignore[attr-defined]


def full_home(approvals: int) -> Home:
    findings = tuple(
        Finding(f"Deployment kai-scheduler/operand-{n}", Health.DEGRADED, "0/1 available " * 16)
        for n in range(12)
    )
    return Home(
        now=NOW,
        clusters=tuple(
            ClusterStatus(f"gpu-{n:02d}", HealthReport(f"gpu-{n:02d}", findings, NOW))
            for n in range(50)
        ),
        alerts=tuple(
            AlertLine(f"a{n:05d}", "gpu-01", True, "Config kai-config", "x" * 200, "firing", NOW)
            for n in range(300)
        ),
        held=tuple(
            HeldObject("paused", "ScaledJob", "annia", f"job-{n}", "gpu-01", "U0OP", "", "r" * 300)
            for n in range(400)
        ),
        changes=tuple(
            ChangeLine(NOW - timedelta(minutes=n), "U0OP", "pause", f"ScaledJob annia/j{n}", "ok")
            for n in range(10)
        ),
        approvals=tuple(
            ApprovalLine(f"ID{n:06d}", "U0OP", "pause ScaledJob annia/" + "j" * 200, NOW)
            for n in range(approvals)
        ),
    )


def test_hundreds_waiting_beside_every_full_part_stay_within_the_view_limits() -> None:
    view = home_view(full_home(approvals=300), "/kai")

    assert limits.check_view(view) == []
    text = texts(view)
    assert "Waiting for approval (300)" in text and "`ID000000`" in text
    assert text.count("more not shown here") == 4  # findings, alerts, approvals, pauses
    assert "ScaledJob annia/j9" in text  # the last part, recent changes, is not cut off


def test_nothing_waiting_shows_no_approval_part() -> None:
    assert "Waiting for approval" not in texts(home_view(full_home(approvals=0), "/kai"))
