"""Flux reconciles and Argo CD refreshes and syncs on one cluster, followed until they end.

The use-case layer: reads and patches through the gateway, then follows the object by watch
from our own write, polling with a deadline when it cannot watch (`bot.kube.follow`); every
decision is `bot.gitops.plan`'s or `bot.gitops.argo`'s. No Slack here. Waits use the event loop's
monotonic time, never `deps.clock`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.core import errors
from bot.core.models import RawObject, Sleep
from bot.gitops import argo, kinds, plan, windows
from bot.gitops.plan import FluxPhase, FluxReport, StepResult
from bot.gitops.target import GitopsTarget, Request, StepState
from bot.kube import follow
from bot.kube.follow import Polling as Polling  # re-exported: callers build a wait here
from bot.kube.ports import KubeWriter

CONFLICT_RETRIES = 5  # as `flux` and `argocd` retry a conflicting write

Clock = Callable[[], datetime]
OnRequested = Callable[
    [GitopsTarget, str], Awaitable[None]
]  # (what was patched, the token / value)


@dataclass(frozen=True)
class FluxStep:
    """One object to reconcile, as read before the request."""

    target: GitopsTarget
    obj: RawObject
    force: bool = False  # HelmRelease: also forceAt (a one-off install or upgrade)
    reset: bool = False  # HelmRelease: also resetAt (the failure counts start over)

    @property
    def is_static(self) -> bool:
        return plan.is_static(self.obj)


async def read_target(kube: KubeWriter, target: GitopsTarget, role: str = "") -> RawObject:
    """The object, read once.

    Raises:
        UserError: it does not exist; KubeError: the cluster refused or is unreachable.
    """
    obj = await kube.get_object(target.ref, target.name, target.namespace)
    if obj is None:
        what = f"{role} {target.describe()}" if role else target.describe()
        message = f"{what.strip()} was not found on {target.cluster}."
        raise errors.ObjectMissing(message, target.kind, target.namespace, target.name)
    return obj


async def prepare_flux(
    kube: KubeWriter, request: Request, *, command: str, default_cluster: str
) -> tuple[FluxStep, ...]:
    """Read the object (and with `--with-source` its sources) and refuse what Flux would ignore.

    Returns the steps in order: sources first, the object last. Nothing is changed. `command`
    (the configured slash command) and `default_cluster` shape the resume a refusal suggests.

    Raises:
        UserError: missing, suspended, or an OCI HelmRepository as the object itself.
    """
    target = request.target
    steps = [FluxStep(target, await read_target(kube, target), request.force, request.reset)]
    words = {"command": command, "default_cluster": default_cluster}
    plan.check_reconcilable(steps[0].obj, target, **words)
    while request.with_source:
        source = plan.direct_source(steps[0].obj, steps[0].target)
        if source is None or plan.is_chain_complete(len(steps)):
            break
        obj = await read_target(kube, source, f"the source of {steps[0].target.describe()},")
        if not plan.is_static(obj):
            plan.check_reconcilable(obj, source, **words)
        steps.insert(0, FluxStep(source, obj))
    return tuple(steps)


async def run_flux(
    kube: KubeWriter,
    steps: tuple[FluxStep, ...],
    *,
    user_id: str,
    clock: Clock,
    polling: Polling,
    on_requested: OnRequested | None = None,
) -> FluxReport:
    """Reconcile each step in turn and wait for it; a step that does not succeed stops the rest.
    A read that fails after a step's request ends that step as "not read back".

    Raises:
        KubeError: a request (or the read before retrying a conflicting one) failed beyond the
            gateway's retries.
    """
    loop = asyncio.get_running_loop()
    started = loop.time()
    deadline = started + polling.timeout
    results: list[StepResult] = []
    for index, step in enumerate(steps):
        if step.is_static:
            results.append(StepResult(step.target, "skipped", note=plan.STATIC_NOTE))
            continue
        result = await _reconcile_one(kube, step, user_id, clock, polling, deadline, on_requested)
        results.append(result)
        if result.state != "succeeded":
            note = f"not requested: {step.target.describe()} did not reconcile"
            results += [StepResult(s.target, "not started", note=note) for s in steps[index + 1 :]]
            break
    return FluxReport(tuple(results), loop.time() - started)


async def _reconcile_one(
    kube: KubeWriter,
    step: FluxStep,
    user_id: str,
    clock: Clock,
    polling: Polling,
    deadline: float,
    on_requested: OnRequested | None,
) -> StepResult:
    target = step.target
    token, before, written = await _request_flux(kube, step, user_id, clock, polling.sleep)
    if on_requested is not None:
        await on_requested(target, token)
    try:
        obj, done = await follow.follow(
            kube,
            target,
            lambda o: o is None or plan.flux_phase(o, before) is FluxPhase.DONE,
            written=written,
            deadline=deadline,
            polling=polling,
        )
    except errors.KubeError as e:  # written: Flux may act on it, we cannot see whether
        return plan.judge_flux_unread(target, token, str(e))
    if not done or obj is None:
        waited = plan.format_wait(polling.timeout)
        return plan.judge_flux_timeout(obj, target, token, before, waited)
    return plan.judge_flux(obj, target, token)


async def _request_flux(
    kube: KubeWriter, step: FluxStep, user_id: str, clock: Clock, sleep: Sleep
) -> tuple[str, str, RawObject]:
    """Merge-patch a fresh requestedAt; on a conflict, read again and retry with a new token.

    Returns the token, `lastHandledReconcileAt` as read before the request, and the object as
    the patch left it.
    """
    target, obj = step.target, step.obj
    for attempt in range(1, CONFLICT_RETRIES + 1):
        token = plan.new_token(clock(), plan.taken_tokens(obj))
        body = plan.flux_request_patch(token, user_id, force=step.force, reset=step.reset)
        try:
            written = await kube.patch_object(target.ref, target.name, target.namespace, body)
            return token, plan.last_handled(obj), written
        except errors.KubeConflict:
            if attempt == CONFLICT_RETRIES:
                raise
            await sleep(0.05 * attempt)
            obj = await read_target(kube, target)
    raise AssertionError("unreachable")


async def run_refresh(
    kube: KubeWriter,
    target: GitopsTarget,
    *,
    hard: bool,
    user_id: str,
    clock: Clock,
    polling: Polling,
    on_requested: OnRequested | None = None,
    app: RawObject | None = None,
) -> argo.ArgoReport:
    """Ask Argo CD to refresh the Application (`app`: as read first by the caller) and wait
    until it has; a read that fails after the request ends the wait as "not read back".

    Raises:
        KubeError: the patch failed beyond the gateway's retries.
    """
    loop = asyncio.get_running_loop()
    started = loop.time()
    written, body = await _request_refresh(kube, target, hard, user_id, clock, polling.sleep, app)
    if on_requested is not None:
        annotations = body["metadata"]["annotations"]
        value = f"{annotations[argo.REFRESH]} at {annotations[argo.REFRESH_TIMESTAMP]}"
        await on_requested(target, value)
    action = "hard refresh" if hard else "refresh"
    try:
        app, done = await follow.follow(
            kube,
            target,
            lambda a: a is None or not argo.is_refresh_pending(a),
            written=written,
            deadline=started + polling.timeout,
            polling=polling,
        )
    except errors.KubeError as e:  # requested: Argo CD may act on it, we cannot see whether
        return argo.unread_report(target, action, loop.time() - started, str(e))
    state: StepState = "succeeded" if done and app is not None else "timed out"
    return _argo_report(target, action, state, app, loop.time() - started, polling)


async def read_syncable(kube: KubeWriter, target: GitopsTarget, now: datetime) -> RawObject:
    """The Application, once it is known that Argo CD would start a manual sync of it now:
    no operation in the way, and its AppProject's sync windows allow it (the AppProject is
    read in the Application's namespace, Argo CD's own in the usual install).

    Raises:
        UserError: missing, an operation in the way, or a sync window forbids it;
        KubeError: a read failed.
    """
    app = await read_target(kube, target)
    argo.check_syncable(app, target)
    project = await kube.get_object(kinds.APP_PROJECT, windows.project_name(app), target.namespace)
    argo.check_sync_windows(app, project, target, now)
    return app


async def start_sync(
    kube: KubeWriter, target: GitopsTarget, *, user_id: str, channel_id: str, clock: Clock
) -> RawObject:
    """Write the `operation` field (guarded by the resourceVersion read), re-checking on 409.

    Raises:
        UserError: missing, an operation is already set or running, or a sync window forbids
            it; KubeError: the write failed.
    """
    for attempt in range(1, CONFLICT_RETRIES + 1):
        app = await read_syncable(kube, target, clock())
        body = argo.sync_patch(app, user_id, channel_id, clock())
        try:
            return await kube.patch_object(target.ref, target.name, target.namespace, body)
        except errors.KubeConflict:
            if attempt == CONFLICT_RETRIES:
                raise
    raise AssertionError("unreachable")


async def wait_sync(
    kube: KubeWriter, target: GitopsTarget, *, polling: Polling, written: RawObject | None = None
) -> argo.ArgoReport:
    """Wait until the controller clears `operation`, or says a sync window holds it; report
    `status.operationState`. `written`: the Application as `start_sync` left it. A read that
    fails meanwhile ends the wait as "not read back": the sync was started either way.
    """
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        app, done = await follow.follow(
            kube,
            target,
            lambda a: a is None or not argo.is_sync_pending(a) or argo.is_blocked_by_window(a),
            written=written,
            deadline=started + polling.timeout,
            polling=polling,
        )
    except errors.KubeError as e:  # started: Argo CD runs it, we cannot see how it ends
        return argo.unread_report(target, "sync", loop.time() - started, str(e))
    state: StepState = "timed out"
    if done and app is not None:
        state = argo.judge_sync(app)
    return _argo_report(target, "sync", state, app, loop.time() - started, polling)


def _argo_report(
    target: GitopsTarget,
    action: str,
    state: StepState,
    app: RawObject | None,
    elapsed: float,
    polling: Polling,
) -> argo.ArgoReport:
    if app is None:
        return argo.ArgoReport(target, action, "failed", None, elapsed)
    waited = plan.format_wait(polling.timeout)
    return argo.ArgoReport(target, action, state, argo.read_app(app), elapsed, waited)


async def _request_refresh(
    kube: KubeWriter,
    target: GitopsTarget,
    hard: bool,
    user_id: str,
    clock: Clock,
    sleep: Sleep,
    app: RawObject | None,
) -> tuple[RawObject, dict[str, Any]]:
    """Merge-patch the refresh, with a fresh timestamp on each try after a conflict, as
    argo-cd util/argo/argo.go `RefreshApp` does. Returns the object written and the body."""
    for attempt in range(1, CONFLICT_RETRIES + 1):
        body = argo.refresh_patch(hard, user_id, clock(), app)
        try:
            written = await kube.patch_object(target.ref, target.name, target.namespace, body)
            return written, body
        except errors.KubeConflict:
            if attempt == CONFLICT_RETRIES:
                raise
            await sleep(0.05 * attempt)
    raise AssertionError("unreachable")
