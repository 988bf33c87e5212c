"""`/kai timeline` and the alert thread's "What changed in the hour before": one cluster's
changes over a window, read from every source at once in a constant number of API requests,
whatever the number of objects (each list in one unpaged request: HelmReleases, Applications,
KAI's and KEDA's ReplicaSets and ControllerRevisions, KAI's Evict Events; two gets: `kai-config`
and the APIService, whose Service names KEDA's namespace), plus the change journal and the
cluster's alert state. A source that cannot be read is said in the reply, never a failed reply.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TypeVar

from bot.access.audit import Change
from bot.access.journal import KEEP as JOURNAL_KEPT
from bot.access.journal import ChangeJournal
from bot.alerts.model import AlertState, ClusterAlerts
from bot.alerts.store import AlertStore
from bot.config.settings import Settings
from bot.core import conditions as c
from bot.core import errors
from bot.core.models import RawObject
from bot.gitops import kinds as gitops_kinds
from bot.kube import kinds
from bot.kube.kinds import ResourceRef
from bot.kube.ports import KubeReader
from bot.listing.places import ARGOCD_NAMESPACE
from bot.notices.evictions import SELECTOR
from bot.slack.blocks import Message
from bot.timeline import cluster, gitops, records, render
from bot.timeline.model import (
    ARGO,
    BOT,
    EVICTION,
    FLUX,
    KAI,
    ROLLOUT,
    Reach,
    Timeline,
    newest_first,
)

log = logging.getLogger(__name__)

KAI_CONFIG = "kai-config"
HOUR_BEFORE = timedelta(hours=1)
T = TypeVar("T")


@dataclass
class _Read:
    """Everything one timeline reads, and what could not be read."""

    releases: list[RawObject]
    apps: list[RawObject]
    replica_sets: list[RawObject]
    revisions: list[RawObject]
    events: list[RawObject]
    config: RawObject | None
    changes: list[Change]
    state: ClusterAlerts
    unread: list[Reach]


class TimelineReader:
    """Reads timelines; the alert desk's `ChangesReport` (its alert threads' second reply)."""

    def __init__(
        self,
        settings: Settings,
        journal: ChangeJournal,
        store: AlertStore,
        clock: Callable[[], datetime],
    ) -> None:
        self.settings = settings
        self.journal = journal
        self.store = store
        self.clock = clock

    async def read(self, kube: KubeReader, start: datetime, end: datetime) -> Timeline:
        """What changed on `kube.cluster` between `start` and `end`, newest first."""
        read = await self._read_all(kube)
        entries = [
            *records.journal_entries(read.changes, kube.cluster, start, end),
            *gitops.helm_entries(read.releases, start, end),
            *gitops.argo_entries(read.apps, start, end),
            *cluster.rollout_entries(read.replica_sets, read.revisions, start, end),
            *cluster.config_created(read.config, start, end),
            *cluster.moves_entries(read.state.seen, start, end, read.config),
            *cluster.eviction_entries(read.events, start, end),
            *records.alert_entries(read.state, start, end),
        ]
        reaches = [
            *read.unread,
            *records.journal_reach(read.changes, JOURNAL_KEPT, start),
            *gitops.helm_reach(read.releases, start),
            *gitops.argo_reach(read.apps, start),
            *cluster.moves_reach(read.state.seen, start),
            *cluster.events_reach(self.clock(), start),
            *records.alerts_reach(read.state, start),
        ]
        return Timeline(kube.cluster, start, end, newest_first(entries), tuple(reaches))

    async def reply(self, kube: KubeReader, since: timedelta) -> Message:
        """`/kai timeline --since DURATION`'s reply."""
        now = self.clock()
        timeline = await self.read(kube, now - since, now)
        return render.timeline_message(timeline, since, command=self.settings.slack.command)

    async def before_alert(self, kube: KubeReader, alert: AlertState) -> Message:
        """What changed on `kube.cluster` in the hour before `alert` was first seen bad, up to
        when it fired. Never raises: a failure is the reply's one line."""
        start, end = alert.first_seen - HOUR_BEFORE, alert.firing_since or alert.first_seen
        try:
            timeline = await self.read(kube, start, end)
        except Exception as e:  # a bug must not cost the page its thread: say it
            log.exception("%s: what changed before it could not be read", alert.incident)
            timeline = _unreadable(Timeline(kube.cluster, start, end, ()), e)
        own = f"Alert {alert.alert_id}"  # its own firing is the page itself
        entries = tuple(e for e in timeline.entries if e.subject != own)
        timeline = replace(timeline, entries=entries)
        return render.before_alert_message(timeline, command=self.settings.slack.command)

    async def _read_all(self, kube: KubeReader) -> _Read:
        unread: list[Reach] = []
        sources = _Sources(kube, unread)
        kai_ns = self.settings.kai.namespace
        lists = asyncio.gather(
            sources.listed(FLUX, gitops_kinds.HELM_RELEASE),
            sources.listed(ARGO, gitops_kinds.APPLICATION, ARGOCD_NAMESPACE),
            sources.listed(ROLLOUT, kinds.REPLICA_SET, kai_ns),
            sources.listed(ROLLOUT, kinds.CONTROLLER_REVISION, kai_ns),
            sources.listed(EVICTION, kinds.EVENT, selector=SELECTOR),
        )
        others = asyncio.gather(
            sources.got(KAI, kinds.KAI_CONFIG, KAI_CONFIG),
            sources.keda_rollouts(self.settings.keda.apiservice, kai_ns),
            _guarded(unread, BOT, list[Change](), lambda: self.journal.recent(JOURNAL_KEPT)),
            _guarded(unread, KAI, ClusterAlerts(kube.cluster), lambda: self._state(kube.cluster)),
        )
        listed, (config, keda, changes, state) = await asyncio.gather(lists, others)
        releases, apps, kai_sets, kai_revisions, events = listed
        return _Read(
            releases, apps, kai_sets + keda[0], kai_revisions + keda[1], events, config,
            changes, state, unread,
        )  # fmt: skip

    async def _state(self, name: str) -> ClusterAlerts:
        return (await self.store.load(name)).state


