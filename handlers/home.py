"""The App Home tab: on `app_home_opened` and on its `Refresh` button, publish the Home view;
and `/kai changes`, which lists the tab's paused and suspended objects of every cluster.

Viewers see every cluster's verdict and findings that are not Healthy (and its KAI queues that
are starved or over quota), active alerts, what is paused or suspended, and the last changes
made through the bot; anyone else sees a view saying they may not. The view goes out with
`views.publish` through Bolt's client (a view is not a channel message, so not through
`bot.slack.gateway`). Alerts are read with the alert desk's public read
(`AlertDesk.list_alerts`, as `/kai alerts` reads them) and turned into the tab's own lines
here, so `bot.home` does not depend on the alert internals.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.alerts import reminders
from bot.alerts.model import AlertState, ClusterAlerts, Phase, Severity
from bot.core import errors
from bot.gitops import kinds as gitops_kinds
from bot.gitops import render_suspend
from bot.health import usecase as health
from bot.home import render_changes
from bot.home import usecase as home_reads
from bot.home.assemble import ordered, queue_marks
from bot.home.commands import Changes
from bot.home.model import (
    AlertLine,
    AlertPhase,
    ApprovalLine,
    ChangeLine,
    ClusterStatus,
    HeldObject,
    Home,
    QueueMark,
)
from bot.home.render import RECENT_CHANGES, REFRESH_ACTION, home_view, not_allowed_view
from bot.kube import kinds
from bot.service.deps import Deps
from bot.slack.blocks import Message
from bot.workloads import usecase as workloads
from handlers.invocation import Executor, Invocation, Runner

log = logging.getLogger(__name__)

FLUX_REFS = tuple(gitops_kinds.FLUX[kind] for kind in render_suspend.KIND_WORDS)
_STATES: dict[Phase, AlertPhase] = {
    Phase.FIRING: "firing",
    Phase.ACKNOWLEDGED: "acknowledged",
    Phase.SILENCED: "silenced",
}


async def on_home_opened(
    event: dict[str, Any], client: AsyncWebClient, context: dict[str, Any]
) -> None:
    """`app_home_opened` (Events API): publish the Home tab of the user who opened it."""
    if event.get("tab", "home") != "home":  # the Messages tab: nothing to publish
        return
    # The event is answered when this listener returns (`process_before_response`): publish
    # after that, in flight (a shutdown waits for it).
    deps: Deps = context["deps"]
    work = publish(deps, client, str(event.get("user", "")))
    deps.inflight.spawn(work, first_time=context.get("first_time"))


async def on_refresh(
    ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: dict[str, Any]
) -> None:
    """`Refresh` on the Home tab: ack at once, then publish it again."""
    await ack()
    deps: Deps = context["deps"]
    work = publish(deps, client, str(body.get("user", {}).get("id", "")))
    deps.inflight.spawn(work, first_time=context.get("first_time"))


async def publish(deps: Deps, client: AsyncWebClient, user_id: str) -> None:
    """Build and publish the user's Home view; a failure is logged (the tab keeps its last view)."""
    try:
        await deps.gate.require_viewer(user_id, "see the kai-chatops Home tab")
    except errors.NotAllowed as e:
        view = not_allowed_view(str(e))
    else:
        view = home_view(await read_home(deps), deps.settings.slack.command)
    try:
        await client.views_publish(user_id=user_id, view=view)
    except SlackApiError as e:
        log.error("could not publish the Home tab of %s: %s", user_id, e.response.get("error"))


async def read_home(deps: Deps) -> Home:
    """Every configured cluster's report and held objects, the alerts and the recent changes,
    read at once; what cannot be read is said on the tab."""
    names = [cluster.name for cluster in deps.settings.clusters]
    statuses, held, (alerts, alerts_error), (changes, changes_error) = await asyncio.gather(
        asyncio.gather(*(_cluster_status(deps, name) for name in names)),
        asyncio.gather(*(_held(deps, name) for name in names)),
        _alerts(deps),
        _changes(deps),
    )
    approvals, approvals_error = await _approvals(deps)
    return Home(
        now=deps.clock(),
        clusters=tuple(statuses),
        alerts=tuple(alerts),
        held=tuple(ordered(h for found, _ in held for h in found)),
        alerts_error=alerts_error,
        held_errors=tuple(note for _, notes in held for note in notes),
        changes=tuple(changes),
        changes_error=changes_error,
        approvals=tuple(approvals),
        approvals_error=approvals_error,
    )


async def _cluster_status(deps: Deps, cluster: str) -> ClusterStatus:
    kube = deps.kube[cluster]

    async def report() -> ClusterStatus:
        try:
            found = await deps.health_checks.run(
                cluster, lambda: health.check_health(kube, deps.settings, deps.clock())
            )
        except errors.KubeError as e:
            return ClusterStatus(cluster, error=str(e))
        return ClusterStatus(cluster, found)

    status, (queues, queues_error) = await asyncio.gather(report(), _queues(deps, cluster))
    return replace(status, queues=queues, queues_error=queues_error)


