"""The reads behind the queue starvation alert: which queues are starved at a check, and the
evidence posted as the first reply in a starved queue's thread.

I/O through the `KubeReader` port only (`bot.workloads.usecase.read_starvation`: one list of
Queues and one of PodGroups, whatever their number); the decisions are
`bot.workloads.starvation`'s and the words `bot.alerts.starvation`'s. With
`alerts.starved_after` 0 (off) a check reads nothing here.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.alerts import evidence_reads, starvation
from bot.alerts.model import AlertKey, Observation
from bot.core import errors
from bot.kube.ports import KubeReader
from bot.slack.blocks import Message
from bot.workloads import render as render_workloads
from bot.workloads import usecase


async def starved_queues(
    kube: KubeReader, now: datetime, *, after: timedelta, command: str
) -> list[Observation]:
    """One warning per starved queue of `kube.cluster`; none when the rule is off or the
    cluster serves no KAI Queues or PodGroups (KAI's CRDs missing are a health finding).

    Raises:
        KubeError: unreachable, or a list is forbidden (the check fails: never a false
            "resolved").
    """
    if after <= timedelta(0):
        return []
    try:
        found = await usecase.read_starvation(kube, now=now, after=after)
    except errors.KubeNotFound:
        return []
    return starvation.starvation_alerts(kube.cluster, found.starved, after=after, command=command)


def is_starvation(key: AlertKey) -> bool:
    return key.kind == starvation.KIND and key.condition == starvation.CONDITION


async def queue_evidence(
    kube: KubeReader, key: AlertKey, now: datetime, *, after: timedelta, command: str
) -> Message:
    """The starved queue's line and its pending groups, read now; one line when the cluster
    would not say. Never raises."""

    async def read() -> Message:
        found = await usecase.read_starvation(kube, now=now, after=after)
        return render_workloads.starvation_evidence(
            found, key.object, cluster=key.cluster, now=now, command=command
        )

    return await evidence_reads.read_or_say(f"queue {key.object}", key.cluster, read)
