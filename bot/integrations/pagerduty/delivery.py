"""Delivers what incidents owe PagerDuty (`bot.alerts.pages`), head first per incident, on
the Lease holder only, from the same stored state and drain as the Slack messages.

Each event owed stays in the state until PagerDuty answered 202 (or 400: an invalid event
never becomes valid; it is given up and logged); a 429, a 5xx, a timeout or a dropped
connection leaves it owed, tried again after a backoff and at the next drain, by whichever
replica holds the Lease then, after any restart. So an event is never lost, and the next one
of an incident is never sent before it. One whose answer never came may have been taken: it
is sent again with the same `dedup_key` (the incident's ID), which PagerDuty applies to the
same alert (PagerDuty/developer-docs/docs/events-API-v2/02-Trigger-Events.md, "Alert
De-Duplication"): a second trigger of an open alert opens none, an acknowledge or a resolve
again changes nothing. Nothing raises into the drain.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bot.alerts import outbox, pages
from bot.alerts.drain import Poster
from bot.alerts.model import AlertState, ClusterAlerts, PageAction
from bot.alerts.store import AlertStore, StoreUnavailable, update
from bot.core.metrics import Metrics
from bot.core.models import Sleep
from bot.integrations.pagerduty import events
from bot.integrations.pagerduty.client import EventsClient

log = logging.getLogger(__name__)

BACKOFFS = (2.0, 8.0, 30.0)  # seconds between tries within one drain (the docs: "after some time")


class PagerDutyDelivery:
    """The drain's PagerDuty side (`bot.alerts.pages.PageSender`)."""

    def __init__(
        self,
        store: AlertStore,
        client: EventsClient,
        routing_key: str,
        poster: Poster,
        *,
        channel: str,
        workspace_url: Callable[[], Awaitable[str]],
        metrics: Metrics,
        sleep: Sleep = asyncio.sleep,
        backoffs: Sequence[float] = BACKOFFS,
    ) -> None:
        self._store, self._client, self._key = store, client, routing_key
        self._poster, self._channel, self._workspace_url = poster, channel, workspace_url
        self._metrics, self._sleep, self._backoffs = metrics, sleep, tuple(backoffs)

    async def drain(self, cluster: str) -> None:
        """Send what `cluster`'s incidents owe PagerDuty now. Never raises for PagerDuty or
        store trouble (logged; what is left is sent at a later drain)."""
        try:
            state = (await self._store.load(cluster)).state
            for alert in pages.paging(state):
                await self._deliver(cluster, alert.incident)
        except StoreUnavailable as e:
            log.error("PagerDuty events of cluster %s: cannot use the state store: %s", cluster, e)

    async def _deliver(self, cluster: str, incident: str) -> None:
        """One incident's events, in order, until none is owed or PagerDuty keeps refusing."""
        tries = 0
        while self._poster.is_holder():
            alert = outbox.find_incident((await self._store.load(cluster)).state, incident)
            action = pages.head(alert) if alert is not None else None
            if alert is None or action is None or not pages.is_due(alert, self._poster.clock()):
                return
            if await self._send(cluster, alert, action):
                tries = 0
                continue
            if tries >= len(self._backoffs):
                log.warning("%s: PagerDuty %s left for the next drain", incident, action.value)
                return
            await self._sleep(self._backoffs[tries])
            tries += 1

    async def _send(self, cluster: str, alert: AlertState, action: PageAction) -> bool:
        """Send one event; whether it is owed no more (recorded as sent)."""
        link = await self._link(alert)
        body = events.event(alert, action, self._key, link)
        answer = await self._client.enqueue(body, within=self._poster.acting_left())
        verdict = events.outcome(answer.status)
        self._metrics.pagerduty_events.labels(action.value, verdict.value).inc()
        if verdict is events.Outcome.RETRY:
            log.warning(
                "%s: PagerDuty %s not taken (%s)", alert.incident, action.value, answer.detail
            )
            return False
        if verdict is events.Outcome.REFUSED:
            reasons = "; ".join(answer.errors) or answer.detail
            log.error(
                "%s: PagerDuty refuses %s for good: %s", alert.incident, action.value, reasons
            )
        await update(self._store, cluster, _sent(alert.incident, action))
        return True

    async def _link(self, alert: AlertState) -> str:
        channel = alert.root_channel or self._channel
        return events.thread_link(await self._workspace_url(), channel, alert.root_ts)


class WorkspaceUrl:
    """The workspace's own address (`auth.test`'s `url`, like `https://team.slack.com/`), asked
    when a page first needs it and kept; Slack's own address while it cannot be asked, asked
    again only `ASK_AGAIN_AFTER` later (a Slack outage must not slow every page down)."""

    ASK_AGAIN_AFTER = 600.0  # seconds

    def __init__(
        self,
        auth_test: Callable[[], Awaitable[Any]],
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._auth_test, self._monotonic = auth_test, monotonic
        self._url = ""
        self._failed_at: float | None = None

    async def __call__(self) -> str:
        if not self._url and not self._failed_recently():
            try:
                self._url = str((await self._auth_test()).get("url") or "")
            except Exception as e:  # whatever failed, a page never waits on its link's base
                self._failed_at = self._monotonic()
                log.warning("auth.test failed (%s); pages link to %s", e, events.SLACK_URL)
        return self._url or events.SLACK_URL

    def _failed_recently(self) -> bool:
        failed = self._failed_at
        return failed is not None and self._monotonic() - failed < self.ASK_AGAIN_AFTER


def _sent(
    incident: str, action: PageAction
) -> Callable[[ClusterAlerts], tuple[ClusterAlerts, None]]:
    return lambda state: (pages.sent(state, incident, action), None)
