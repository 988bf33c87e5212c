"""Listeners for `/kai suspend KIND NS/NAME` and `/kai resume KIND NS/NAME` (Flux; docs/design.md
§1.3, 2).

Operators only, checked before any cluster call and again at the click; both read the object and
ask Confirm/Cancel. A valid click re-reads and patches `spec.suspend` (a resume then reconciles
and waits, as `flux resume` does); the change is posted in the channel and is one audit log line.
`resume [scaledobject] NS/NAME` without a Flux KIND stays KEDA's (`handlers.keda`).
"""

from __future__ import annotations

from datetime import timedelta

from slack_bolt.async_app import AsyncApp

from bot.access.audit import Change
from bot.access.confirmations import AskedChange
from bot.gitops import render_suspend as words
from bot.gitops import usecase, usecase_suspend
from bot.gitops.commands import FluxResume, Suspend
from bot.gitops.suspend import SuspendPlan
from bot.gitops.target import GitopsTarget
from bot.keda.pause import check_reason
from bot.service.deps import Deps
from bot.slack.blocks import Message
from handlers import access, confirm
from handlers.invocation import Executor, Invocation, Runner


async def ask_suspend(parsed: Suspend, deps: Deps, invocation: Invocation) -> Message:
    """`/kai suspend KIND NS/NAME [for DURATION] [REASON]`: check, read, ask to confirm."""
    target = _target(parsed.kind, parsed.namespace, parsed.name, parsed.cluster, deps)
    await deps.gate.require_operator(invocation.user_id, f"suspend {target.describe()}")
    await deps.gate.person(invocation.user_id)
    check_reason(parsed.reason)
    now = deps.clock()
    make_plan = usecase_suspend.suspending(
        target,
        user=invocation.user_id,
        reason=parsed.reason,
        duration=parsed.duration,
        now=now,
    )
    plan = await usecase_suspend.prepare(deps.kube_for(target.cluster), target, make_plan)
    if plan.refusal:
        return _refusal(plan, deps)
    seconds = str(int(parsed.duration.total_seconds())) if parsed.duration else ""
    params = target.params() | {"reason": parsed.reason, "seconds": seconds}
    lines = words.confirm_lines(plan, duration=parsed.duration, now=now)
    title = words.confirm_title(plan)
    return confirm.ask(deps, invocation, action="suspend", params=params, title=title, lines=lines)


async def ask_resume(parsed: FluxResume, deps: Deps, invocation: Invocation) -> Message:
    """`/kai resume KIND NS/NAME`: check, read, ask to confirm."""
    target = _target(parsed.kind, parsed.namespace, parsed.name, parsed.cluster, deps)
    await deps.gate.require_operator(invocation.user_id, f"resume {target.describe()}")
    await deps.gate.person(invocation.user_id)
    kube = deps.kube_for(target.cluster)
    plan = await usecase_suspend.prepare(kube, target, usecase_suspend.resuming(target))
    if plan.refusal:
        return _refusal(plan, deps)
    lines = words.confirm_lines(plan, duration=None, now=deps.clock())
    return confirm.ask(
        deps,
        invocation,
        action="flux-resume",
        params=target.params(),
        title=words.confirm_title(plan),
        lines=lines,
    )


async def execute_suspend(pending: AskedChange, deps: Deps, clicker: str) -> Message:
    """Confirmed suspend: suspend the object as it now stands, record it, say so."""
    target = GitopsTarget.from_params(pending.params)
    seconds = pending.params.get("seconds")
    duration = timedelta(seconds=int(seconds)) if seconds else None
    reason = pending.params.get("reason", "")
    now = deps.clock()
    make_plan = usecase_suspend.suspending(
        target, user=clicker, reason=reason, duration=duration, now=now
    )
    # An error is raised to `handlers.confirm`, which writes its one audit line.
    kube = await access.kube_for_change(deps, target.cluster, clicker)
    outcome = await usecase_suspend.suspend(kube, target, make_plan)
    if outcome.written is None:
        return _refusal(outcome.plan, deps)
    until = outcome.plan.until
    details = words.details(outcome) | {"requested_by": pending.requested_by}
    details |= access.acting_details(kube)
    change = Change(clicker, "suspend", words.where(target), "ok", now, reason, details)
    await confirm.announce(
        deps, pending, change, words.suspend_announcement(outcome, clicker, until)
    )
    default = deps.settings.clusters[0].name
    return words.suspend_result(outcome, until, deps.settings.slack.command, default)


async def execute_resume(pending: AskedChange, deps: Deps, clicker: str) -> Message:
    """Confirmed resume: `spec.suspend: false`, a reconcile and its result, then the record."""
    target = GitopsTarget.from_params(pending.params)
    now = deps.clock()
    polling = usecase.Polling(timeout=deps.settings.gitops.reconcile_timeout.total_seconds())
    # An error (the resume was not written, or maybe was) is raised to `handlers.confirm`, which
    # writes its one audit line; once written, the reconcile's end is in the outcome.
    kube = await access.kube_for_change(deps, target.cluster, clicker)
    outcome = await usecase_suspend.resume(
        kube,
        target,
        usecase_suspend.resuming(target),
        user_id=clicker,
        clock=deps.clock,
        polling=polling,
    )
    if outcome.written is None:
        return _refusal(outcome.plan, deps)
    details = words.details(outcome) | {"requested_by": pending.requested_by}
    details |= access.acting_details(kube)
    change = Change(clicker, "resume", words.where(target), outcome.outcome, now, "", details)
    await confirm.announce(deps, pending, change, words.resume_announcement(outcome, clicker))
    return words.resume_result(outcome, clicker)


def _refusal(plan: SuspendPlan, deps: Deps) -> Message:
    settings = deps.settings
    return words.refusal_message(plan, settings.slack.command, settings.clusters[0].name)


def _target(kind: str, namespace: str, name: str, cluster: str | None, deps: Deps) -> GitopsTarget:
    return GitopsTarget(kind, namespace, name, deps.settings.cluster(cluster).name)


RUNNERS: dict[type, Runner] = {Suspend: ask_suspend, FluxResume: ask_resume}
EXECUTORS: dict[str, Executor] = {"suspend": execute_suspend, "flux-resume": execute_resume}


def register(app: AsyncApp) -> None:
    """No buttons of its own: Confirm and Cancel are shared (`handlers.confirm`)."""
