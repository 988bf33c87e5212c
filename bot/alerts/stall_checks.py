"""The reads behind the scheduler stall alert: the Leases in the scheduler's namespace, every
PodGroup, and the scheduler's Events about PodGroups, beside the check's snapshot.

I/O through the `KubeReader` port only: at most three lists, whatever the number of shards or
groups (through the check's watched copies, `bot.kube.informer`, a check at rest asks nothing;
the Leases and Events are QUIET there: they wake no check, `stall.next_look` names when to
look). Only what can count is read, and so followed: the Leases only while a shard's scheduler
runs more than one replica (with one it elects no leader), the Events only while a PodGroup is
pending (they date nothing else). Every followed collection is a watch kept open per cluster,
and with a thousand clusters each costs tens of megabytes (bench/fleet_ha.py). With
`alerts.stall_after` 0 (off), or without kai-config, a check reads nothing here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.alerts import stall, stall_signs
from bot.alerts.model import Observation
from bot.core import errors
from bot.core.models import ClusterSnapshot, RawObject
from bot.health import report as health
from bot.kube import kinds
from bot.kube.ports import KubeReader


@dataclass(frozen=True)
class StallCheck:
    """What a check found of its schedulers: the stalled ones, and when to look again."""

    found: tuple[Observation, ...] = ()
    look_at: datetime | None = None


def scheduler_events(scheduler: str) -> str:
    """The field selector of the Events the scheduler records about PodGroups (`source` is
    the Event's `source.component`, k8s.io/kubernetes pkg/apis/core/v1 conversion.go)."""
    return f"involvedObject.kind=PodGroup,source={scheduler}"


async def stalled_schedulers(
    kube: KubeReader, snapshot: ClusterSnapshot, now: datetime, *, after: timedelta, command: str
) -> StallCheck:
    """One critical alert per stalled shard scheduler of `kube.cluster`, and the moment a
    scheduler that is not stalled yet would be.

    Raises:
        KubeError: unreachable, or a list is forbidden (the check fails: never a false
            "resolved"). PodGroups not served (KAI's CRDs missing) read as none.
    """
    if after <= timedelta(0) or snapshot.kai_config is None or not snapshot.shards:
        return StallCheck()
    namespace = health.operand_namespace(snapshot)
    scheduler = health.scheduler_name(snapshot)
    elects = stall_signs.elects_leaders(snapshot)
    leases, groups = await asyncio.gather(
        kube.list_objects(kinds.LEASE, namespace) if elects else _nothing(),
        _served(kube.list_objects(kinds.POD_GROUP)),
    )
    events: list[RawObject] = []
    if any(stall_signs.waits(g) for g in groups):
        events = await kube.list_objects(kinds.EVENT, field_selector=scheduler_events(scheduler))
    shards = stall_signs.read_shards(snapshot, leases, groups, events)
    found = stall.stall_alerts(kube.cluster, shards, now, after=after, command=command)
    return StallCheck(tuple(found), stall.next_look(shards, now, after))


async def _nothing() -> list[RawObject]:
    return []


async def _served(listing: Awaitable[list[RawObject]]) -> list[RawObject]:
    try:
        return await listing
    except errors.KubeNotFound:
        return []
