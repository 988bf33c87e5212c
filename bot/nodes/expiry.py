"""The timed-cordon sweep: uncordon our cordons whose `kai-chatops/cordon-until` has passed.

Like the timed KEDA pause (`bot.keda.expiry`): the end lives on the node, so any replica, or the
service after a restart, finds it; the node as it stands decides, so a cordon lifted or changed
by hand is left alone. One list of Nodes per sweep. Runs from the scheduler
(`bot.service.jobs_timed`); posts through `bot.access.audit`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from datetime import datetime

from bot.access import audit
from bot.access.audit import Change
from bot.core import errors
from bot.core.models import RawObject
from bot.kube import kinds
from bot.kube.ports import KubeWriter
from bot.nodes import render_cordon, usecase
from bot.nodes.cordon import CordonPlan, ExpiredCordon, find_expired_cordon, next_due, plan_uncordon
from bot.slack.gateway import SlackGateway

log = logging.getLogger(__name__)
EXPIRED = "timed cordon expired"  # the reason of an automatic uncordon's audit line
CHANGED_BY_HAND = "its cordon was changed by hand since"


@dataclass(frozen=True)
class CordonSweep:
    """What one pass uncordoned, and when the soonest timed cordon still in force is due."""

    uncordoned: list[CordonPlan]
    next_due: datetime | None


async def sweep(
    kube: KubeWriter,
    slack: SlackGateway | None,
    channel: str,
    now: datetime,
    *,
    journal: audit.Journal | None = None,
) -> CordonSweep:
    """Uncordon our nodes of one cluster whose `cordon-until` has passed.

    Each is posted in `channel` ("uncordoned automatically after 2h", who cordoned it and why)
    and is one audit line. A failure is logged and said (the next pass tries again); the others
    go on. A cluster whose Nodes cannot be listed is logged, and nothing is known to be due.
    """
    try:
        nodes = await kube.list_objects(kinds.NODE)
    except errors.KubeError as e:
        log.error("timed cordons: cannot list the nodes of %s: %s", kube.cluster, e)
        return CordonSweep([], None)
    found = [find_expired_cordon(obj, kube.cluster, now) for obj in nodes]
    expired = [e for e in found if e is not None]
    results = await asyncio.gather(
        *(_uncordon(kube, e, slack, channel, now, journal) for e in expired)
    )
    return CordonSweep([plan for plan in results if plan is not None], next_due(nodes, now))


async def _uncordon(
    kube: KubeWriter,
    expired: ExpiredCordon,
    slack: SlackGateway | None,
    channel: str,
    now: datetime,
    journal: audit.Journal | None,
) -> CordonPlan | None:
    target = expired.target

    def make_plan(obj: RawObject) -> CordonPlan:
        current = find_expired_cordon(obj, target.cluster, now)
        if current is None or current.record != expired.record:
            return CordonPlan("uncordon", target, expired.record, refusal=CHANGED_BY_HAND)
        return plan_uncordon(obj, target)

    record = Change("kai-chatops", "uncordon", target.describe(), "ok", now, EXPIRED)
    try:
        plan, written = await usecase.apply_plan(kube, target, make_plan)
    except errors.BotError as e:
        log.error("could not uncordon %s after its timed cordon: %s", target.describe(), e)
        why = " (its timed cordon was over)"
        await audit.record_error(
            record, e, who="kai-chatops", why=why, slack=slack, channel=channel, journal=journal
        )
        return None
    if written is None:
        log.info("timed cordon of %s left alone: %s", target.describe(), plan.refusal)
        return None
    change = replace(record, details=render_cordon.details(plan))
    text = render_cordon.auto_uncordon_text(expired)
    await audit.record(change, slack=slack, channel=channel, text=text, journal=journal)
    return plan
