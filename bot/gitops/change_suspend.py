"""Flux suspend and resume as change kinds of `bot.changes` (docs/design.md §2).

Both ask Confirm: `prepare` reads the object and decides (a refusal answers at once: already
suspended, not suspended); `apply` decides again on the object as it now stands and patches
`spec.suspend`, a resume then reconciling and waiting as `flux resume` does
(`bot.gitops.usecase_suspend`). `resume KIND NS/NAME` is `flux-resume`: `resume` without a Flux
KIND stays KEDA's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from bot.access.audit import Change
from bot.changes.kinds import Ask, Described, Done, Run
from bot.changes.params import check_reason
from bot.config.settings import Settings
from bot.gitops import render_suspend, usecase, usecase_suspend
from bot.gitops.change import describe_target
from bot.gitops.commands import FluxResume, Suspend
from bot.gitops.suspend import SuspendPlan
from bot.gitops.target import GitopsTarget
from bot.slack.blocks import Message

SUSPEND, FLUX_RESUME = "suspend", "flux-resume"


@dataclass(frozen=True)
class SuspendParams:
    """A suspend as asked: the object, why, and for how long (None: until resumed)."""

    target: GitopsTarget
    reason: str = ""
    duration: timedelta | None = None


def suspending(parsed: Suspend, settings: Settings) -> SuspendParams:
    """The suspend `/kai suspend KIND NS/NAME` asks for (its cluster resolved)."""
    target = _target(parsed.kind, parsed.namespace, parsed.name, parsed.cluster, settings)
    return SuspendParams(target, parsed.reason, parsed.duration)


def resuming(parsed: FluxResume, settings: Settings) -> GitopsTarget:
    """The object `/kai resume KIND NS/NAME` resumes (its cluster resolved)."""
    return _target(parsed.kind, parsed.namespace, parsed.name, parsed.cluster, settings)


def _target(
    kind: str, namespace: str, name: str, cluster: str | None, settings: Settings
) -> GitopsTarget:
    return GitopsTarget(kind, namespace, name, settings.cluster(cluster).name)


class SuspendKind:
    """`suspend`: `spec.suspend: true` and our record."""

    action = SUSPEND
    params = SuspendParams
    announced = True

    def describe(self, params: SuspendParams) -> Described:
        described = describe_target(SUSPEND, params.target)
        return replace(described, reason=params.reason, duration=params.duration)

    async def prepare(self, params: SuspendParams, run: Run) -> Ask | Message:
        check_reason(params.reason)
        now = run.clock()
        plan = await usecase_suspend.prepare(run.kube, params.target, _plan(params, run.user, now))
        if plan.refusal:
            return _refusal(plan, run)
        lines = render_suspend.confirm_lines(plan, duration=params.duration, now=now)
        return Ask(render_suspend.confirm_title(plan), lines)

    async def apply(self, params: SuspendParams, run: Run) -> Done:
        target, now = params.target, run.clock()
        outcome = await usecase_suspend.suspend(run.kube, target, _plan(params, run.user, now))
        if outcome.written is None:
            return Done(_refusal(outcome.plan, run))
        until = outcome.plan.until
        details = render_suspend.details(outcome) | {"requested_by": run.requested_by}
        where = render_suspend.where(target)
        change = Change(run.user, SUSPEND, where, "ok", now, params.reason, details)
        text = render_suspend.suspend_announcement(outcome, run.user, until)
        settings = run.settings
        reply = render_suspend.suspend_result(
            outcome, until, settings.slack.command, settings.clusters[0].name
        )
        return Done(reply, change, text)


class FluxResumeKind:
    """`flux-resume`: `spec.suspend: false`, then a reconcile and its result."""

    action = FLUX_RESUME
    params = GitopsTarget
    announced = True

    def describe(self, params: GitopsTarget) -> Described:
        return describe_target("resume", params)

    async def prepare(self, params: GitopsTarget, run: Run) -> Ask | Message:
        plan = await usecase_suspend.prepare(run.kube, params, usecase_suspend.resuming(params))
        if plan.refusal:
            return _refusal(plan, run)
        lines = render_suspend.confirm_lines(plan, duration=None, now=run.clock())
        return Ask(render_suspend.confirm_title(plan), lines)

    async def apply(self, params: GitopsTarget, run: Run) -> Done:
        now = run.clock()
        polling = usecase.Polling(timeout=run.settings.gitops.reconcile_timeout.total_seconds())
        # Once written, the reconcile's end is in the outcome; what raises before is recorded
        # by the pipeline as this resume's failure.
        outcome = await usecase_suspend.resume(
            run.kube,
            params,
            usecase_suspend.resuming(params),
            user_id=run.user,
            clock=run.clock,
            polling=polling,
        )
        if outcome.written is None:
            return Done(_refusal(outcome.plan, run))
        details = render_suspend.details(outcome) | {"requested_by": run.requested_by}
        where = render_suspend.where(params)
        change = Change(run.user, "resume", where, outcome.outcome, now, "", details)
        text = render_suspend.resume_announcement(outcome, run.user)
        return Done(render_suspend.resume_result(outcome, run.user), change, text)


def _plan(params: SuspendParams, user: str, now: datetime) -> usecase_suspend.SuspendPlanMaker:
    return usecase_suspend.suspending(
        params.target, user=user, reason=params.reason, duration=params.duration, now=now
    )


def _refusal(plan: SuspendPlan, run: Run) -> Message:
    settings = run.settings
    return render_suspend.refusal_message(plan, settings.slack.command, settings.clusters[0].name)


def kinds() -> tuple[SuspendKind, FluxResumeKind]:
    """Flux suspend and resume's change kinds."""
    return SuspendKind(), FluxResumeKind()
