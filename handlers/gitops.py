"""Listeners for `/kai reconcile` (Flux reconcile, Argo CD refresh) and `/kai sync` (Argo CD).

A reconcile is answered in place: "reconciling…" on the response_url at once, then that message
replaced by the result. The dispatcher's runners return one message, so `register` adds a listener
ahead of it for `reconcile` alone that hands the runner `respond`; `sync` asks Confirm through
the dispatcher. Only operators act, checked before any cluster call; one request per object at a
time. The change is logged (`bot.access.audit`); the public reply is the channel's record of it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import weakref
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.access import approvals, audit, confirmations
from bot.access.confirmations import AskedChange
from bot.core import errors
from bot.core.rich import rich_text
from bot.gitops import argo, usecase
from bot.gitops import render as render_gitops
from bot.gitops.commands import Reconcile, ReconcileShortcut, Sync
from bot.gitops.target import GitopsTarget, Request, StepState, audit_outcome, resolve_request
from bot.kube.ports import KubeWriter
from bot.service.deps import Deps
from bot.slack import blocks as render
from bot.slack.blocks import Message
from handlers import access, approval, confirm
from handlers.invocation import Executor, Invocation, Runner

log = logging.getLogger(__name__)

Respond = Callable[..., Awaitable[Any]]
INTERRUPTED = (
    "kai-chatops restarted while waiting for the controller; the request itself was made. "
    "Check the object, or run the command again to follow it."
)


class _Flights:
    """The objects with a reconcile, refresh or sync under way, per cluster connection."""

    def __init__(self) -> None:
        self._running: weakref.WeakKeyDictionary[object, dict[str, str]] = (
            weakref.WeakKeyDictionary()
        )

    def holder(self, kube: object, target: GitopsTarget) -> str | None:
        """Who asked for the request under way for `target`, if there is one."""
        return self._running.get(kube, {}).get(target.key)

    @contextmanager
    def claim(self, kube: object, target: GitopsTarget, user_id: str) -> Iterator[None]:
        """Hold `target` for the enclosed work (check `holder` first, with no await between)."""
        if self.holder(kube, target) is not None:
            raise errors.UserError(f"{target.describe()} already has a request under way.")
        running = self._running.setdefault(kube, {})
        running[target.key] = user_id
        try:
            yield
        finally:
            running.pop(target.key, None)


_FLIGHTS = _Flights()


async def run_reconcile(
    parsed: Reconcile | ReconcileShortcut, deps: Deps, invocation: Invocation
) -> Message:
    """`/kai reconcile`: Flux reconcile or Argo CD refresh, followed to its end.

    With the invocation's `respond`, "reconciling…" is posted at once and the returned result
    replaces it: one message, updated in place.
    """
    request = resolve_request(parsed, deps.settings)
    target = request.target
    await deps.gate.require_operator(invocation.user_id, f"reconcile {target.describe()}")
    if approvals.needs_approval(deps.settings, target.params()):
        pending = confirmations.new_pending(
            "reconcile",
            _request_params(request),
            user_id=invocation.user_id,
            channel_id=invocation.channel_id,
            now=deps.clock(),
        )
        note = await approval.ask_approval(deps, pending)
        return {**note, "response_type": "ephemeral", "replace_original": False}
    return await _run_request(request, deps, invocation)


async def execute_reconcile(pending: AskedChange, deps: Deps, actor: str) -> Message:
    """An approved reconcile or refresh (`access.approval`), run as `actor`, who asked for it."""
    params = pending.params
    flags = {flag: bool(params.get(flag)) for flag in _REQUEST_FLAGS}
    request = Request(GitopsTarget.from_params(params), **flags)
    invocation = Invocation(actor, pending.channel_id, deps.settings.slack.command)
    return await _run_request(request, deps, invocation)


_REQUEST_FLAGS = ("with_source", "hard", "force", "reset")


def _request_params(request: Request) -> dict[str, str]:
    """A reconcile as a change's parameters (strings only; a flag not given is left out)."""
    flags = {flag: "yes" for flag in _REQUEST_FLAGS if getattr(request, flag)}
    return request.target.params() | flags


async def _run_request(request: Request, deps: Deps, invocation: Invocation) -> Message:
    """A reconcile or refresh by an operator, one per object at a time, followed to its end."""
    respond, target = invocation.respond, request.target
    writer = await access.kube_for_change(deps, target.cluster, invocation.user_id)
    kube = deps.kube_for(target.cluster)
    holder = _FLIGHTS.holder(kube, target)
    if holder is not None:
        return render_gitops.already_under_way(target, holder)
    with _FLIGHTS.claim(kube, target, invocation.user_id):
        if target.is_application:
            return await _refresh(writer, request, deps, invocation, respond)
        return await _reconcile_flux(writer, request, deps, invocation, respond)


