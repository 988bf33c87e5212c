"""Cordon and uncordon as change kinds of `bot.changes` (docs/design.md §2 "GPU nodes").

Both ask Confirm: `prepare` reads the node and decides (an unknown node is answered with the GPU
nodes there are; a node already cordoned, or not cordoned, is answered at once); `apply` decides
again on the node as it now stands and patches `spec.unschedulable` and our record only
(`bot.nodes.usecase`). A node without GPUs may be cordoned: the Confirm says so. The words are
`bot.nodes.render_cordon`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.access.audit import Change
from bot.changes.kinds import Ask, Described, Done, Run
from bot.changes.params import check_reason
from bot.config.settings import Settings
from bot.core import errors
from bot.kube import kinds
from bot.nodes import commands, cordon, render_cordon, usecase
from bot.nodes.cordon import CordonPlan, NodeTarget
from bot.slack.blocks import Message

CORDON, UNCORDON = "cordon", "uncordon"


@dataclass(frozen=True)
class CordonParams:
    """A cordon as asked: the node, why, and for how long (None: until uncordoned)."""

    target: NodeTarget
    reason: str = ""
    duration: timedelta | None = None


def cordoning(parsed: commands.Cordon, settings: Settings) -> CordonParams:
    """The cordon `/kai cordon` asks for (its cluster resolved).

    Raises:
        UserError: no cluster of that name is configured.
    """
    target = NodeTarget(parsed.node, settings.cluster(parsed.cluster).name)
    return CordonParams(target, parsed.reason, parsed.duration)


def uncordoning(parsed: commands.Uncordon, settings: Settings) -> NodeTarget:
    """The node `/kai uncordon` uncordons (its cluster resolved)."""
    return NodeTarget(parsed.node, settings.cluster(parsed.cluster).name)


def _described(
    word: str, target: NodeTarget, reason: str = "", duration: timedelta | None = None
) -> Described:
    """A node has no namespace: `Described.subject` reads `Node gpu-node-1`."""
    where = (kinds.NODE, "", target.name, target.cluster)
    return Described(word, *where, reason=reason, duration=duration)


class CordonKind:
    """`cordon`: `spec.unschedulable: true` and our record."""

    action = CORDON
    params = CordonParams
    announced = True

    def describe(self, params: CordonParams) -> Described:
        return _described(CORDON, params.target, params.reason, duration=params.duration)

    async def prepare(self, params: CordonParams, run: Run) -> Ask | Message:
        check_reason(params.reason)
        now = run.clock()
        try:
            plan = await usecase.prepare(run.kube, params.target, _plan(params, run.user, now))
        except errors.KubeForbidden as e:
            return render_cordon.refused_message(CORDON, params.target, e)
        if plan.refusal:
            return render_cordon.refusal_message(plan, run.settings.slack.command)
        lines = render_cordon.confirm_lines(plan, duration=params.duration, now=now)
        return Ask(render_cordon.confirm_title(plan), lines)

    async def apply(self, params: CordonParams, run: Run) -> Done:
        now = run.clock()
        try:
            plan, written = await usecase.apply_plan(
                run.kube, params.target, _plan(params, run.user, now)
            )
        except errors.KubeForbidden as e:
            return _refused(CORDON, params.target, run.user, now, e)
        if written is None:
            return Done(render_cordon.refusal_message(plan, run.settings.slack.command))
        change = _change(plan, run, now, params.reason)
        reply = render_cordon.cordon_result(plan, run.settings.slack.command)
        return Done(reply, change, render_cordon.announcement(plan, run.user))


class UncordonKind:
    """`uncordon`: `spec.unschedulable: false`, our record deleted."""

    action = UNCORDON
    params = NodeTarget
    announced = True

    def describe(self, params: NodeTarget) -> Described:
        return _described(UNCORDON, params)

    async def prepare(self, params: NodeTarget, run: Run) -> Ask | Message:
        try:
            plan = await usecase.prepare(run.kube, params, _unplan(params))
        except errors.KubeForbidden as e:
            return render_cordon.refused_message(UNCORDON, params, e)
        if plan.refusal:
            return render_cordon.refusal_message(plan, run.settings.slack.command)
        lines = render_cordon.confirm_lines(plan, duration=None, now=run.clock())
        return Ask(render_cordon.confirm_title(plan), lines)

    async def apply(self, params: NodeTarget, run: Run) -> Done:
        now = run.clock()
        try:
            plan, written = await usecase.apply_plan(run.kube, params, _unplan(params))
        except errors.KubeForbidden as e:
            return _refused(UNCORDON, params, run.user, now, e)
        if written is None:
            return Done(render_cordon.refusal_message(plan, run.settings.slack.command))
        change = _change(plan, run, now, "")
        return Done(
            render_cordon.uncordon_result(plan), change, render_cordon.announcement(plan, run.user)
        )


def _plan(params: CordonParams, user: str, now: datetime) -> usecase.CordonPlanMaker:
    return lambda obj: cordon.plan_cordon(
        obj, params.target, user=user, reason=params.reason, duration=params.duration, now=now
    )


def _unplan(target: NodeTarget) -> usecase.CordonPlanMaker:
    return lambda obj: cordon.plan_uncordon(obj, target)


def _change(plan: CordonPlan, run: Run, now: datetime, reason: str) -> Change:
    details = render_cordon.details(plan) | {"requested_by": run.requested_by}
    return Change(run.user, plan.action, plan.target.describe(), "ok", now, reason, details)


def _refused(
    action: str, target: NodeTarget, user: str, now: datetime, error: errors.KubeError
) -> Done:
    """The cluster answered 403 (RBAC, impersonation, the admission policy): nothing changed."""
    change = Change(user, action, target.describe(), "failed", now, note=str(error))
    return Done(render_cordon.refused_message(action, target, error), change, refused=True)


def kinds_of() -> tuple[CordonKind, UncordonKind]:
    """Cordon and uncordon's change kinds."""
    return CordonKind(), UncordonKind()
