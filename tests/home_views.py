"""The Home tab's tests' views: one filled past every limit, and the readers of a rendered view.

`big_home` has every part longer than the view can show (the render and approval tests check
Slack's limits against it); `texts` and `lines` read a rendered view back as a user would.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.core.models import Finding, Health, HealthReport
from bot.home.model import AlertLine, ApprovalLine, ChangeLine, ClusterStatus, HeldObject, Home

NOW = datetime(2026, 8, 24, 12, 0, tzinfo=UTC)


def big_home(clusters: int, alerts: int, held: int, approvals: int = 0) -> Home:
    """A Home of `clusters` clusters with a dozen long findings each, and as many long lines as
    asked in the other parts; ten recent changes."""
    findings = tuple(
        Finding(f"Deployment kai-scheduler/operand-{n}", Health.DEGRADED, "0/1 available " * 16)
        for n in range(12)
    )
    return Home(
        now=NOW,
        clusters=tuple(
            ClusterStatus(f"gpu-{n:02d}", HealthReport(f"gpu-{n:02d}", findings, NOW))
            for n in range(clusters)
        ),
        alerts=tuple(
            AlertLine(f"a{n:05d}", "gpu-01", True, "Config kai-config", "x" * 200, "firing", NOW)
            for n in range(alerts)
        ),
        held=tuple(
            HeldObject("paused", "ScaledJob", "annia", f"job-{n}", "gpu-01", "U0OP", "", "r" * 300)
            for n in range(held)
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


def texts(view: dict[str, object]) -> str:
    """Every block of the view, as one string (what a test searches for words)."""
    return "\n".join(str(block) for block in view["blocks"])  # type: ignore[attr-defined]


def lines(view: Mapping[str, Any]) -> list[str]:
    """Every text on the view, block by block."""
    found = []
    for block in view["blocks"]:
        text = block.get("text") or {}
        found += str(text.get("text", "")).splitlines()
        for element in block.get("elements") or []:
            shown = element.get("text", "")
            found.append(str(shown["text"] if isinstance(shown, dict) else shown))
    return found
