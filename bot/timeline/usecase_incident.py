"""`/kai timeline ALERT_ID`: the incident's postmortem draft, posted as a Markdown file in its
own thread. The incident is found in the alert state (live, closing, or among the last closed
ones each cluster keeps); its window runs from an hour before it was first seen bad to its
resolution (or now), and every cluster it fired on is read as `/kai timeline` reads one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import Protocol

from bot.alerts.model import FLEET, AlertState
from bot.alerts.outbox import RECENT_KEPT
from bot.core import errors
from bot.kube.ports import KubeReader
from bot.slack.blocks import Message, escape, text_message
from bot.timeline import records, render_markdown
from bot.timeline.model import ALERT, Entry, Reach, Timeline
from bot.timeline.usecase import HOUR_BEFORE, TimelineReader


class FileSharer(Protocol):
    """Sharing a text file in a thread (`bot.slack.gateway.SlackGateway.upload_file`)."""

    async def upload_file(
        self, channel: str, thread_ts: str, name: str, content: str, comment: str
    ) -> str: ...


async def post_draft(
    reader: TimelineReader,
    slack: FileSharer,
    kube: Mapping[str, KubeReader],
    alert_id: str,
    cluster: str | None,
) -> Message:
    """Find the incident, write its draft, share it in its thread; the reply says where.

    Raises:
        UserError: no incident of that ID is known, or it has no thread yet; no such cluster.
        SlackUnavailable: the file could not be shared. StoreUnavailable.
    """
    alert = await find(reader, alert_id, cluster)
    now = reader.clock()
    start, end = alert.first_seen - HOUR_BEFORE, alert.resolved_at or now
    timelines = await asyncio.gather(
        *(reader.read(kube[name], start, end) for name in _watched(alert, kube))
    )
    mentioned = reader.settings.alerts.mention
    entries = records.incident_entries(alert, mentioned) + _merged(timelines, alert)
    reaches = [*(r for t in timelines for r in t.reaches), *_unwatched(alert, kube)]
    markdown = render_markdown.postmortem(alert, entries, reaches, (start, end), now)
    name = render_markdown.filename(alert)
    comment = f"Postmortem draft of alert {alert.alert_id}: its whole timeline, to edit."
    await slack.upload_file(alert.root_channel, alert.root_ts, name, markdown, comment)
    text = (
        f"The postmortem draft of alert {alert.alert_id} ({escape(alert.observation.title)}, "
        f"{len(entries)} entries) is posted in its thread in the alert channel as {escape(name)}."
    )
    return {**text_message(text), "response_type": "ephemeral"}


async def find(reader: TimelineReader, alert_id: str, cluster: str | None) -> AlertState:
    """The incident with that alert ID, on `cluster` (or any cluster, fleet incidents too).

    Raises:
        UserError: none is known, or it has no thread yet; no such cluster.
    """
    settings = reader.settings
    names = [settings.cluster(cluster).name] if cluster else [c.name for c in settings.clusters]
    states = [stored.state for stored in await reader.store.load_many([*names, FLEET])]
    alert = records.find_incident(states, alert_id, cluster)
    if alert is None:
        raise errors.UserError(
            f"No incident of alert {alert_id} is known: `{settings.slack.command} alerts` lists "
            f"the active ones, and the state keeps the last {RECENT_KEPT} closed incidents of "
            "each cluster."
        )
    if alert.grouped:
        raise errors.UserError(
            f"Alert {alert.alert_id} on {alert.key.cluster} is followed in a fleet incident: "
            f"`{settings.slack.command} alerts` lists its ID."
        )
    if not alert.root_ts:
        raise errors.UserError(
            f"Alert {alert.alert_id} has no thread yet (its root is still being posted): "
            "try again in a moment."
        )
    return alert


def _watched(alert: AlertState, kube: Mapping[str, KubeReader]) -> list[str]:
    clusters = alert.clusters if alert.key.is_fleet else (alert.key.cluster,)
    return [name for name in clusters if name in kube]


def _unwatched(alert: AlertState, kube: Mapping[str, KubeReader]) -> list[Reach]:
    clusters = alert.clusters if alert.key.is_fleet else (alert.key.cluster,)
    note = "no longer in the configuration: what changed there is not read"
    return [Reach(name, None, note) for name in clusters if name not in kube]


def _merged(timelines: list[Timeline], alert: AlertState) -> list[Entry]:
    """Every cluster's entries; on a fleet incident, each names its cluster. The alert's own
    fired and resolved lines are its story's already."""
    merged = []
    for timeline in timelines:
        for entry in timeline.entries:
            if entry.source == ALERT and entry.subject == f"Alert {alert.alert_id}":
                continue
            named = f"{entry.subject} on {timeline.cluster}" if alert.key.is_fleet else ""
            merged.append(replace(entry, subject=named) if named else entry)
    return merged