async def _queues(deps: Deps, cluster: str) -> tuple[tuple[QueueMark, ...], str]:
    """The cluster's starved and over-quota KAI queues; none where KAI's CRDs are not served."""
    after = deps.settings.alerts.starved_after
    try:
        found = await workloads.read_starvation(deps.kube[cluster], now=deps.clock(), after=after)
    except errors.KubeNotFound:
        return (), ""
    except errors.KubeError as e:
        return (), f"cannot read them: {e}"
    return queue_marks(found), ""


async def _held(deps: Deps, cluster: str) -> tuple[list[HeldObject], list[str]]:
    keda_places = [
        (ref, ns)
        for ns in deps.settings.keda.namespaces
        for ref in (kinds.SCALED_JOB, kinds.SCALED_OBJECT)
    ]
    # Flux objects may be suspended in any namespace (a timed suspend too): one list per kind.
    flux_places = [(ref, None) for ref in FLUX_REFS]
    return await home_reads.read_held(deps.kube[cluster], keda_places, flux_places)


async def _alerts(deps: Deps) -> tuple[list[AlertLine], str]:
    try:
        states = await deps.alerts.list_alerts()
    except errors.BotError as e:
        return [], f"The alert state cannot be read: {e}"
    return alert_lines(states), ""


def alert_lines(states: Sequence[ClusterAlerts]) -> list[AlertLine]:
    """The active alerts as the Home tab lists them: critical first, then oldest first.

    The one place that reads the alert desk's state shape for the tab.
    """
    active = [a for state in states for a in state.alerts.values() if a.is_active]
    active.sort(key=lambda a: (a.observation.severity is not Severity.CRITICAL, a.first_seen))
    return [_alert_line(alert) for alert in active]


def _alert_line(alert: AlertState) -> AlertLine:
    seen = alert.observation
    silenced = alert.phase is Phase.SILENCED
    return AlertLine(
        alert_id=alert.alert_id,
        cluster=alert.where,
        critical=seen.severity is Severity.CRITICAL,
        subject=f"{seen.key.subject} {seen.key.condition}",
        title=seen.title,
        state=_STATES.get(alert.phase, "firing"),
        since=alert.firing_since,
        by=alert.silenced_by if silenced else alert.acked_by,
        until=alert.silenced_until if silenced else None,
        reason=alert.silence_reason if silenced else "",
    )


async def _changes(deps: Deps) -> tuple[list[ChangeLine], str]:
    try:
        changes = await deps.journal.recent(RECENT_CHANGES)
    except errors.BotError as e:
        return [], f"The recent changes cannot be read: {e}"
    return [
        ChangeLine(c.at, c.user, c.action, c.target, c.outcome, c.reason, c.note) for c in changes
    ], ""


async def run_changes(parsed: Changes, deps: Deps, invocation: Invocation) -> Message:
    """`/kai changes [--cluster NAME]`: every pause and suspend in force, on every configured
    cluster (or the one named), read as the Home tab reads them; a change made by hand shows
    when kai-chatops first saw it (the reminders keep that), when the alert state can say."""
    await deps.gate.require_viewer(invocation.user_id, "list the changes in force")
    names = [c.name for c in deps.settings.clusters]
    if parsed.cluster is not None:
        names = [deps.settings.cluster(parsed.cluster).name]
    found, first_seen = await asyncio.gather(
        asyncio.gather(*(_held(deps, name) for name in names)), _first_seen(deps, names)
    )
    message = render_changes.changes_message(
        ordered(h for held, _ in found for h in held),
        clusters=names,
        now=deps.clock(),
        first_seen=first_seen,
        notes=[note for _, notes in found for note in notes],
    )
    return {**message, "response_type": "ephemeral"}


async def _first_seen(deps: Deps, names: Sequence[str]) -> reminders.FirstSeen:
    """When kai-chatops first saw each change made by hand ({} when the state cannot say)."""
    try:
        states = [state for name in names for state in await deps.alerts.list_alerts(name)]
    except errors.BotError as e:
        log.warning("changes: the reminders' state cannot be read: %s", e)
        return {}
    return reminders.first_seen_by_hand(states)


async def _approvals(deps: Deps) -> tuple[list[ApprovalLine], str]:
    """The changes waiting for a second operator, soonest to expire first (`access.approval`)."""
    if deps.settings.access.approval is None or deps.approvals is None:
        return [], ""
    try:
        records = await deps.approvals.records()
    except errors.BotError as e:
        return [], f"The changes waiting for approval cannot be read: {e}"
    now = deps.clock()
    waiting = sorted(
        (r for r in records if r.state == "waiting" and not r.is_expired(now)),
        key=lambda r: r.expires_at,
    )
    return [ApprovalLine(r.id, r.requested_by, r.what, r.expires_at) for r in waiting], ""


RUNNERS: dict[type, Runner] = {Changes: run_changes}
EXECUTORS: dict[str, Executor] = {}


def register(app: AsyncApp) -> None:
    """Attach the `app_home_opened` event and the tab's `Refresh` button."""
    app.event("app_home_opened")(on_home_opened)
    app.action(REFRESH_ACTION)(on_refresh)
