"""The timed-suspend job: resume our Flux suspends whose `kai-chatops/suspend-until` has passed.

Like the timed KEDA pause (`bot.keda.expiry`): the expiry lives on the object, so any replica, or
the service after a restart, finds it; the object as it stands decides, so a suspend resumed or
changed by hand is left alone. Timed suspends are found in every namespace (one cluster-wide list
per Flux kind). A resume is followed by a reconcile, as `/kai resume` does. Runs from the
scheduler (`bot.service.schedule`); posts through `bot.access.audit`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field, replace
from datetime import datetime

from bot.access import audit
from bot.access.audit import Change
from bot.config.settings import Settings
from bot.core import errors
from bot.core.models import RawObject
from bot.gitops import kinds, render_suspend, usecase, usecase_suspend
from bot.gitops.suspend import (
    ExpiredSuspend,
    SuspendOutcome,
    SuspendPlan,
    find_expired_suspend,
    next_due,
    plan_resume,
)
from bot.kube.kinds import ResourceRef
from bot.kube.ports import KubeReader, KubeWriter
from bot.rules.held import HeldObject, KindScope, suspended_objects
from bot.slack.gateway import SlackGateway

log = logging.getLogger(__name__)

REFS = tuple(kinds.FLUX[kind] for kind in render_suspend.KIND_WORDS)
CHANGED_BY_HAND = "its suspend was changed by hand since"
EXPIRED = "timed suspend expired"  # the reason of an automatic resume's audit line


@dataclass(frozen=True)
class SuspendSweep:
    """What one pass resumed, and when the soonest timed suspend still running is due."""

    outcomes: list[SuspendOutcome]
    next_due: datetime | None
    held: list[HeldObject] = field(default_factory=list)  # suspended, for the reminders
    listed: list[KindScope] = field(default_factory=list)  # the kinds listed in full


async def sweep(
    kube: KubeWriter,
    slack: SlackGateway | None,
    settings: Settings,
    now: datetime,
    *,
    polling: usecase.Polling | None = None,
    journal: audit.Journal | None = None,
) -> SuspendSweep:
    """Resume our Flux suspends, in every namespace, whose `suspend-until` has passed, on one
    cluster.

    Each is reconciled, then posted in `slack.alert_channel` ("resumed automatically after 2h",
    who suspended it and why, the reconcile's result); each try is one audit line. A resume that
    fails is logged (the next pass tries again) and the others go on; one whose write got no
    answer is also said in the channel.
    """
    pages = await asyncio.gather(*(_list_quietly(kube, ref) for ref in REFS))
    objs = [obj for page in pages if page is not None for obj in page]
    listed: list[KindScope] = [
        (r.kind, None) for r, p in zip(REFS, pages, strict=True) if p is not None
    ]
    found = [find_expired_suspend(obj, kube.cluster, now) for obj in objs]
    expired = [e for e in found if e is not None]
    timeout = settings.gitops.reconcile_timeout.total_seconds()
    wait = polling or usecase.Polling(timeout=timeout)
    channel = settings.slack.alert_channel
    results = await asyncio.gather(
        *(_resume_expired(kube, e, slack, channel, now, wait, journal) for e in expired)
    )
    held = suspended_objects(objs, kube.cluster)
    return SuspendSweep([o for o in results if o is not None], next_due(objs, now), held, listed)


async def _resume_expired(
    kube: KubeWriter,
    expired: ExpiredSuspend,
    slack: SlackGateway | None,
    channel: str,
    now: datetime,
    polling: usecase.Polling,
    journal: audit.Journal | None,
) -> SuspendOutcome | None:
    target = expired.target

    def make_plan(obj: RawObject) -> SuspendPlan:
        current = find_expired_suspend(obj, target.cluster, now)
        if current is None or current.record != expired.record:
            return SuspendPlan("resume", target, expired.record, refusal=CHANGED_BY_HAND)
        return plan_resume(obj, target)

    record = Change("kai-chatops", "resume", render_suspend.where(target), "ok", now, EXPIRED)
    try:
        outcome = await usecase_suspend.resume(
            kube, target, make_plan, user_id="kai-chatops", clock=lambda: now, polling=polling
        )
    except errors.BotError as e:
        log.error(
            "could not resume %s after its timed suspend: %s", render_suspend.where(target), e
        )
        why = " (its timed suspend was over)"
        await audit.record_error(
            record, e, who="kai-chatops", why=why, slack=slack, channel=channel, journal=journal
        )
        return None
    if outcome.written is None:
        log.info(
            "timed suspend of %s left alone: %s", render_suspend.where(target), outcome.plan.refusal
        )
        return None
    change = replace(record, outcome=outcome.outcome, details=render_suspend.details(outcome))
    text = render_suspend.auto_resume_announcement(expired, outcome)
    await audit.record(change, slack=slack, channel=channel, text=text, journal=journal)
    return outcome


async def _list_quietly(kube: KubeReader, ref: ResourceRef) -> list[RawObject] | None:
    """One kind's objects in every namespace; a failure is logged so the others are checked,
    and is None: nobody knows what is suspended of that kind."""
    try:
        return await kube.list_objects(ref)
    except errors.KubeNotFound:  # this kind is not served here (Flux, or that source, absent)
        return []
    except errors.KubeError as e:
        log.error("timed suspends: cannot list %s in all namespaces: %s", ref.qualified, e)
        return None