async def _reconcile_flux(
    kube: KubeWriter,
    request: Request,
    deps: Deps,
    invocation: Invocation,
    respond: Respond | None,
) -> Message:
    user, settings = invocation.user_id, deps.settings
    steps = await usecase.prepare_flux(
        kube, request, command=settings.slack.command, default_cluster=settings.clusters[0].name
    )
    targets = [step.target for step in steps]
    progress = render_gitops.flux_progress(targets, user, flags=request.flags)

    async def requested(target: GitopsTarget, token: str) -> None:
        log.info("reconcile of %s requested by %s (requestedAt %s)", target.describe(), user, token)

    async def work() -> Message:
        report = await usecase.run_flux(
            kube,
            steps,
            user_id=user,
            clock=deps.clock,
            polling=_polling(deps),
            on_requested=requested,
        )
        final = report.steps[-1]
        details = {"requestedAt": final.token, "ready": final.ready, "reason": final.reason}
        details |= {"note": final.note} if final.state == "not read back" else {}
        details |= {"flags": request.flags} if request.flags else {}
        details |= access.acting_details(kube)
        change = _change(deps, user, request.action, request.target, report.outcome, details)
        await _record(deps, invocation, change)
        return render_gitops.flux_result(report, user, flags=request.flags)

    action = _Action(deps, invocation, request.action, request.target)
    return await _in_place(respond, progress, action.recorded(work()))


async def _refresh(
    kube: KubeWriter,
    request: Request,
    deps: Deps,
    invocation: Invocation,
    respond: Respond | None,
) -> Message:
    user, target = invocation.user_id, request.target
    app = await usecase.read_target(kube, target)
    action = "hard refresh" if request.hard else "refresh"

    async def requested(target: GitopsTarget, value: str) -> None:
        log.info("%s of %s requested by %s (%s)", action, target.describe(), user, value)

    async def work() -> Message:
        report = await usecase.run_refresh(
            kube,
            target,
            hard=request.hard,
            user_id=user,
            clock=deps.clock,
            polling=_polling(deps),
            on_requested=requested,
            app=app,
        )
        details = _argo_details(report) | access.acting_details(kube)
        await _record(deps, invocation, _change(deps, user, action, target, report.state, details))
        return render_gitops.argo_result(report, user)

    progress = render_gitops.argo_progress(target, action, user)
    recorded = _Action(deps, invocation, action, target).recorded(work())
    return await _in_place(respond, progress, recorded)


async def ask_sync(parsed: Sync, deps: Deps, invocation: Invocation) -> Message:
    """`/kai sync`: check the Application can sync now, then ask the user to confirm."""
    target = resolve_request(parsed, deps.settings).target
    await deps.gate.require_operator(invocation.user_id, f"sync {target.describe()}")
    await deps.gate.person(invocation.user_id)
    kube = deps.kube_for(target.cluster)
    holder = _FLIGHTS.holder(kube, target)
    if holder is not None:
        return render_gitops.already_under_way(target, holder)
    app = await usecase.read_syncable(kube, target, deps.clock())
    title, lines = render_gitops.sync_confirmation(target, argo.read_app(app))
    return confirm.ask(
        deps, invocation, action="sync", params=target.params(), title=title, lines=lines
    )


async def execute_sync(pending: AskedChange, deps: Deps, clicker: str) -> Message:
    """The confirmed sync: write `operation`, wait until Argo CD clears it, report the outcome."""
    target = GitopsTarget.from_params(pending.params)
    writer = await access.kube_for_change(deps, target.cluster, clicker)
    kube = deps.kube_for(target.cluster)
    holder = _FLIGHTS.holder(kube, target)
    if holder is not None:
        return render_gitops.already_under_way(target, holder)
    with _FLIGHTS.claim(kube, target, clicker):
        written = await usecase.start_sync(
            writer, target, user_id=clicker, channel_id=pending.channel_id, clock=deps.clock
        )
        # Recorded in the channel now, not only at the end: the wait can be long, and the sync
        # runs even if this replica stops before Argo CD finishes.
        where = f"{target.describe()} on {target.cluster}"
        note = rich_text(render.mention(clicker), f" started an Argo CD sync of {where}.")
        await audit.announce(
            note,
            slack=deps.slack,
            channel=pending.channel_id,
            alert_channel=deps.settings.slack.alert_channel,
        )
        report = await usecase.wait_sync(kube, target, polling=_polling(deps), written=written)
    details = _argo_details(report) | access.acting_details(writer)
    change = _change(deps, clicker, "sync", target, report.state, details)
    text = render_gitops.sync_audit_text(report, clicker)
    await confirm.announce(deps, pending, change, text)
    return {**render_gitops.argo_result(report, clicker), "response_type": "ephemeral"}


