"""Argo CD sync windows: whether an AppProject's windows allow a manual sync of an app now.

Pure (docs/design.md §2 "Argo CD"), as argo-cd pkg/apis/application/v1alpha1/types.go
`SyncWindows.Matches`, `Active`, `InactiveAllows` and `CanSync(isManual=true)` decide it, with
server/application/application.go `Sync`'s words. The schedule is a five-field cron (robfig/cron
with Minute|Hour|Dom|Month|Dow: no seconds, no `@daily`), evaluated with croniter. No I/O, no
clock: `now` is passed in.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.core import conditions, durations
from bot.core.models import RawObject

BLOCKED = "cannot sync: blocked by sync window"  # server/application/application.go `Sync`
INVALID = "cannot sync: invalid sync window"


class InvalidWindow(ValueError):
    """A window whose schedule or duration Argo CD cannot parse (it refuses every sync then)."""


@dataclass(frozen=True)
class SyncWindow:
    """One entry of an AppProject's `spec.syncWindows`."""

    kind: str  # allow | deny
    schedule: str
    duration: str
    applications: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    clusters: tuple[str, ...] = ()
    manual_sync: bool = False
    time_zone: str = ""
    and_operator: bool = False
    description: str = ""

    def describe(self) -> str:
        """`deny "0 22 * * *" for 8h (Europe/Berlin): change freeze`."""
        zone = f" ({self.time_zone})" if self.time_zone else ""
        said = f": {self.description}" if self.description else ""
        return f'{self.kind} "{self.schedule}" for {self.duration}{zone}{said}'


def read_windows(project: RawObject) -> tuple[SyncWindow, ...]:
    """The AppProject's sync windows, as written."""
    windows = conditions.spec(project).get("syncWindows")
    return (
        tuple(_window(conditions.as_mapping(w)) for w in windows)
        if isinstance(windows, list)
        else ()
    )


def _window(raw: Mapping[str, Any]) -> SyncWindow:
    return SyncWindow(
        kind=conditions.as_text(raw.get("kind")),
        schedule=conditions.as_text(raw.get("schedule")),
        duration=conditions.as_text(raw.get("duration")),
        applications=_texts(raw.get("applications")),
        namespaces=_texts(raw.get("namespaces")),
        clusters=_texts(raw.get("clusters")),
        manual_sync=raw.get("manualSync") is True,
        time_zone=conditions.as_text(raw.get("timeZone")),
        and_operator=raw.get("andOperator") is True,
        description=conditions.as_text(raw.get("description")),
    )


def _texts(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def matching(windows: Sequence[SyncWindow], app: RawObject) -> tuple[SyncWindow, ...]:
    """The windows that apply to the app (`SyncWindows.Matches`): by applications, then
    clusters (destination name or server), then namespaces; any one set matching (OR), or
    every set given matching with `andOperator`."""
    return tuple(w for w in windows if _matches(w, app))


def _matches(window: SyncWindow, app: RawObject) -> bool:
    destination = conditions.as_mapping(conditions.spec(app).get("destination"))
    app_name = conditions.as_text(conditions.metadata(app).get("name"))
    cluster_names = [conditions.as_text(destination.get(k)) for k in ("name", "server")]
    cluster_names = [name for name in cluster_names if name]  # an empty one never matches
    namespace = conditions.as_text(destination.get("namespace"))
    results = [
        any(_glob(p, v) for p in patterns for v in values)
        for patterns, values in (
            (window.applications, [app_name]),
            (window.clusters, cluster_names),
            (window.namespaces, [namespace]),
        )
        if patterns
    ]
    if window.and_operator:
        return bool(results) and all(results)
    return any(results)


def _glob(pattern: str, value: str) -> bool:
    """`globMatch` (gobwas/glob without separators): `*`, `?` and `[...]` as fnmatch has them."""
    return pattern == "*" or fnmatch.fnmatchcase(value, pattern)


def is_active(window: SyncWindow, now: datetime) -> bool:
    """Whether the window is open at `now` (`SyncWindow.active`): the schedule's next start
    after (now - duration), on the window's wall clock, comes before now.

    Raises:
        InvalidWindow: the schedule or the duration does not parse.
    """
    duration = parse_go_duration(window.duration)
    wall = _wall_clock(now, window.time_zone)
    return _next_start(window.schedule, wall - duration) < wall


def _wall_clock(now: datetime, zone: str) -> datetime:
    """`now` shifted by the zone's UTC offset at `now`, as naive time (`scheduleOffsetByTimeZone`:
    an unknown zone counts as UTC)."""
    utc = now.astimezone(UTC)
    try:
        offset = utc.astimezone(ZoneInfo(zone)).utcoffset() if zone else None
    except (ZoneInfoNotFoundError, ValueError):
        offset = None
    return (utc + (offset or timedelta())).replace(tzinfo=None)


def _next_start(schedule: str, after: datetime) -> datetime:
    # Imported here: only an AppProject with sync windows needs croniter, and the service's
    # start-up should not pay for it (bench/startup.py, tests/unit/test_cli_imports.py).
    from croniter import croniter

    fields = schedule.split()
    if len(fields) != 5 or not croniter.is_valid(schedule):
        raise InvalidWindow(f"cannot parse schedule '{schedule}'")
    start: datetime = croniter(schedule, after).get_next(datetime)
    return start


def parse_go_duration(text: str) -> timedelta:
    """Go's `time.ParseDuration` (`8h`, `1h30m`, `90s`, `1.5h`).

    Raises:
        InvalidWindow: anything Go would refuse.
    """
    try:
        return durations.parse_go_duration(text)
    except ValueError as e:
        raise InvalidWindow(str(e)) from e


@dataclass(frozen=True)
class WindowVerdict:
    """Whether a manual sync may run now, and if not, the windows that forbid it."""

    allowed: bool
    blocking: tuple[SyncWindow, ...] = ()
    error: str = ""  # an invalid window: Argo CD refuses every sync

    def reason(self) -> str:
        """Argo CD's words, then the windows named."""
        if self.error:
            return f"{INVALID}: {self.error}"
        named = "; ".join(w.describe() for w in self.blocking)
        return f"{BLOCKED} ({named})" if named else BLOCKED


def check_manual_sync(
    windows: Sequence[SyncWindow], app: RawObject, now: datetime
) -> WindowVerdict:
    """`SyncWindows.Matches(app).CanSync(true, nil)` at `now`: an active deny window forbids a
    sync unless every active deny window has `manualSync`; else an active allow window
    permits it; else allow windows, none active, forbid it unless all of them have
    `manualSync`; no windows allow it."""
    applying = matching(windows, app)
    try:
        active = [w for w in applying if is_active(w, now)]
        inactive_allows = [w for w in applying if w.kind == "allow" and w not in active]
    except InvalidWindow as e:
        return WindowVerdict(False, error=str(e))
    denies = [w for w in active if w.kind == "deny"]
    if denies:
        manual = all(w.manual_sync for w in denies)
        return WindowVerdict(True) if manual else WindowVerdict(False, tuple(denies))
    if any(w.kind == "allow" for w in active) or not inactive_allows:
        return WindowVerdict(True)
    if all(w.manual_sync for w in inactive_allows):
        return WindowVerdict(True)
    return WindowVerdict(False, tuple(inactive_allows))


def project_name(app: RawObject) -> str:
    """The Application's AppProject (`spec.project`; Argo CD's `default` when empty)."""
    return conditions.as_text(conditions.spec(app).get("project")) or "default"
