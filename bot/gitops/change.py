"""Flux reconcile, Argo CD refresh and Argo CD sync as change kinds of `bot.changes`.

A reconcile (or refresh) asks no Confirm: it is made at once, one request per object at a
time, "reconciling…" shown as soon as the object is read and replaced by the result; its public
reply is the channel's record. A sync asks Confirm, is said in the channel when it starts (the
wait can be long) and when it ends. The work is `bot.gitops.usecase`'s, the words
`bot.gitops.render`'s.
"""

from __future__ import annotations

import logging

from bot.access.audit import Change
from bot.changes.kinds import Ask, Described, Done, Run
from bot.config.settings import Settings
from bot.core.rich import rich_text
from bot.gitops import argo, render, usecase
from bot.gitops.commands import Reconcile, ReconcileShortcut, Sync
from bot.gitops.target import GitopsTarget, Request, StepState, audit_outcome, resolve_request
from bot.slack import blocks
from bot.slack.blocks import Message

log = logging.getLogger(__name__)
RECONCILE, SYNC = "reconcile", "sync"
SLACK_USER = "slack:"  # how a GitOps request names its person, here as on the object
_FLAGS = ("with_source", "hard", "force", "reset")


def reconciling(parsed: Reconcile | ReconcileShortcut, settings: Settings) -> Request:
    """The request `/kai reconcile` asks for (`bot.gitops.target.resolve_request`)."""
    return resolve_request(parsed, settings)


def syncing(parsed: Sync, settings: Settings) -> GitopsTarget:
    """The Application `/kai sync` syncs."""
    return resolve_request(parsed, settings).target


def describe_target(
    word: str, target: GitopsTarget, *, flags: str = "", action: str = "", user_prefix: str = ""
) -> Described:
    """A GitOps change in words (`bot.changes.kinds.Described`)."""
    where = (target.ref, target.namespace, target.name, target.cluster)
    return Described(word, *where, flags=flags, action=action, user_prefix=user_prefix)


class ReconcileKind:
    """`reconcile`: a Flux reconcile (sources first with `--with-source`) or an Argo CD
    refresh, followed to its end."""

    action = RECONCILE
    params = Request
    announced = False

    def describe(self, params: Request) -> Described:
        flags = " ".join(f"--{flag.replace('_', '-')}" for flag in _FLAGS if getattr(params, flag))
        action = _audit_action(params)
        return describe_target(
            RECONCILE, params.target, flags=flags, action=action, user_prefix=SLACK_USER
        )

    async def prepare(self, params: Request, run: Run) -> None:
        """Nothing to ask: a reconcile is made at once (once approved, where that is needed)."""

    async def apply(self, params: Request, run: Run) -> Done:
        key = self.describe(params).where
        holder = run.underway.holder(key)
        if holder is not None:
            return Done(render.already_under_way(params.target, holder))
        with run.underway.claim(key, run.user):
            if params.target.is_application:
                return await _refresh(params, run)
            return await _reconcile_flux(params, run)


def _audit_action(request: Request) -> str:
    if request.target.is_application:
        return "hard refresh" if request.hard else "refresh"
    return request.action


async def _reconcile_flux(request: Request, run: Run) -> Done:
    user, settings = run.user, run.settings
    steps = await usecase.prepare_flux(
        run.kube, request, command=settings.slack.command, default_cluster=settings.clusters[0].name
    )
    await run.started(render.flux_progress([s.target for s in steps], user, flags=request.flags))

    async def requested(target: GitopsTarget, token: str) -> None:
        log.info("reconcile of %s requested by %s (requestedAt %s)", target.describe(), user, token)

    report = await usecase.run_flux(
        run.kube,
        steps,
        user_id=user,
        clock=run.clock,
        polling=_polling(run),
        on_requested=requested,
    )
    final = report.steps[-1]
    details = {"requestedAt": final.token, "ready": final.ready, "reason": final.reason}
    details |= {"note": final.note} if final.state == "not read back" else {}
    details |= {"flags": request.flags} if request.flags else {}
    change = _change(run, request.action, request.target, report.outcome, details)
    return Done(render.flux_result(report, user, flags=request.flags), change)


async def _refresh(request: Request, run: Run) -> Done:
    user, target = run.user, request.target
    app = await usecase.read_target(run.kube, target)
    action = _audit_action(request)
    await run.started(render.argo_progress(target, action, user))

    async def requested(target: GitopsTarget, value: str) -> None:
        log.info("%s of %s requested by %s (%s)", action, target.describe(), user, value)

    report = await usecase.run_refresh(
        run.kube,
        target,
        hard=request.hard,
        user_id=user,
        clock=run.clock,
        polling=_polling(run),
        on_requested=requested,
        app=app,
    )
    change = _change(run, action, target, report.state, argo_details(report))
    return Done(render.argo_result(report, user), change)


class SyncKind:
    """`sync`: the Application's `operation` written, then Argo CD's result."""

    action = SYNC
    params = GitopsTarget
    announced = True

    def describe(self, params: GitopsTarget) -> Described:
        return describe_target(SYNC, params)

    async def prepare(self, params: GitopsTarget, run: Run) -> Ask | Message:
        holder = run.underway.holder(self.describe(params).where)
        if holder is not None:
            return render.already_under_way(params, holder)
        app = await usecase.read_syncable(run.kube, params, run.clock())
        title, lines = render.sync_confirmation(params, argo.read_app(app))
        return Ask(title, lines)

    async def apply(self, params: GitopsTarget, run: Run) -> Done:
        key = self.describe(params).where
        holder = run.underway.holder(key)
        if holder is not None:
            return Done(render.already_under_way(params, holder))
        with run.underway.claim(key, run.user):
            written = await usecase.start_sync(
                run.kube, params, user_id=run.user, channel_id=run.channel_id, clock=run.clock
            )
            # Said in the channel now, not only at the end: the wait can be long, and the sync
            # runs even if this replica stops before Argo CD finishes.
            where = f"{params.describe()} on {params.cluster}"
            await run.announce(
                rich_text(blocks.mention(run.user), f" started an Argo CD sync of {where}.")
            )
            report = await usecase.wait_sync(
                run.kube, params, polling=_polling(run), written=written
            )
        change = _change(run, SYNC, params, report.state, argo_details(report))
        reply = {**render.argo_result(report, run.user), "response_type": "ephemeral"}
        return Done(reply, change, render.sync_audit_text(report, run.user))


def _polling(run: Run) -> usecase.Polling:
    return usecase.Polling(timeout=run.settings.gitops.reconcile_timeout.total_seconds())


def _change(
    run: Run, action: str, target: GitopsTarget, state: StepState, details: dict[str, str]
) -> Change:
    where, outcome = f"{target.describe()} on {target.cluster}", audit_outcome(state)
    user = f"{SLACK_USER}{run.user}"
    return Change(user, action, where, outcome, run.clock(), details=details, note=state)


def argo_details(report: argo.ArgoReport) -> dict[str, str]:
    """What the audit line keeps of Argo CD's answer."""
    app = report.app
    if app is None:
        return {"error": report.error} if report.error else {}
    if report.action != "sync":
        return {}
    return {"phase": app.phase, "message": app.message, "revision": app.synced_revision}


def kinds() -> tuple[ReconcileKind, SyncKind]:
    """The GitOps requests' change kinds (Flux suspend and resume: `bot.gitops.change_suspend`)."""
    return ReconcileKind(), SyncKind()
