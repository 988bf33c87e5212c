"""Argo CD sync windows: which apply to an app, which are open, and whether a manual sync may
run now (argo-cd pkg/apis/application/v1alpha1/types.go `Matches`, `active`, `CanSync`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.gitops import windows
from bot.gitops.windows import SyncWindow

# Wednesday 2 December 2026, 23:30 UTC (00:30 Thursday in Berlin, UTC+1 in winter)
NOW = datetime(2026, 12, 2, 23, 30, tzinfo=UTC)
NIGHTLY_DENY = SyncWindow("deny", "0 22 * * *", "8h", applications=("*",))
MORNING_ALLOW = SyncWindow("allow", "0 9 * * *", "2h", applications=("*",))


def app(name: str = "kai-scheduler", **destination: str) -> dict[str, Any]:
    where = {"server": "https://kubernetes.default.svc", "namespace": "kai-scheduler"}
    return {"metadata": {"name": name}, "spec": {"destination": {**where, **destination}}}


@pytest.mark.parametrize(
    ("window", "now", "active"),
    [
        (NIGHTLY_DENY, NOW, True),
        (NIGHTLY_DENY, NOW.replace(hour=21, minute=59), False),
        (NIGHTLY_DENY, NOW + timedelta(hours=6, minutes=29), True),
        (NIGHTLY_DENY, NOW.replace(hour=22, minute=0), False),  # opens strictly after 22:00
        (NIGHTLY_DENY, NOW + timedelta(hours=8, minutes=30), False),  # closed at 06:00
        (SyncWindow("deny", "0 0 * * *", "1h", time_zone="Europe/Berlin"), NOW, True),
        (SyncWindow("deny", "0 0 * * *", "1h", time_zone="Nowhere/Else"), NOW, False),
        (SyncWindow("deny", "0 22 * * 1-5", "8h"), NOW, True),
        (SyncWindow("deny", "0 22 * * 0,6", "8h"), NOW, False),
    ],
    ids=[
        "inside",
        "before-start",
        "one-minute-before-end",
        "at-the-start-minute",
        "after-end",
        "time-zone-shifts-the-schedule",
        "unknown-time-zone-is-utc",
        "weekday-matches",
        "weekend-only",
    ],
)
def test_a_window_is_open_from_its_schedule_for_its_duration(
    window: SyncWindow, now: datetime, active: bool
) -> None:
    assert windows.is_active(window, now) is active


@pytest.mark.parametrize(
    ("window", "matches"),
    [
        (SyncWindow("deny", "* * * * *", "1h", applications=("kai-*",)), True),
        (SyncWindow("deny", "* * * * *", "1h", applications=("keda",)), False),
        (SyncWindow("deny", "* * * * *", "1h", namespaces=("kai-*",)), True),
        (SyncWindow("deny", "* * * * *", "1h", clusters=("https://kubernetes.*",)), True),
        (
            SyncWindow("deny", "* * * * *", "1h", applications=("keda",), namespaces=("kai-*",)),
            True,
        ),
        (
            SyncWindow(
                "deny",
                "* * * * *",
                "1h",
                applications=("keda",),
                namespaces=("kai-*",),
                and_operator=True,
            ),
            False,
        ),
        (SyncWindow("deny", "* * * * *", "1h"), False),
    ],
    ids=[
        "app-glob",
        "other-app",
        "namespace",
        "cluster-server",
        "or-of-sets",
        "and-of-sets",
        "none-set",
    ],
)
def test_a_window_applies_by_application_namespace_or_cluster(
    window: SyncWindow, matches: bool
) -> None:
    assert windows.matching([window], app()) == ((window,) if matches else ())


@pytest.mark.parametrize(
    ("given", "allowed", "blocking"),
    [
        ([], True, ()),
        ([NIGHTLY_DENY], False, (NIGHTLY_DENY,)),
        ([SyncWindow("deny", "0 22 * * *", "8h", applications=("*",), manual_sync=True)], True, ()),
        ([MORNING_ALLOW], False, (MORNING_ALLOW,)),
        ([SyncWindow("allow", "0 9 * * *", "2h", applications=("*",), manual_sync=True)], True, ()),
        ([SyncWindow("allow", "0 23 * * *", "1h", applications=("*",))], True, ()),
        (
            [NIGHTLY_DENY, SyncWindow("allow", "0 23 * * *", "1h", applications=("*",))],
            False,
            (NIGHTLY_DENY,),
        ),
        ([SyncWindow("deny", "0 22 * * *", "8h", applications=("keda",))], True, ()),
    ],
    ids=[
        "no-windows",
        "active-deny",
        "active-deny-with-manual-sync",
        "no-allow-active",
        "inactive-allow-with-manual-sync",
        "active-allow",
        "deny-wins-over-allow",
        "deny-for-another-app",
    ],
)
def test_a_manual_sync_is_refused_by_the_windows_argo_cd_would_refuse_it_by(
    given: list[SyncWindow], allowed: bool, blocking: tuple[SyncWindow, ...]
) -> None:
    verdict = windows.check_manual_sync(given, app(), NOW)

    assert (verdict.allowed, verdict.blocking) == (allowed, blocking)


def test_the_refusal_is_argo_cds_and_names_the_window() -> None:
    frozen = SyncWindow("deny", "0 22 * * *", "8h", ("*",), time_zone="UTC", description="freeze")

    reason = windows.check_manual_sync([frozen], app(), NOW).reason()

    assert reason == 'cannot sync: blocked by sync window (deny "0 22 * * *" for 8h (UTC): freeze)'


@pytest.mark.parametrize(
    ("window", "error"),
    [
        (SyncWindow("deny", "@daily", "1h", ("*",)), "cannot parse schedule '@daily'"),
        (SyncWindow("deny", "0 0 22 * * *", "1h", ("*",)), "cannot parse schedule '0 0 22 * * *'"),
        (SyncWindow("deny", "0 22 * * *", "8 hours", ("*",)), "cannot parse duration '8 hours'"),
    ],
    ids=["descriptor", "six-fields", "duration"],
)
def test_an_invalid_window_refuses_every_sync_as_argo_cd_does(
    window: SyncWindow, error: str
) -> None:
    verdict = windows.check_manual_sync([window], app(), NOW)

    assert not verdict.allowed
    assert verdict.reason() == f"cannot sync: invalid sync window: {error}"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("8h", 28800), ("1h30m", 5400), ("1.5h", 5400), ("90s", 90), ("0", 0), ("500ms", 0.5)],
)
def test_durations_parse_as_go_parses_them(text: str, seconds: float) -> None:
    assert windows.parse_go_duration(text) == timedelta(seconds=seconds)


def test_windows_are_read_from_the_app_project() -> None:
    project = {
        "spec": {
            "syncWindows": [
                {
                    "kind": "deny",
                    "schedule": "0 22 * * *",
                    "duration": "8h",
                    "applications": ["*"],
                    "manualSync": True,
                    "timeZone": "Europe/Berlin",
                    "andOperator": True,
                    "description": "freeze",
                }
            ]
        }
    }

    [window] = windows.read_windows(project)

    assert window == SyncWindow(
        "deny",
        "0 22 * * *",
        "8h",
        ("*",),
        manual_sync=True,
        time_zone="Europe/Berlin",
        and_operator=True,
        description="freeze",
    )
