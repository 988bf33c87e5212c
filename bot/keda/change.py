"""KEDA pause and resume as change kinds of `bot.changes` (docs/design.md §2 "KEDA pause").

Both ask Confirm: `prepare` checks `keda.namespaces` (and a pause's reason), reads the object
and plans; `apply` checks the namespace again, then pauses or resumes the object as it now
stands (`bot.keda.usecase`), waiting `wait` for KEDA's answer. The words are
`bot.keda.render_changes`'.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.access.audit import Change
from bot.changes.kinds import Ask, Described, Done, Run
from bot.changes.params import check_reason
from bot.config.settings import Settings
from bot.core import errors
from bot.keda import commands, pause, render_changes, usecase
from bot.keda.pause import KedaTarget, PauseOutcome, Plan
from bot.keda.usecase import AckWait
from bot.slack.blocks import Message

PAUSE, RESUME = "pause", "resume"


@dataclass(frozen=True)
class PauseParams:
    """A pause as asked: the object, why, and for how long (None: until resumed)."""

    target: KedaTarget
    reason: str = ""
    duration: timedelta | None = None


def pausing(parsed: commands.Pause, settings: Settings) -> PauseParams:
    """The pause `/kai pause` asks for (its cluster resolved).

    Raises:
        UserError: no cluster of that name is configured.
    """
    target = _target(parsed.kind, parsed.namespace, parsed.name, parsed.cluster, settings)
    return PauseParams(target, parsed.reason, parsed.duration)


def resuming(parsed: commands.Resume, settings: Settings) -> KedaTarget:
    """The object `/kai resume` resumes (its cluster resolved)."""
    return _target(parsed.kind, parsed.namespace, parsed.name, parsed.cluster, settings)


def _target(
    kind: str, namespace: str, name: str, cluster: str | None, settings: Settings
) -> KedaTarget:
    return KedaTarget(kind, namespace, name, settings.cluster(cluster).name)


def _described(
    word: str, target: KedaTarget, reason: str = "", duration: timedelta | None = None
) -> Described:
    where = (target.ref, target.namespace, target.name, target.cluster)
    return Described(word, *where, reason=reason, duration=duration)


class _KedaKind:
    """A KEDA change: confirmed, announced, and waiting `wait` for KEDA's answer."""

    announced = True

    def __init__(self, wait: AckWait) -> None:
        self.wait = wait


class PauseKind(_KedaKind):
    """`pause`: the annotations of a pause and our record, then KEDA's answer."""

    action = PAUSE
    params = PauseParams

    def describe(self, params: PauseParams) -> Described:
        return _described(PAUSE, params.target, params.reason, params.duration)

    async def prepare(self, params: PauseParams, run: Run) -> Ask | Message:
        target, now = params.target, run.clock()
        pause.check_namespace(target.namespace, run.settings.keda.namespaces)
        check_reason(params.reason)
        try:
            plan = await usecase.prepare_pause(
                run.kube,
                target,
                user=run.user,
                reason=params.reason,
                duration=params.duration,
                now=now,
            )
        except errors.KubeForbidden as e:
            return render_changes.refused_message(PAUSE, target, e)
        return _asking(plan, run, now, params.duration)

    async def apply(self, params: PauseParams, run: Run) -> Done:
        target, now = params.target, run.clock()
        pause.check_namespace(target.namespace, run.settings.keda.namespaces)
        try:
            outcome = await usecase.pause(
                run.kube,
                target,
                user=run.user,
                reason=params.reason,
                duration=params.duration,
                now=now,
                wait=self.wait,
            )
        except errors.KubeForbidden as e:
            return _refused(PAUSE, target, run.user, now, e)
        return _done(outcome, run, now, self.wait, params.reason)


class ResumeKind(_KedaKind):
    """`resume`: the pause keys and our record deleted, then KEDA's answer."""

    action = RESUME
    params = KedaTarget

    def describe(self, params: KedaTarget) -> Described:
        return _described(RESUME, params)

    async def prepare(self, params: KedaTarget, run: Run) -> Ask | Message:
        pause.check_namespace(params.namespace, run.settings.keda.namespaces)
        now = run.clock()
        try:
            plan = await usecase.prepare_resume(run.kube, params)
        except errors.KubeForbidden as e:
            return render_changes.refused_message(RESUME, params, e)
        return _asking(plan, run, now, None)

    async def apply(self, params: KedaTarget, run: Run) -> Done:
        pause.check_namespace(params.namespace, run.settings.keda.namespaces)
        now = run.clock()
        try:
            outcome = await usecase.resume(run.kube, params, wait=self.wait)
        except errors.KubeForbidden as e:
            return _refused(RESUME, params, run.user, now, e)
        return _done(outcome, run, now, self.wait, "")


def _asking(plan: Plan, run: Run, now: datetime, duration: timedelta | None) -> Ask | Message:
    """The Confirm of a plan that writes something; else what stands, and nothing asked."""
    if plan.nothing_to_do:
        return render_changes.nothing_message(plan, now)
    command = run.settings.slack.command
    lines = render_changes.confirm_lines(plan, duration=duration, now=now, command=command)
    return Ask(render_changes.confirm_title(plan), lines)


def _done(outcome: PauseOutcome, run: Run, now: datetime, wait: AckWait, reason: str) -> Done:
    """The clicker's result, and the record of a written change made at `now`."""
    reply = render_changes.result_message(outcome, wait_timeout=wait.timeout, now=now)
    if not outcome.written:
        return Done(reply)
    plan = outcome.plan
    state = outcome.after if plan.action == "pause" and outcome.after else plan.before
    change = Change(
        user=run.user,
        action=plan.action,
        target=plan.target.describe(),
        outcome=outcome.audit_outcome,
        at=now,
        note=outcome.audit_note,
        reason=reason,
        details=render_changes.pause_details(state) | {"requested_by": run.requested_by},
    )
    text = render_changes.announcement_text(
        outcome, user=run.user, requested_by=run.requested_by, now=now
    )
    return Done(reply, change, text)


def _refused(
    action: str, target: KedaTarget, user: str, now: datetime, error: errors.KubeError
) -> Done:
    """The cluster answered 403: nothing changed; its log line, and what RBAC is missing."""
    change = Change(user, action, target.describe(), "failed", now, note=str(error))
    return Done(render_changes.refused_message(action, target, error), change, refused=True)


def kinds(wait: AckWait) -> tuple[PauseKind, ResumeKind]:
    """KEDA's change kinds; a change waits `wait` for KEDA's `Paused` condition."""
    return PauseKind(wait), ResumeKind(wait)