async def _in_place(
    respond: Respond | None, progress: Message, work: Awaitable[Message]
) -> Message:
    """Post `progress`, then return the result of `work` as its replacement.

    Once "reconciling…" is showing, every ending must replace it (an error too), or it would
    stay there forever. Without `respond` (the dispatcher's path) the result is the only reply.
    """
    if respond is None or not await _post(respond, progress):
        return await work
    try:
        result = await work
    except errors.BotError as e:
        result = render.error_message(e)
    except asyncio.CancelledError:
        # The service is stopping: say so in place of "reconciling…", then stop as asked.
        await _post(respond, {**render.text_message(INTERRUPTED), "replace_original": True})
        raise
    except Exception:
        log.exception("a gitops request failed after its progress reply")
        result = render.text_message(render.GENERIC_FAILURE)
    replacing = {key: value for key, value in result.items() if key != "response_type"}
    return {**replacing, "replace_original": True}


async def _post(respond: Respond, message: Message) -> bool:
    try:
        await respond(**message)
    except Exception as e:  # a lost progress note must not lose the reconcile
        log.warning("could not post the progress reply: %s", e)
        return False
    return True


def _polling(deps: Deps) -> usecase.Polling:
    return usecase.Polling(timeout=deps.settings.gitops.reconcile_timeout.total_seconds())


def _change(
    deps: Deps,
    user: str,
    action: str,
    target: GitopsTarget,
    state: StepState,
    details: dict[str, str],
) -> audit.Change:
    where, outcome = f"{target.describe()} on {target.cluster}", audit_outcome(state)
    return audit.Change(
        f"slack:{user}", action, where, outcome, deps.clock(), details=details, note=state
    )


async def _record(deps: Deps, invocation: Invocation, change: audit.Change) -> None:
    """The audit line; the public in-place reply is the channel's record of it, except when
    the request came from a direct message: then it is also said in the alert channel."""
    if not audit.is_direct_message(invocation.channel_id):
        await audit.record(change, slack=None, channel="", text="", journal=deps.journal)
        return
    user = invocation.user_id
    text = render_gitops.change_record(user, change.action, change.target, change.note)
    alert_channel = deps.settings.slack.alert_channel
    await audit.record(
        change, slack=deps.slack, channel=alert_channel, text=text, journal=deps.journal
    )


@dataclass(frozen=True)
class _Action:
    """A reconcile or refresh under way: what to record when it ends in an error."""

    deps: Deps
    invocation: Invocation
    action: str
    target: GitopsTarget

    async def recorded(self, work: Awaitable[Message]) -> Message:
        """The result of `work`; an error is on the record too (`unknown` when a write got no
        answer: it may have been applied), then raised."""
        try:
            return await work
        except errors.KubeWriteUnknown as e:
            await self._record("unknown", str(e), e.details)
            raise
        except errors.KubeError as e:
            await self._record("failed", str(e), e.details)
            raise
        except errors.BotError as e:
            await self._record("failed", str(e), {})
            raise

    async def _record(self, state: StepState, note: str, details: Mapping[str, str]) -> None:
        user = self.invocation.user_id
        change = _change(self.deps, user, self.action, self.target, state, dict(details))
        await _record(self.deps, self.invocation, dataclasses.replace(change, note=note))


def _argo_details(report: argo.ArgoReport) -> dict[str, str]:
    app = report.app
    if app is None:
        return {"error": report.error} if report.error else {}
    if report.action != "sync":
        return {}
    return {"phase": app.phase, "message": app.message, "revision": app.synced_revision}


RUNNERS: dict[type, Runner] = {
    Reconcile: run_reconcile,
    ReconcileShortcut: run_reconcile,
    Sync: ask_sync,
}
EXECUTORS: dict[str, Executor] = {"sync": execute_sync, "reconcile": execute_reconcile}


def register(app: AsyncApp) -> None:
    """No buttons of its own: sync's Confirm goes through `handlers.confirm`."""
