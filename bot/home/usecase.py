"""What the Home tab and `/kai changes` read, composed from six features' public reads: each
cluster's health (one check shared with `/kai health`) and marked KAI queues, what is paused
or suspended, the alert desk's state, the change journal and the changes waiting for approval.

The use-case layer: every read goes through what `Sources` holds (the service's `Deps` is
one), all at once. A kind the cluster does not serve (404: Flux or KEDA not installed) has
nothing held and is skipped quietly; any other failure becomes a note on the tab, never a
failed tab.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from bot.access.approval_store import ApprovalStore
from bot.access.journal import ChangeJournal
from bot.alerts import reminders
from bot.alerts.model import ClusterAlerts
from bot.commands.kinds import FLUX_KIND_WORDS
from bot.config.settings import Settings
from bot.core import errors
from bot.core.models import RawObject
from bot.gitops import kinds as gitops_kinds
from bot.health import usecase as health
from bot.home import assemble, model, render_changes
from bot.home.render import RECENT_CHANGES
from bot.kube import kinds
from bot.kube.kinds import ResourceRef
from bot.kube.ports import KubeReader
from bot.slack.blocks import Message
from bot.workloads import usecase as workloads

log = logging.getLogger(__name__)

Where = tuple[ResourceRef, str | None]  # a resource type and a namespace (None: every one)
# Flux objects may be suspended in any namespace (a timed suspend too): one list per kind.
FLUX_REFS = tuple(gitops_kinds.FLUX[kind] for kind, _, _ in FLUX_KIND_WORDS)


class AlertReader(Protocol):
    """The alert desk's public read (`AlertDesk.list_alerts`, as `/kai alerts` reads it)."""

    async def list_alerts(self, cluster: str | None = None) -> list[ClusterAlerts]: ...


class Sources(Protocol):
    """Where the tab's reads go; the service's `Deps` is one."""

    @property
    def settings(self) -> Settings: ...
    @property
    def kube(self) -> Mapping[str, KubeReader]: ...
    @property
    def health_checks(self) -> health.SharedChecks: ...
    @property
    def alerts(self) -> AlertReader: ...
    @property
    def journal(self) -> ChangeJournal: ...
    @property
    def approvals(self) -> ApprovalStore | None: ...
    @property
    def clock(self) -> Callable[[], datetime]: ...


async def read_home(sources: Sources) -> model.Home:
    """Every configured cluster's report and held objects, the alerts and the recent changes,
    read at once; what cannot be read is said on the tab."""
    names = [cluster.name for cluster in sources.settings.clusters]
    statuses, held, (alerts, alerts_error), (changes, changes_error) = await asyncio.gather(
        asyncio.gather(*(_cluster_status(sources, name) for name in names)),
        asyncio.gather(*(_held(sources, name) for name in names)),
        _alerts(sources),
        _changes(sources),
    )
    approvals, approvals_error = await _approvals(sources)
    return model.Home(
        now=sources.clock(),
        clusters=tuple(statuses),
        alerts=tuple(alerts),
        held=tuple(assemble.ordered(h for found, _ in held for h in found)),
        alerts_error=alerts_error,
        held_errors=tuple(note for _, notes in held for note in notes),
        changes=tuple(changes),
        changes_error=changes_error,
        approvals=tuple(approvals),
        approvals_error=approvals_error,
    )


async def changes_in_force(sources: Sources, cluster: str | None) -> Message:
    """`/kai changes [--cluster NAME]`: every pause and suspend in force, on every configured
    cluster (or the one named), read as the Home tab reads them; a change made by hand shows
    when kai-chatops first saw it (the reminders keep that), when the alert state can say.

    Raises:
        UserError: no cluster of that name is configured.
    """
    names = [c.name for c in sources.settings.clusters]
    if cluster is not None:
        names = [sources.settings.cluster(cluster).name]
    found, first_seen = await asyncio.gather(
        asyncio.gather(*(_held(sources, name) for name in names)), _first_seen(sources, names)
    )
    return render_changes.changes_message(
        assemble.ordered(h for held, _ in found for h in held),
        clusters=names,
        now=sources.clock(),
        first_seen=first_seen,
        notes=[note for _, notes in found for note in notes],
    )


