"""The timed-pause job: resume our KEDA pauses whose `kai-chatops/pause-until` has passed.

The expiry lives on the object, so any replica, or the service after a restart, finds it; the
annotations as they stand decide, so a pause resumed or changed by hand is left alone. Runs
from the scheduler (`bot/service/schedule.py`) with the gateways passed in; posts through
`bot.access.audit`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime

from bot.access import audit
from bot.access.audit import Change
from bot.config.settings import Settings
from bot.core import errors
from bot.core.models import RawObject
from bot.keda import render_changes
from bot.keda.pause import (
    ExpiredPause,
    PauseOutcome,
    Plan,
    find_expired_pause,
    next_due,
    plan_resume,
)
from bot.keda.usecase import REFS, AckWait, apply_plan
from bot.kube import kinds
from bot.kube.ports import KubeReader, KubeWriter
from bot.rules import keda
from bot.rules.held import HeldObject, KindScope, paused_objects
from bot.slack.gateway import SlackGateway

log = logging.getLogger(__name__)
EXPIRED = "timed pause expired"  # the reason of an automatic resume's audit line


@dataclass(frozen=True)
class PauseSweep:
    """What one pass found: the resumes that wrote something, when the next pause is due, and
    what it saw paused (`held`) in the places it could list in full (`listed`), for the
    reminders of pauses without an end."""

    outcomes: list[PauseOutcome]
    next_due: datetime | None
    held: list[HeldObject] = field(default_factory=list)
    listed: list[KindScope] = field(default_factory=list)


async def resume_expired_pauses(
    kube: KubeWriter,
    slack: SlackGateway | None,
    settings: Settings,
    now: datetime,
    *,
    wait: AckWait | None = None,
    journal: audit.Journal | None = None,
) -> list[PauseOutcome]:
    """Resume our pauses in `keda.namespaces` whose `pause-until` has passed, on one cluster.

    Each resume is posted in `slack.alert_channel` ("resumed automatically after 2h", who paused
    it and why) and logged. An object resumed or re-paused by hand is left alone, as is one that
    changes between this read and the patch (409, re-read, re-decided). A failure is logged and
    the others go on.

    Returns:
        The resumes that wrote something.
    """
    return (await sweep(kube, slack, settings, now, wait=wait, journal=journal)).outcomes


async def sweep(
    kube: KubeWriter,
    slack: SlackGateway | None,
    settings: Settings,
    now: datetime,
    *,
    wait: AckWait | None = None,
    journal: audit.Journal | None = None,
) -> PauseSweep:
    """`resume_expired_pauses`, also saying when the soonest pause still running is due."""
    places = [(ref, ns) for ns in settings.keda.namespaces for ref in REFS]
    pages = await asyncio.gather(*(_list_quietly(kube, ref, ns) for ref, ns in places))
    objs = [obj for page in pages if page is not None for obj in page]
    listed: list[KindScope] = [
        (ref.kind, ns) for (ref, ns), page in zip(places, pages, strict=True) if page is not None
    ]
    found = [find_expired_pause(obj, kube.cluster, now) for obj in objs]
    expired = [e for e in found if e is not None]
    channel = settings.slack.alert_channel
    results = await asyncio.gather(
        *(
            _resume_expired(kube, e, slack, channel, now, wait or AckWait(), journal)
            for e in expired
        )
    )
    outcomes = [outcome for outcome in results if outcome is not None]
    return PauseSweep(outcomes, next_due(objs, now), paused_objects(objs, kube.cluster), listed)


async def _resume_expired(
    kube: KubeWriter,
    expired: ExpiredPause,
    slack: SlackGateway | None,
    channel: str,
    now: datetime,
    wait: AckWait,
    journal: audit.Journal | None = None,
) -> PauseOutcome | None:
    target = expired.target

    def make_plan(obj: RawObject) -> Plan:
        current = find_expired_pause(obj, target.cluster, now)
        if current is None or not _same_pause(current.state, expired.state):
            why = "its pause was changed by hand since"
            return Plan("resume", target, keda.read_pause_state(obj), nothing_to_do=why)
        return plan_resume(target, obj)

    try:
        outcome = await apply_plan(kube, target, make_plan, wait)
    except errors.BotError as e:
        log.error("could not resume %s after its timed pause: %s", target.describe(), e)
        record = Change("kai-chatops", "resume", target.describe(), "failed", now, EXPIRED)
        why = " (its timed pause was over)"
        await audit.record_error(
            record, e, who="kai-chatops", why=why, slack=slack, channel=channel, journal=journal
        )
        return None
    if not outcome.written:
        log.info("timed pause of %s left alone: %s", target.describe(), outcome.plan.nothing_to_do)
        return None
    change = Change(
        user="kai-chatops",
        action="resume",
        target=target.describe(),
        outcome=outcome.audit_outcome,
        at=now,
        note=outcome.audit_note,
        reason=EXPIRED,
        details=render_changes.pause_details(expired.state),
    )
    text = render_changes.auto_resume_text(expired, outcome)
    await audit.record(change, slack=slack, channel=channel, text=text, journal=journal)
    return outcome


def _same_pause(a: keda.PauseState, b: keda.PauseState) -> bool:
    """Whether two reads show the same pause record (KEDA's condition may move meanwhile)."""
    fields = ("paused_value", "paused_replicas", "paused_by", "paused_at", "reason", "until")
    return all(getattr(a, f) == getattr(b, f) for f in fields)


async def _list_quietly(
    kube: KubeReader, ref: kinds.ResourceRef, namespace: str
) -> list[RawObject] | None:
    """One namespace's objects (none where KEDA is not installed); a failure is logged so the
    other namespaces are still checked, and is None: nobody knows what is paused there."""
    try:
        return await kube.list_objects(ref, namespace)
    except errors.KubeNotFound:
        return []
    except errors.KubeError as e:
        log.error("timed pauses: cannot list %s in %s: %s", ref.qualified, namespace, e)
        return None
