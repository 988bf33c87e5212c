"""Eviction notices, told: each Evict Event read, the queues around it read, what it still
needs said saved in the cluster's alert state (a notice thread keyed by the Event's UID) before
anything is sent, then delivered by the alert drain: on the Lease holder only, exactly once,
with the alerts' guarantees (an unknown outcome looked for, copies deleted, fencing). A stale
gang's eviction reads the pods of its namespace first: a gang that completed is not told
(`bot.notices.gangs`, KAI #1968); where they cannot be read, it is told.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime

from bot.alerts.model import ClusterAlerts
from bot.alerts.store import update
from bot.alerts.usecase import AlertDesk
from bot.alerts.usecase_context import repair_damaged
from bot.config.settings import Settings
from bot.core import conditions, errors
from bot.core.models import RawObject
from bot.kube import kinds
from bot.kube.ports import KubeReader
from bot.notices import evictions, gangs, render
from bot.notices.evictions import Eviction, Telling, Told
from bot.notices.render import QueueFigures
from bot.slack.blocks import Message
from bot.workloads.queues import QueueRow, queue_rows

log = logging.getLogger(__name__)


class EvictionNotices:
    """Tells a cluster's evictions through the alert desk's store and drain."""

    def __init__(self, settings: Settings, desk: AlertDesk) -> None:
        self._settings = settings
        self._desk = desk

    async def tell(self, kube: KubeReader, events: Sequence[RawObject], now: datetime) -> int:
        """Owe what each Event still needs said, then deliver; how many owed something.

        Raises:
            StoreUnavailable: the state could not be read or saved (nothing is lost: the
                caller lists the Events again).
        """
        cluster = kube.cluster
        state = (await self._desk.store.load(cluster)).state
        news = [
            e
            for e in map(evictions.read_eviction, events)
            if e is not None and evictions.judge(state, e, now) in (Told.NEW, Told.AGAIN)
        ]
        news = [e for e in news if not await _completed_gang(kube, e)]
        for eviction in news:
            telling = await self._telling(kube, eviction)
            await update(
                self._desk.store, cluster, _record(eviction, now, telling), repair=repair_damaged
            )
        if news:
            await self._desk.drain(cluster)
        return len(news)

    async def _telling(self, kube: KubeReader, eviction: Eviction) -> Telling:
        queues = await read_queues(kube, eviction)
        notices = self._settings.notices
        return Telling(
            channel=notices.channel_for(eviction.namespace, self._settings.slack.alert_channel),
            notice=_parts(render.eviction_notice(kube.cluster, eviction, queues)),
            again=_parts(render.eviction_again(kube.cluster, eviction, queues)),
        )


async def _completed_gang(kube: KubeReader, eviction: Eviction) -> bool:
    """Whether a stale-gang eviction hit a gang whose pods all succeeded (one list of the
    namespace's pods; a list refused or failed counts as no: the eviction is told)."""
    if eviction.action != gangs.STALE_GANG:
        return False
    try:
        pods = await kube.list_objects(kinds.POD, eviction.namespace)
    except errors.KubeError as e:
        log.info("eviction %s: the pods of its gang cannot be read: %s", eviction.uid, e)
        return False
    completed = gangs.has_completed(gangs.pods_of(eviction.group, pods))
    if completed:
        log.info(
            "eviction %s: not told, gang %s/%s completed (KAI #1968)",
            eviction.uid, eviction.namespace, eviction.group,
        )  # fmt: skip
    return completed


async def read_queues(kube: KubeReader, eviction: Eviction) -> QueueFigures:
    """The evicted group's queue and the evictor's, with their GPUs now (three reads); what
    cannot be read is said, never guessed."""
    try:
        group = await kube.get_object(kinds.POD_GROUP, eviction.group, eviction.namespace)
        evictor = None
        if eviction.evictor:
            namespace = eviction.evictor_namespace or eviction.namespace
            evictor = await kube.get_object(kinds.POD_GROUP, eviction.evictor, namespace)
        rows = {row.name: row for row in queue_rows(await kube.list_objects(kinds.QUEUE))}
    except errors.KubeError as e:
        log.warning("eviction %s: cannot read its queues: %s", eviction.uid, e)
        return QueueFigures(problem=str(e))
    queue, evictor_queue = _queue_of(group), _queue_of(evictor)
    return QueueFigures(queue, _row(rows, queue), evictor_queue, _row(rows, evictor_queue))


def _queue_of(group: RawObject | None) -> str:
    return "" if group is None else conditions.as_text(conditions.spec(group).get("queue"))


def _row(rows: dict[str, QueueRow], name: str) -> QueueRow | None:
    return rows.get(name) if name else None


def _parts(message: Message) -> tuple[str, tuple[RawObject, ...]]:
    return str(message.get("text", "")), tuple(message.get("blocks", []))


def _record(
    eviction: Eviction, now: datetime, telling: Telling
) -> Callable[[ClusterAlerts], tuple[ClusterAlerts, None]]:
    def change(state: ClusterAlerts) -> tuple[ClusterAlerts, None]:
        return evictions.record(state, eviction, now, telling), None

    return change
