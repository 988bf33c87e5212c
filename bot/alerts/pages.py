"""What each incident owes PagerDuty (docs/design.md §2 **PagerDuty**): the Events API v2
events, owed in the incident's own state beside its Slack outbox and recorded once PagerDuty
took them. Pure: no I/O; `now` is an argument.

An incident of a listed severity owes `trigger` once it owes a root (a cluster's alert waiting
for the fleet, or followed in a fleet incident, has none: it pages nothing), then `acknowledge`
once someone acknowledged it and `resolve` once it resolved, each once, in that order
(`paged_to` remembers the last one owed, so a later save never owes it again). Its PagerDuty
events are a queue of their own: PagerDuty being down never holds a Slack reply back, and
Slack being down holds a page back only `ROOT_WAIT`, waiting for the link to its thread. A
resolved incident leaves the state once it owes neither (`outbox.put_incident`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Protocol

from bot.alerts import outbox
from bot.alerts.model import AlertState, ClusterAlerts, PageAction, RootStatus

ORDER = (PageAction.TRIGGER, PageAction.ACKNOWLEDGE, PageAction.RESOLVE)
# How long a trigger waits for its root's ts (the link to the thread) before it pages without
# it: a Slack outage must not hold the page back.
ROOT_WAIT = timedelta(seconds=60)


class PageSender(Protocol):
    """What incidents owe PagerDuty, sent by the alert drain (`bot.integrations.pagerduty`) on
    the Lease holder only."""

    async def drain(self, cluster: str) -> None: ...


class _NoPages:
    async def drain(self, cluster: str) -> None:
        """Nothing: `pagerduty` is not configured."""


NO_PAGES: PageSender = _NoPages()


def owes_nothing(state: ClusterAlerts) -> bool:
    """Whether `state` owes neither Slack (`outbox.owes_nothing`) nor PagerDuty anything."""
    return outbox.owes_nothing(state) and not paging(state)


def owe_pages(state: ClusterAlerts, severities: Collection[str]) -> ClusterAlerts:
    """`state` with every incident owing the PagerDuty events it has come to owe (none twice).
    Reminders of forgotten pauses are no page (they are not health alerts)."""
    alerts = {key: _owing(alert, severities) for key, alert in state.alerts.items()}
    closing = tuple(_owing(alert, severities) for alert in state.closing)
    if alerts == state.alerts and closing == state.closing:
        return state
    return replace(state, alerts=alerts, closing=closing)


def paging(state: ClusterAlerts) -> list[AlertState]:
    """The incidents owing PagerDuty something: resolved ones first (they are older)."""
    live = sorted(state.alerts.values(), key=lambda a: a.first_seen)
    return [a for a in (*state.closing, *live) if a.pages]


def head(alert: AlertState) -> PageAction | None:
    return alert.pages[0] if alert.pages else None


def is_due(alert: AlertState, now: datetime) -> bool:
    """Whether the head may be sent now: a trigger waits for its root's ts (the link in the
    page) for `ROOT_WAIT` after the incident fired; the rest follow at once."""
    if head(alert) is not PageAction.TRIGGER or alert.root_ts:
        return True
    fired = alert.firing_since or alert.first_seen
    return now - fired >= ROOT_WAIT


def sent(state: ClusterAlerts, incident: str, action: PageAction) -> ClusterAlerts:
    """PagerDuty took `action` of `incident` (or refused it for good): it is owed no more. A
    head that is no longer `action` (another replica recorded it first) changes nothing."""
    alert = outbox.find_incident(state, incident)
    if alert is None or head(alert) is not action:
        return state
    return outbox.put_incident(state, replace(alert, pages=alert.pages[1:]))


def _owing(alert: AlertState, severities: Collection[str]) -> AlertState:
    if alert.root_status is RootStatus.NONE and alert.pages[:1] == (PageAction.TRIGGER,):
        # Taken over before its trigger went out (a fleet incident pages instead): no page.
        return replace(alert, pages=(), paged_to=None)
    done = ORDER.index(alert.paged_to) + 1 if alert.paged_to is not None else 0
    new = tuple(action for action in _reached(alert, severities) if ORDER.index(action) >= done)
    if not new:
        return alert
    return replace(alert, pages=(*alert.pages, *new), paged_to=new[-1])


def _reached(alert: AlertState, severities: Collection[str]) -> tuple[PageAction, ...]:
    """Every event the incident's life has reached so far, once it pages at all."""
    if alert.paged_to is None and not _starts_paging(alert, severities):
        return ()
    acked = (PageAction.ACKNOWLEDGE,) if alert.acked_by else ()
    resolved = (PageAction.RESOLVE,) if alert.resolved_at is not None else ()
    return (PageAction.TRIGGER, *acked, *resolved)


def _starts_paging(alert: AlertState, severities: Collection[str]) -> bool:
    return (
        not alert.key.is_reminder
        and alert.resolved_at is None
        and alert.root_status is not RootStatus.NONE
        and alert.observation.severity.value in severities
    )
