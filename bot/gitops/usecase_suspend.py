"""Flux suspend and resume on one cluster: read, decide, merge-patch, and after a resume reconcile.

The use-case layer: decisions are `bot.gitops.suspend`'s; the reconcile after a resume is the one
`/kai reconcile` runs (`bot.gitops.usecase.run_flux`: a fresh `requestedAt`, then the wait on
`lastHandledReconcileAt`), as `flux resume` waits for the object to reconcile (fluxcd/flux2
cmd/flux/resume.go `reconcile`). Writes carry the resourceVersion read, so a concurrent change is
read again and decided again, never overwritten. No Slack here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from bot.core import conditions, errors
from bot.core.models import RawObject
from bot.gitops import usecase
from bot.gitops.plan import FluxReport, judge_flux_request_error
from bot.gitops.suspend import SuspendOutcome, SuspendPlan, plan_resume, plan_suspend
from bot.gitops.target import GitopsTarget
from bot.kube.ports import KubeWriter

log = logging.getLogger(__name__)

SuspendPlanMaker = Callable[[RawObject], SuspendPlan]


async def prepare(
    kube: KubeWriter, target: GitopsTarget, make_plan: SuspendPlanMaker
) -> SuspendPlan:
    """Read the object and decide (for the confirmation); writes nothing.

    Raises:
        UserError: the object does not exist; KubeError: the cluster refused or is unreachable.
    """
    return make_plan(await usecase.read_target(kube, target))


def suspending(
    target: GitopsTarget, *, user: str, reason: str, duration: timedelta | None, now: datetime
) -> SuspendPlanMaker:
    """The suspend decision for the object as it is read."""
    return lambda obj: plan_suspend(
        obj, target, user=user, reason=reason, duration=duration, now=now
    )


def resuming(target: GitopsTarget) -> SuspendPlanMaker:
    """The resume decision for the object as it is read."""
    return lambda obj: plan_resume(obj, target)


async def suspend(
    kube: KubeWriter, target: GitopsTarget, make_plan: SuspendPlanMaker
) -> SuspendOutcome:
    """Suspend the object as it now stands (see `apply_plan`)."""
    plan, written = await apply_plan(kube, target, make_plan)
    return SuspendOutcome(plan, written)


async def resume(
    kube: KubeWriter,
    target: GitopsTarget,
    make_plan: SuspendPlanMaker,
    *,
    user_id: str,
    clock: usecase.Clock,
    polling: usecase.Polling,
) -> SuspendOutcome:
    """Resume the object as it now stands, then request a reconcile and wait for its result.

    Once `spec.suspend: false` is written the resume is done: a reconcile that cannot be
    requested or followed after it is reported in the outcome, never raised.

    Raises:
        UserError: the object does not exist; KubeError: the resume itself failed.
    """
    plan, written = await apply_plan(kube, target, make_plan)
    if written is None:
        return SuspendOutcome(plan)
    step = usecase.FluxStep(target, written)
    started = asyncio.get_running_loop().time()
    try:
        report = await usecase.run_flux(
            kube, (step,), user_id=user_id, clock=clock, polling=polling
        )
    except errors.KubeError as e:
        log.warning("%s resumed, but its reconcile failed: %s", target.describe(), e)
        elapsed = asyncio.get_running_loop().time() - started
        report = FluxReport((judge_flux_request_error(target, e),), elapsed)
    return SuspendOutcome(plan, written, report)


async def apply_plan(
    kube: KubeWriter, target: GitopsTarget, make_plan: SuspendPlanMaker
) -> tuple[SuspendPlan, RawObject | None]:
    """Read, decide, merge-patch with the resourceVersion read; on 409 read and decide again.

    Returns the plan and the object as the patch returned it (None when the plan refused).

    Raises:
        UserError: the object does not exist; KubeError: forbidden, unreachable, or still
            conflicting after `usecase.CONFLICT_RETRIES` attempts.
    """
    for attempt in range(1, usecase.CONFLICT_RETRIES + 1):
        obj = await usecase.read_target(kube, target)
        plan = make_plan(obj)
        if plan.refusal:
            return plan, None
        version = conditions.as_text(conditions.metadata(obj).get("resourceVersion"))
        try:
            written = await kube.patch_object(
                target.ref, target.name, target.namespace, plan.patch_body(version)
            )
        except errors.KubeConflict:
            if attempt == usecase.CONFLICT_RETRIES:
                raise
            log.info("%s changed while we patched it; reading it again", target.describe())
            continue
        return plan, written
    raise AssertionError("unreachable")