@dataclass
class _Sources:
    """The cluster's reads for one timeline; each failure noted in `unread` (an absent kind,
    Flux or Argo CD not installed, is no failure: it has nothing to tell)."""

    kube: KubeReader
    unread: list[Reach]

    async def listed(
        self, source: str, ref: ResourceRef, namespace: str | None = None, selector: str = ""
    ) -> list[RawObject]:
        def listing() -> Awaitable[list[RawObject]]:
            return self.kube.list_objects(
                ref, namespace, field_selector=selector or None, page_size=None
            )

        return await _guarded(self.unread, source, [], listing, ref.qualified)

    async def got(self, source: str, ref: ResourceRef, name: str) -> RawObject | None:
        return await _guarded(
            self.unread, source, None, lambda: self.kube.get_object(ref, name), ref.qualified
        )

    async def keda_rollouts(
        self, apiservice: str, kai_ns: str
    ) -> tuple[list[RawObject], list[RawObject]]:
        """The ReplicaSets and ControllerRevisions of KEDA's namespace: the one of the
        APIService's Service (none when it is served locally, or is KAI's namespace)."""
        found = await self.got(ROLLOUT, kinds.APISERVICE, apiservice)
        service = c.as_mapping(c.spec(found).get("service")) if found is not None else {}
        namespace = c.as_text(service.get("namespace"))
        if not namespace or namespace == kai_ns:
            return [], []
        sets, revisions = await asyncio.gather(
            self.listed(ROLLOUT, kinds.REPLICA_SET, namespace),
            self.listed(ROLLOUT, kinds.CONTROLLER_REVISION, namespace),
        )
        return sets, revisions


async def _guarded(
    unread: list[Reach], source: str, empty: T, read: Callable[[], Awaitable[T]], what: str = ""
) -> T:
    """What `read()` returns; `empty` when the kind is not served, or when it failed (noted).
    `read` is called here, not by the caller: a gather cancelled before this task ran (a
    service stopping) would leave a read made beforehand never awaited."""
    try:
        return await read()
    except errors.KubeNotFound:
        return empty
    except errors.BotError as e:
        unread.append(Reach(source, None, f"{what or source} cannot be read: {e}"))
        return empty


def _unreadable(timeline: Timeline, error: Exception) -> Timeline:
    note = f"the timeline could not be read: {type(error).__name__} (see the service log)"
    return Timeline(timeline.cluster, timeline.start, timeline.end, (), (Reach(BOT, None, note),))
