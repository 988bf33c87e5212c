"""How reconciles, refreshes and syncs look in Slack: the "reconciling…" reply and its result.

Pure: Block Kit dicts with a plain-text fallback, fitted to Slack's limits. Controllers' own words
(Ready messages, operation messages) are shown verbatim in code blocks.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.config.settings import GitopsSettings
from bot.core.rich import Rich, rich_text
from bot.gitops.argo import AppState, ArgoReport
from bot.gitops.plan import FluxReport, StepResult
from bot.gitops.target import GitopsTarget, StepState
from bot.slack.blocks import Block, Message, context, escape, fit_message, mention, section

ICONS: dict[StepState, str] = {
    "succeeded": ":white_check_mark:",
    "failed": ":red_circle:",
    "unknown": ":grey_question:",
    "timed out": ":hourglass_flowing_sand:",
    "skipped": ":fast_forward:",
    "not started": ":heavy_minus_sign:",
    "blocked": ":no_entry:",
    "not read back": ":grey_question:",
}
_FLUX_OUTCOMES: dict[StepState, str] = {
    "succeeded": "reconciled",
    "failed": "failed",
    "unknown": "finished, but its status can't be determined (no Ready condition)",
    "timed out": "no result in time",
    "not read back": "its result could not be read back",
}
WORKING = ":arrows_counterclockwise:"


# What each HelmRelease flag makes helm-controller do (fluxcd/helm-controller
# internal/reconcile/atomic_release.go: forceAt, resetAt).
FLAG_WORDS = {
    "--force": "a one-off Helm install or upgrade, even with nothing changed",
    "--reset": "the install and upgrade failure counts start over",
}


def flags_words(flags: str) -> str:
    """` with --force (a one-off Helm install or upgrade, …)`, or "" without flags."""
    if not flags:
        return ""
    return " with " + " and ".join(f"{flag} ({FLAG_WORDS[flag]})" for flag in flags.split())


def flux_progress(targets: Sequence[GitopsTarget], user_id: str, *, flags: str = "") -> Message:
    """The reply while Flux works: who asked, what (with `--force` / `--reset` when given), and
    "reconciling…"."""
    final = targets[-1]
    who, what = mention(user_id), escape(final.describe())
    asked = f" asked Flux to reconcile *{what}* on {final.cluster}{escape(flags_words(flags))}"
    head = rich_text(f"{WORKING} ", who, asked)
    reconcile = f"reconcile {flags}".strip()
    text = f"Flux {reconcile} of {final.describe()} on {final.cluster}: reconciling…"
    body = head + ": reconciling…"
    if len(targets) > 1:
        order = ", then ".join(escape(t.describe()) for t in targets)
        body += f"\nWith its source, in this order: {order}."
    return _public(text, [section(body)])


def argo_progress(target: GitopsTarget, action: str, user_id: str) -> Message:
    """The reply while Argo CD works on a refresh or a sync."""
    doing = "syncing…" if action == "sync" else "refreshing…"
    who, what = mention(user_id), escape(target.describe())
    head = rich_text(f"{WORKING} ", who, f" asked Argo CD to {action} *{what}* on {target.cluster}")
    text = f"Argo CD {action} of {target.describe()} on {target.cluster}: {doing}"
    return _public(text, [section(head + f": {doing}")])


def flux_result(report: FluxReport, user_id: str, *, flags: str = "") -> Message:
    """The final reply of a Flux reconcile: the outcome, then each step in Flux's words; the
    head names `--force` / `--reset` when they were given."""
    return _public(*flux_parts(report, user_id, flags=flags))


def flux_parts(report: FluxReport, user_id: str, *, flags: str = "") -> tuple[str, list[Block]]:
    """`flux_result`'s fallback text and blocks, not yet fitted (so another message can hold
    them: fitting twice would escape the mentions fitting made)."""
    final = report.steps[-1].target
    outcome = report.outcome
    reconcile = f"reconcile {flags}".strip()
    head = f"Flux {reconcile} of {final.describe()} on {final.cluster}: {_FLUX_OUTCOMES[outcome]}"
    retry = next((s.retry for s in report.steps if s.state == outcome and s.retry), "")
    head += f"; {retry}" if retry else ""
    head_mrkdwn = f"{ICONS[outcome]} {_bold_target(head, final)}"
    steps = [_step_mrkdwn(step) for step in report.steps]
    if len(steps) == 1:
        blocks = [section(f"{head_mrkdwn}\n{steps[0]}")]
    else:
        blocks = [section(head_mrkdwn), *(section(step) for step in steps)]
    tokens = [s.token for s in report.steps if s.token]
    footer = rich_text("requested by ", mention(user_id), f" · took {report.elapsed:.1f}s")
    footer += f" · requestedAt `{escape(tokens[-1])}`" if tokens else ""
    blocks.append(context(footer))
    text = "\n".join([head, *(f"- {_step_text(step)}" for step in report.steps)])
    return text, blocks


def _step_mrkdwn(step: StepResult) -> str:
    line = f"{ICONS[step.state]} *{escape(step.target.describe())}*: {escape(_summary(step))}"
    return line + (f"\n```{escape(step.message)}```" if step.message else "")


def _step_text(step: StepResult) -> str:
    line = f"{step.target.describe()}: {_summary(step)}"
    return line + (f"\n    {step.message}" if step.message else "")


def _summary(step: StepResult) -> str:
    if step.state in ("timed out", "skipped", "not started", "not read back"):
        return step.note
    parts = [f"Ready {step.ready}" + (f" ({step.reason})" if step.reason else "")]
    if not step.ready:
        parts = [step.note or "no Ready condition"]
    if step.revision:
        parts.append(f"revision {step.revision}")
    return ", ".join(parts)


def argo_result(report: ArgoReport, user_id: str) -> Message:
    """The final reply of an Argo CD refresh or sync."""
    target, app = report.target, report.app
    head = f"Argo CD {report.action} of {target.describe()} on {target.cluster}: "
    head += _argo_outcome(report)
    lines = [f"{ICONS[report.state]} {_bold_target(head, target)}"]
    detail = ""
    if app is not None:
        lines.append(escape(_app_line(app)))
        lines += [f":warning: {escape(error)}" for error in app.errors]
        detail = app.message if report.action == "sync" else ""
    mrkdwn = "\n".join(lines) + (f"\n```{escape(detail)}```" if detail else "")
    footer = context(rich_text("requested by ", mention(user_id), f" · took {report.elapsed:.1f}s"))
    text = "\n".join([head, _app_line(app) if app else "", detail]).strip()
    return _public(text, [section(mrkdwn), footer])


def _argo_outcome(report: ArgoReport) -> str:
    if report.state == "not read back":
        done = "started" if report.action == "sync" else "requested"
        return (
            f"{done}, but its result could not be read: the Application could not be read "
            f"since ({report.error}). Check it before trying again"
        )
    if report.app is None:
        return "the Application was deleted while waiting"
    if report.state == "blocked":
        return (
            "blocked by a sync window; Argo CD keeps the operation and runs it when the "
            "window allows"
        )
    if report.state == "timed out" and report.action == "sync":
        phase = report.app.phase or "not started"
        return f"no result within {report.waited}; the operation is still {phase}"
    if report.state == "timed out":
        return (
            f"not picked up within {report.waited} (the refresh annotation is still there: "
            "is the Argo CD application controller running?)"
        )
    if report.action != "sync":
        return "done"
    revision = f", revision {report.app.synced_revision}" if report.app.synced_revision else ""
    return f"{report.app.phase or 'no phase reported'}{revision}"


def _app_line(app: AppState) -> str:
    revision = f", revision {app.revision}" if app.revision else ""
    return f"Now: sync {app.sync}, health {app.health}{revision}"


def already_under_way(target: GitopsTarget, asked_by: str) -> Message:
    """The private note refusing a second request while one for the same object runs."""
    what = f"{target.describe()} on {target.cluster} already has a reconcile, refresh or sync"
    rest = "its reply will show the result. Nothing new was requested."
    text = rich_text(escape(what), " under way (asked by ", mention(asked_by), f"); {rest}")
    mrkdwn = f"{ICONS['timed out']} " + text
    return fit_message({"text": text, "blocks": [section(mrkdwn)], "response_type": "ephemeral"})


def sync_confirmation(target: GitopsTarget, app: AppState) -> tuple[str, list[str]]:
    """The title and lines of the Confirm/Cancel message before a sync."""
    title = f"Sync {target.describe()} on {target.cluster}?"
    lines = [
        _app_line(app),
        "Argo CD will apply the manifests of the app's target revision (hook strategy, no "
        "prune), as `argocd app sync` does. The sync is recorded as yours.",
    ]
    if app.sync_options:
        lines.append("Sync options (from the app's syncPolicy): " + ", ".join(app.sync_options))
    if app.retry_limit is not None:
        lines.append(f"Retries on failure (from the app's syncPolicy): up to {app.retry_limit}")
    return title, lines


def sync_audit_text(report: ArgoReport, user_id: str) -> Rich:
    """The channel's record of a sync (its result went to the requester alone), as mrkdwn:
    the phase and revision are Argo CD's words, escaped."""
    target = report.target
    return rich_text(
        mention(user_id),
        f" synced Argo CD {escape(target.describe())} on {target.cluster}: ",
        escape(_argo_outcome(report)),
    )


def describe_shortcuts(gitops: GitopsSettings, command_name: str = "/kai") -> str:
    """One help line per shortcut: what `reconcile kai` and `reconcile keda` act on."""
    lines = []
    for name in ("kai", "keda"):
        shortcut = gitops.shortcut(name)
        where = (
            f"{shortcut.kind} {shortcut.namespace}/{shortcut.name}"
            if shortcut
            else f"not configured (gitops.{name})"
        )
        lines.append(f"  {command_name} reconcile {name}: {where}")
    return "Shortcuts:\n" + "\n".join(lines)


def _bold_target(head: str, target: GitopsTarget) -> str:
    described = target.describe()
    return escape(head).replace(escape(described), f"*{escape(described)}*", 1)


def _public(text: str, blocks: list[Block]) -> Message:
    return fit_message({"text": text, "blocks": blocks, "response_type": "in_channel"})
