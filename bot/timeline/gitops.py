"""What Flux and Argo CD applied, read from their objects' own history. Pure.

- HelmRelease `status.history`: helm-controller's `Snapshot`s (fluxcd/helm-controller
  api/v2/snapshot_types.go): `version`, `action` (install, upgrade, rollback, uninstall),
  `chartName`, `chartVersion`, `appVersion`, `configDigest` (the values' checksum), `status`,
  and `lastDeployed`, "when the release was last deployed" (`firstDeployed` is when the release
  was first deployed, the same for every version). The history goes back only "up to the last
  successfully completed release" (api/v2/helmrelease_types.go `History`); `Snapshots.Truncate`
  (snapshot_types.go) keeps the newest 5 when none succeeded. Read at 0f61a86.
- Application `status.history`: Argo CD's `RevisionHistory` (argoproj/argo-cd
  pkg/apis/application/v1alpha1/types.go): `revision` (or `revisions`), `deployedAt` ("the
  time the sync operation completed"), `initiatedBy` (`username`, `automated`); at most
  `spec.revisionHistoryLimit` entries (10 by default, application_defaults.go). And
  `status.operationState` (`phase`, `message`, `startedAt`, `finishedAt`, the operation's
  `initiatedBy`): a sync that did not succeed leaves no history entry, so it is told from there.
  Read at 37ee009.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.core import conditions as c
from bot.core.models import RawObject
from bot.timeline.model import ARGO, FLUX, Entry, Reach, within

DIGEST_SHOWN = 12  # hex characters of a values digest shown after its algorithm


def helm_entries(releases: Iterable[RawObject], start: datetime, end: datetime) -> list[Entry]:
    """Each HelmRelease snapshot deployed within the window."""
    entries = []
    for release in releases:
        subject = f"HelmRelease {c.object_namespace(release)}/{c.object_name(release)}"
        for snapshot in _history(release):
            at = c.parse_timestamp(snapshot.get("lastDeployed"))
            if within(at, start, end) and at is not None:
                entries.append(Entry(at, FLUX, subject, _snapshot_words(snapshot)))
    return entries


def _snapshot_words(snapshot: Mapping[str, Any]) -> str:
    """`upgrade to v4: chart kai-scheduler@v0.17.1 (app v0.17.1), values sha256:1a2b…: deployed`."""
    action = c.as_text(snapshot.get("action")) or "release"
    chart = f"{c.as_text(snapshot.get('chartName'))}@{c.as_text(snapshot.get('chartVersion'))}"
    app = c.as_text(snapshot.get("appVersion"))
    words = f"{action} to v{c.as_int(snapshot.get('version')) or '?'}: chart {chart}"
    words += f" (app {app})" if app else ""
    digest = c.as_text(snapshot.get("configDigest"))
    words += f", values {short_digest(digest)}" if digest else ""
    return f"{words}: {c.as_text(snapshot.get('status')) or 'status unknown'}"


def short_digest(digest: str) -> str:
    """`sha256:1a2b3c4d5e6f…`: enough to tell two values apart at a glance."""
    algorithm, colon, value = digest.partition(":")
    if not colon:
        return digest[:DIGEST_SHOWN]
    return f"{algorithm}:{value[:DIGEST_SHOWN]}" + ("…" if len(value) > DIGEST_SHOWN else "")


def helm_reach(releases: Sequence[RawObject], start: datetime) -> list[Reach]:
    """Said when some HelmRelease's history begins after the window's start."""
    oldest = [min(ats) for r in releases if (ats := _deployed(r))]
    late = [at for at in oldest if at > start]
    if not late:
        return []
    note = "a HelmRelease's status.history goes back only to its last successful release"
    return [Reach("Helm releases", min(late), note)]


def _deployed(release: RawObject) -> list[datetime]:
    times = (c.parse_timestamp(s.get("lastDeployed")) for s in _history(release))
    return [t for t in times if t is not None]


def _history(obj: RawObject) -> list[Mapping[str, Any]]:
    history = c.status(obj).get("history")
    return [c.as_mapping(h) for h in history] if isinstance(history, list) else []


def argo_entries(apps: Iterable[RawObject], start: datetime, end: datetime) -> list[Entry]:
    """Each Argo CD sync in the window (`status.history`), and an operation that did not
    succeed (`status.operationState`)."""
    entries = []
    for app in apps:
        subject = f"Application {c.object_namespace(app)}/{c.object_name(app)}"
        for item in _history(app):
            at = c.parse_timestamp(item.get("deployedAt"))
            if within(at, start, end) and at is not None:
                words = f"synced {_revision(item)}"
                entries.append(Entry(at, ARGO, subject, words, who=_initiator(item)))
        operation = _failed_operation(app, start, end, subject)
        entries += [operation] if operation is not None else []
    return entries


def _failed_operation(app: RawObject, start: datetime, end: datetime, subject: str) -> Entry | None:
    state = c.as_mapping(c.status(app).get("operationState"))
    phase = c.as_text(state.get("phase"))
    if not phase or phase == "Succeeded":
        return None  # a sync that succeeded is in the history
    at = c.parse_timestamp(state.get("finishedAt")) or c.parse_timestamp(state.get("startedAt"))
    if not within(at, start, end) or at is None:
        return None
    message = c.as_text(state.get("message"))
    words = f"sync {phase}" + (f": {message}" if message else "")
    who = _initiator(c.as_mapping(state.get("operation")))
    return Entry(at, ARGO, subject, words, who=who)


def argo_reach(apps: Sequence[RawObject], start: datetime) -> list[Reach]:
    """Said when an Application's history is full and begins after the window's start."""
    late = []
    for app in apps:
        times = [c.parse_timestamp(h.get("deployedAt")) for h in _history(app)]
        kept = [t for t in times if t is not None]
        limit = c.as_int(c.spec(app).get("revisionHistoryLimit")) or 10
        if kept and len(kept) >= limit and min(kept) > start:
            late.append(min(kept))
    if not late:
        return []
    note = "an Application keeps its last revisionHistoryLimit syncs, 10 by default"
    return [Reach("Argo CD syncs", min(late), note)]


def _revision(item: Mapping[str, Any]) -> str:
    revisions = item.get("revisions")
    if isinstance(revisions, list) and revisions:
        return ", ".join(c.as_text(r)[:DIGEST_SHOWN] for r in revisions)
    return c.as_text(item.get("revision"))[:DIGEST_SHOWN] or "(no revision)"


def _initiator(holder: Mapping[str, Any]) -> str:
    initiated = c.as_mapping(holder.get("initiatedBy"))
    if initiated.get("automated"):
        return "Argo CD (automated)"
    return c.as_text(initiated.get("username"))