async def read_held(
    kube: KubeReader, keda_places: Sequence[Where], flux_places: Sequence[Where]
) -> tuple[list[model.HeldObject], list[str]]:
    """Paused KEDA objects and suspended Flux objects in those places, and what failed."""
    notes: list[str] = []

    async def read(place: Where) -> list[RawObject]:
        ref, namespace = place
        try:
            return await kube.list_objects(ref, namespace)
        except errors.KubeNotFound:
            return []
        except errors.KubeError as e:
            where = namespace or "all namespaces"
            notes.append(f"{kube.cluster}: cannot list {ref.qualified} in {where}: {e}")
            return []

    keda_pages = await asyncio.gather(*(read(p) for p in keda_places))
    flux_pages = await asyncio.gather(*(read(p) for p in flux_places))
    held = assemble.paused_objects((o for page in keda_pages for o in page), kube.cluster)
    held += assemble.suspended_objects((o for page in flux_pages for o in page), kube.cluster)
    return held, notes


async def _held(sources: Sources, cluster: str) -> tuple[list[model.HeldObject], list[str]]:
    keda_places: list[Where] = [
        (ref, ns)
        for ns in sources.settings.keda.namespaces
        for ref in (kinds.SCALED_JOB, kinds.SCALED_OBJECT)
    ]
    flux_places: list[Where] = [(ref, None) for ref in FLUX_REFS]
    return await read_held(sources.kube[cluster], keda_places, flux_places)


async def _cluster_status(sources: Sources, cluster: str) -> model.ClusterStatus:
    kube, settings = sources.kube[cluster], sources.settings

    async def report() -> model.ClusterStatus:
        try:
            found = await health.shared_check(
                sources.health_checks, kube, settings, sources.clock()
            )
        except errors.KubeError as e:
            return model.ClusterStatus(cluster, error=str(e))
        return model.ClusterStatus(cluster, found)

    status, (queues, queues_error) = await asyncio.gather(report(), _queues(sources, cluster))
    return replace(status, queues=queues, queues_error=queues_error)


async def _queues(sources: Sources, cluster: str) -> tuple[tuple[model.QueueMark, ...], str]:
    """The cluster's starved and over-quota KAI queues; none where KAI's CRDs are not served."""
    after, kube = sources.settings.alerts.starved_after, sources.kube[cluster]
    try:
        found = await workloads.read_starvation(kube, now=sources.clock(), after=after)
    except errors.KubeNotFound:
        return (), ""
    except errors.KubeError as e:
        return (), f"cannot read them: {e}"
    return assemble.queue_marks(found), ""


async def _alerts(sources: Sources) -> tuple[list[model.AlertLine], str]:
    try:
        states = await sources.alerts.list_alerts()
    except errors.BotError as e:
        return [], f"The alert state cannot be read: {e}"
    return assemble.alert_lines(states), ""


async def _changes(sources: Sources) -> tuple[list[model.ChangeLine], str]:
    try:
        changes = await sources.journal.recent(RECENT_CHANGES)
    except errors.BotError as e:
        return [], f"The recent changes cannot be read: {e}"
    return [
        model.ChangeLine(c.at, c.user, c.action, c.target, c.outcome, c.reason, c.note)
        for c in changes
    ], ""


async def _approvals(sources: Sources) -> tuple[list[model.ApprovalLine], str]:
    """The changes waiting for a second operator, soonest to expire first (`access.approval`)."""
    if sources.settings.access.approval is None or sources.approvals is None:
        return [], ""
    try:
        records = await sources.approvals.records()
    except errors.BotError as e:
        return [], f"The changes waiting for approval cannot be read: {e}"
    return assemble.approval_lines(records, sources.clock()), ""


async def _first_seen(sources: Sources, names: Sequence[str]) -> reminders.FirstSeen:
    """When kai-chatops first saw each change made by hand ({} when the state cannot say)."""
    try:
        states = [state for name in names for state in await sources.alerts.list_alerts(name)]
    except errors.BotError as e:
        log.warning("changes: the reminders' state cannot be read: %s", e)
        return {}
    return reminders.first_seen_by_hand(states)
