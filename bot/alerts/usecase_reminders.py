"""Reminders of the pauses and suspends without an end that a sweep saw held: saved as
incidents of the cluster's alert state with what they owe (the rules are the pure
`bot.alerts.reminders`'), then delivered on the Lease holder like every alert message.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.alerts import reminders
from bot.alerts.machine import AlertStep
from bot.alerts.store import StoreUnavailable
from bot.alerts.usecase_context import LOGGER, DeskContext
from bot.rules.held import HeldObject, KindScope

log = logging.getLogger(LOGGER)


async def remind(
    context: DeskContext,
    cluster: str,
    held: Sequence[HeldObject],
    places: Sequence[KindScope],
    now: datetime,
) -> datetime | None:
    """`AlertDesk.remind`: nothing when `changes.remind_after` is 0. Returns when the next
    reminder falls due (`reminders.next_due`). Never raises for store or Slack trouble
    (logged; the next sweep tries again)."""
    after = context.settings.changes.remind_after
    if after <= timedelta(0):
        return None
    policy = reminders.ReminderPolicy(after, context.channel)
    step: AlertStep = lambda s: reminders.remind(s, held, places, now, policy)  # noqa: E731
    async with context.locks[cluster]:
        try:
            stepped = await context.apply(cluster, step)
        except StoreUnavailable as e:
            log.error("reminders of cluster %s: cannot use the state store: %s", cluster, e)
            return None
    await context.deliver(cluster, None, None)
    return reminders.next_due(stepped.state, held, places, after)
