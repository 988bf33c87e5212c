"""What a check saw in a cluster's snapshot (`rules.detect` over `health.build_report`), judged
again only when the snapshot changed or the clock may have changed the answer.

Checks read a local copy kept current by watches, so at rest every check reads the very same
objects; judging them again is most of a check's cost. A snapshot is known by its objects'
resourceVersions (`fingerprint`: the API server gives an object a new one at every write), so
what is kept per cluster is a few strings, never the objects. The one rule that reads the clock
is a stopped operator: a KAI Config or SchedulingShard Progressing since its last write, or
reporting a pass running since it began (`kai.stall_clocks`), turns into an alert once
`kai.progressing_timeout` has passed, and from then on its title tells the age. So an answer is
reused while the snapshot is the same and no such object has passed its timeout
(`unchanged_until`); a rule that reads `now` in any other way must be told here too. Pure: no
I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.alerts.model import Observation
from bot.core import conditions
from bot.core.models import ClusterSnapshot, RawObject
from bot.rules import kai

Judge = Callable[[str, ClusterSnapshot, datetime], list[Observation]]  # cluster, snapshot, now


def unchanged_until(snapshot: ClusterSnapshot, timeout: timedelta) -> datetime | None:
    """The last moment at which judging `snapshot` still gives what it gives now (or at any
    earlier moment); None when the answer never changes with the clock alone.

    A KAI object Progressing, or reporting a pass running, since `since` is no alert while
    `now - since <= timeout`, then an alert whose title grows with its age
    (`kai.stall_clocks`): nothing after `since + timeout` can be reused.
    """
    moments = [
        since + timeout
        for obj in (snapshot.kai_config, *snapshot.shards)
        if obj is not None
        for _, since in kai.stall_clocks(obj, kai.assess_kai_object(obj))
    ]
    return min(moments, default=None)


def fingerprint(snapshot: ClusterSnapshot) -> tuple[object, ...]:
    """What tells `snapshot` from another of the same cluster: each object's identity and
    resourceVersion (two copies of one version are the same object, whatever a local copy
    left out of them), the object itself when it has no version (a snapshot made by hand)."""
    return (
        _version(snapshot.kai_config),
        tuple(map(_version, snapshot.shards)),
        tuple(map(_version, snapshot.deployments)),
        tuple(map(_version, snapshot.daemonsets)),
        snapshot.crd_names,
        _version(snapshot.apiservice),
        snapshot.kai_namespace,
        snapshot.extra,
    )


def _version(obj: RawObject | None) -> object:
    meta = conditions.metadata(obj or {})
    version = meta.get("resourceVersion")
    if obj is None or not version:
        return obj
    return (meta.get("uid"), meta.get("namespace"), meta.get("name"), version)


@dataclass(frozen=True)
class _Judged:
    fingerprint: tuple[object, ...]
    seen: tuple[Observation, ...]
    until: datetime | None


class Verdicts:
    """The last judgement of each cluster's snapshot, reused while it holds."""

    def __init__(self, judge: Judge, timeout: timedelta) -> None:
        self._judge = judge
        self._timeout = timeout
        self._last: dict[str, _Judged] = {}

    def seen(self, cluster: str, snapshot: ClusterSnapshot, now: datetime) -> list[Observation]:
        """What judging `snapshot` at `now` finds bad: the last answer when the snapshot has
        the `fingerprint` of the last one judged and `now` is not past its `unchanged_until`."""
        last, known = self._last.get(cluster), fingerprint(snapshot)
        if last is not None and last.fingerprint == known and _holds(last.until, now):
            return list(last.seen)
        seen = self._judge(cluster, snapshot, now)
        until = unchanged_until(snapshot, self._timeout)
        if _holds(until, now):
            self._last[cluster] = _Judged(known, tuple(seen), until)
        else:  # an alert that tells its age: judged anew every time
            self._last.pop(cluster, None)
        return seen


def _holds(until: datetime | None, now: datetime) -> bool:
    return until is None or now <= until
