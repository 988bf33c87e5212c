"""Listeners for `/kai scaledjobs`, `/kai pause` and `/kai resume` (docs/design.md §1.3, 2 "KEDA
pause").

Viewers may list. Pause and resume are for operators, in `keda.namespaces` only, both checked
before any cluster call; they read the object and ask Confirm/Cancel. A valid click re-reads,
patches, reads back and waits for KEDA; the change is posted in the channel and logged.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from slack_bolt.async_app import AsyncApp

from bot.access import audit
from bot.access.audit import Change
from bot.access.confirmations import AskedChange
from bot.config.settings import Settings
from bot.core import errors
from bot.keda import commands, usecase
from bot.keda import pause as keda_pause
from bot.keda import render as render_keda
from bot.keda import render_changes as words
from bot.keda.pause import KedaTarget, PauseOutcome
from bot.service.deps import Deps
from bot.slack.blocks import Message
from handlers import access, confirm
from handlers.invocation import Executor, Invocation, Runner

# How long a confirmed change waits for KEDA's Paused condition; tests shorten it, since the
# simulated cluster runs no KEDA controller.
ACK_WAIT = usecase.AckWait()


async def run_scaledjobs(
    parsed: commands.ScaledJobs, deps: Deps, invocation: Invocation
) -> Message:
    """`/kai scaledjobs [NAMESPACE | --all-namespaces]`: verdicts and pauses, privately."""
    await deps.gate.require_viewer(invocation.user_id, "list ScaledJobs")
    kube = deps.kube_for(parsed.cluster)
    namespaces, scope = listing_scope(parsed, deps.settings)
    try:
        rows = await usecase.list_rows(kube, namespaces)
    except errors.KubeForbidden as e:
        if namespaces is not None:
            raise
        example = (deps.settings.keda.namespaces or ("NAMESPACE",))[0]
        raise errors.UserError(
            "Listing across all namespaces needs cluster-wide list rights on scaledjobs and "
            "scaledobjects (keda.sh), which kai-chatops lacks here; list one namespace instead, "
            f"e.g. `{deps.settings.slack.command} scaledjobs {example}`. ({e})"
        ) from e
    message = render_keda.listing_message(
        rows,
        cluster=kube.cluster,
        scope=scope,
        now=deps.clock(),
        command=deps.settings.slack.command,
    )
    return {**message, "response_type": "ephemeral"}


def listing_scope(
    parsed: commands.ScaledJobs, settings: Settings
) -> tuple[Sequence[str] | None, str]:
    """The namespaces to list (None: cluster-wide) and how the reply names them.

    Raises:
        UserError: no namespace given and `keda.namespaces` is empty.
    """
    if parsed.all_namespaces:
        return None, "all namespaces"
    if parsed.namespace:
        return [parsed.namespace], f"namespace {parsed.namespace}"
    configured = list(settings.keda.namespaces)
    if not configured:
        raise errors.UserError(
            "keda.namespaces is empty in the configuration: give a NAMESPACE or --all-namespaces."
        )
    label = "namespace" if len(configured) == 1 else "namespaces"
    return configured, f"{label} {', '.join(configured)}"


async def run_pause(parsed: commands.Pause, deps: Deps, invocation: Invocation) -> Message:
    """`/kai pause [scaledobject] NS/NAME [for DURATION] [REASON]`: check, read, ask to confirm."""
    action = f"pause {parsed.kind} {parsed.namespace}/{parsed.name}"
    await deps.gate.require_operator(invocation.user_id, action)
    await deps.gate.person(invocation.user_id)
    keda_pause.check_namespace(parsed.namespace, deps.settings.keda.namespaces)
    keda_pause.check_reason(parsed.reason)
    target = _target(parsed.kind, parsed.namespace, parsed.name, parsed.cluster, deps)
    now = deps.clock()
    try:
        plan = await usecase.prepare_pause(
            deps.kube_for(target.cluster),
            target,
            user=invocation.user_id,
            reason=parsed.reason,
            duration=parsed.duration,
            now=now,
        )
    except errors.KubeForbidden as e:
        return words.refused_message("pause", target, e)
    if plan.nothing_to_do:
        return words.nothing_message(plan, now)
    seconds = str(int(parsed.duration.total_seconds())) if parsed.duration else ""
    lines = words.confirm_lines(
        plan, duration=parsed.duration, now=now, command=deps.settings.slack.command
    )
    params = target.params() | {"reason": parsed.reason, "seconds": seconds}
    title = words.confirm_title(plan)
    return confirm.ask(deps, invocation, action="pause", params=params, title=title, lines=lines)


async def run_resume(parsed: commands.Resume, deps: Deps, invocation: Invocation) -> Message:
    """`/kai resume [scaledobject] NS/NAME`: check, read, ask to confirm."""
    action = f"resume {parsed.kind} {parsed.namespace}/{parsed.name}"
    await deps.gate.require_operator(invocation.user_id, action)
    await deps.gate.person(invocation.user_id)
    keda_pause.check_namespace(parsed.namespace, deps.settings.keda.namespaces)
    target = _target(parsed.kind, parsed.namespace, parsed.name, parsed.cluster, deps)
    now = deps.clock()
    try:
        plan = await usecase.prepare_resume(deps.kube_for(target.cluster), target)
    except errors.KubeForbidden as e:
        return words.refused_message("resume", target, e)
    if plan.nothing_to_do:
        return words.nothing_message(plan, now)
    lines = words.confirm_lines(plan, duration=None, now=now)
    title = words.confirm_title(plan)
    return confirm.ask(
        deps, invocation, action="resume", params=target.params(), title=title, lines=lines
    )


async def execute_pause(pending: AskedChange, deps: Deps, clicker: str) -> Message:
    """Confirmed pause: re-check the namespace, then pause the object as it now stands."""
    target = KedaTarget.from_params(pending.params)
    keda_pause.check_namespace(target.namespace, deps.settings.keda.namespaces)
    seconds = pending.params.get("seconds")
    duration = timedelta(seconds=int(seconds)) if seconds else None
    reason = pending.params.get("reason", "")
    now, wait = deps.clock(), ACK_WAIT
    kube = await access.kube_for_change(deps, target.cluster, clicker)
    try:
        outcome = await usecase.pause(
            kube,
            target,
            user=clicker,
            reason=reason,
            duration=duration,
            now=now,
            wait=wait,
        )
    except errors.KubeForbidden as e:
        _record_refusal("pause", target, clicker, now, e, access.acting_details(kube))
        return words.refused_message("pause", target, e)
    return await _report(outcome, pending, deps, clicker, now, wait, kube)


async def execute_resume(pending: AskedChange, deps: Deps, clicker: str) -> Message:
    """Confirmed resume: re-check the namespace, then resume the object as it now stands."""
    target = KedaTarget.from_params(pending.params)
    keda_pause.check_namespace(target.namespace, deps.settings.keda.namespaces)
    now, wait = deps.clock(), ACK_WAIT
    kube = await access.kube_for_change(deps, target.cluster, clicker)
    try:
        outcome = await usecase.resume(kube, target, wait=wait)
    except errors.KubeForbidden as e:
        _record_refusal("resume", target, clicker, now, e, access.acting_details(kube))
        return words.refused_message("resume", target, e)
    return await _report(outcome, pending, deps, clicker, now, wait, kube)


async def _report(
    outcome: PauseOutcome,
    pending: AskedChange,
    deps: Deps,
    clicker: str,
    now: datetime,
    wait: usecase.AckWait,
    kube: object,
) -> Message:
    """Record a written change made at `now` (log line, channel post); the clicker's result."""
    plan = outcome.plan
    if outcome.written:
        state = outcome.after if plan.action == "pause" and outcome.after else plan.before
        change = Change(
            user=clicker,
            action=plan.action,
            target=plan.target.describe(),
            outcome=outcome.audit_outcome,
            at=now,
            note=outcome.audit_note,
            reason=pending.params.get("reason", ""),
            details=words.pause_details(state)
            | {"requested_by": pending.requested_by}
            | access.acting_details(kube),
        )
        text = words.announcement_text(
            outcome, user=clicker, requested_by=pending.requested_by, now=now
        )
        await confirm.announce(deps, pending, change, text)
    return words.result_message(outcome, wait_timeout=wait.timeout, now=now)


def _record_refusal(
    action: str,
    target: KedaTarget,
    user: str,
    now: datetime,
    error: errors.KubeError,
    details: dict[str, str],
) -> None:
    """A change the cluster refused: logged only (the user sees the message)."""
    change = Change(
        user, action, target.describe(), "failed", now, details=details, note=str(error)
    )
    audit.log_change(change)


def _target(kind: str, namespace: str, name: str, cluster: str | None, deps: Deps) -> KedaTarget:
    return KedaTarget(kind, namespace, name, deps.settings.cluster(cluster).name)


RUNNERS: dict[type, Runner] = {
    commands.ScaledJobs: run_scaledjobs,
    commands.Pause: run_pause,
    commands.Resume: run_resume,
}
EXECUTORS: dict[str, Executor] = {"pause": execute_pause, "resume": execute_resume}


def register(app: AsyncApp) -> None:
    """Attach this feature's button listeners (none: Confirm and Cancel are shared)."""
