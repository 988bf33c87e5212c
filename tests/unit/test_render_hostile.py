"""No message the bot writes mentions, links or broadcasts anything but its own mentions.

Every kind of message is rendered with hostile text in every field that comes from the cluster
(conditions, annotations, controllers' messages, revisions, phases) or from a user (reasons,
command text), and its fallback `text` and every mrkdwn text object are checked: Slack would
find no control sequence in them except the bot's own mentions, and each shows the hostile
text as text (issue 11 item 4, docs/design.md §2 "Safety").
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hostile import HOSTILE, SHOWN, markup_problems, texts
from objects import keda_conditions, keda_object

from bot.access import policy
from bot.alerts import render as render_alerts
from bot.alerts import render_evidence, render_replies
from bot.alerts.machine import Note, NoteKind
from bot.alerts.model import (
    EVIDENCE_NOTES,
    AlertKey,
    AlertState,
    ClusterAlerts,
    Observation,
    Severity,
)
from bot.config.settings import AccessSettings
from bot.core import errors
from bot.core.models import Finding, Health, HealthReport
from bot.diagnostics import render as render_diagnosis
from bot.diagnostics.model import Component, Diagnosis, EventLine, LogTail
from bot.gitops import render as render_gitops
from bot.gitops import render_suspend
from bot.gitops.argo import AppState, ArgoReport
from bot.gitops.plan import FluxReport, StepResult
from bot.gitops.suspend import ALREADY_SUSPENDED, ExpiredSuspend, SuspendOutcome, SuspendPlan
from bot.gitops.target import GitopsTarget
from bot.health import render as render_health
from bot.home import render as render_home
from bot.home.model import AlertLine, ChangeLine, ClusterStatus, HeldObject, Home
from bot.keda import render as render_keda
from bot.keda import render_changes
from bot.keda.pause import (
    KedaTarget,
    PauseOutcome,
    find_expired_pause,
    plan_pause,
    plan_resume,
    summarise,
)
from bot.rules import keda
from bot.rules.flux_suspend import SuspendRecord
from bot.slack import blocks

OPERATOR, GROUP = "U0OPERATOR", "S0ONCALL"
ALLOWED = {f"<@{OPERATOR}>", f"<!subteam^{GROUP}>"}  # the bot's own mentions, nothing else
NOW = datetime(2026, 8, 24, 8, 0, tzinfo=UTC)
JOB = KedaTarget("ScaledJob", "annia", "annia-worker", "prod")
HR = GitopsTarget("HelmRelease", "flux-system", "kai-scheduler", "prod")
APP = GitopsTarget("Application", "argocd", "kai-scheduler", "prod")

Message = dict[str, Any]


def hostile_job(paused: bool) -> dict[str, Any]:
    """A ScaledJob whose every annotation and condition message is hostile."""
    annotations = {
        keda.PAUSED_BY: OPERATOR,
        keda.PAUSED_AT: HOSTILE,
        keda.PAUSE_REASON: HOSTILE,
        keda.PAUSE_UNTIL: "2026-08-24T07:00:00Z",
    }
    if paused:
        annotations[keda.PAUSED] = "true"
    conditions = keda_conditions(JOB.kind, paused="True" if paused else "False")
    for condition in conditions:
        condition["message"] = HOSTILE
        condition["reason"] = HOSTILE
    found = keda_object(JOB.kind, JOB.name, JOB.namespace, annotations=annotations)
    found["status"] = {"conditions": conditions}
    found["metadata"]["resourceVersion"] = "7"
    return found


def keda_messages() -> Iterator[tuple[str, Message]]:
    paused, running = hostile_job(True), hostile_job(False)
    rows = [summarise(paused), summarise(running)]
    yield (
        "scaledjobs listing",
        render_keda.listing_message(
            rows, cluster="prod", scope="namespace annia", now=NOW, command="/kai"
        ),
    )
    pause = plan_pause(
        JOB, running, user=OPERATOR, reason=HOSTILE, duration=timedelta(hours=2), now=NOW
    )
    resume = plan_resume(JOB, paused)
    for name, plan in (("pause", pause), ("resume", resume)):
        lines = render_changes.confirm_lines(plan, duration=None, now=NOW, command="/kai")
        yield (
            f"{name} confirmation",
            blocks.confirmation_message(render_changes.confirm_title(plan), lines, "sealed"),
        )
        outcome = PauseOutcome(plan, keda.read_pause_state(paused), False, 10.0)
        yield f"{name} result", render_changes.result_message(outcome, wait_timeout=10, now=NOW)
        announced = render_changes.announcement_text(
            outcome, user=OPERATOR, requested_by=OPERATOR, now=NOW
        )
        yield f"{name} announcement", blocks.text_message(announced)
    yield "nothing to do", render_changes.nothing_message(plan_pause(
        JOB, paused, user=OPERATOR, reason="", duration=None, now=NOW
    ), NOW)  # fmt: skip
    yield "refused", render_changes.refused_message("pause", JOB, errors.KubeForbidden(HOSTILE))
    expired = find_expired_pause(paused, "prod", NOW)
    assert expired is not None
    outcome = PauseOutcome(resume, keda.read_pause_state(running), True, 1.0)
    yield "automatic resume", blocks.text_message(render_changes.auto_resume_text(expired, outcome))


def gitops_messages() -> Iterator[tuple[str, Message]]:
    app = AppState(HOSTILE, HOSTILE, HOSTILE, HOSTILE, HOSTILE, HOSTILE, HOSTILE, (HOSTILE,))
    yield "flux progress", render_gitops.flux_progress([HR, HR], OPERATOR)
    yield "argo progress", render_gitops.argo_progress(APP, "sync", OPERATOR)
    for state in ("succeeded", "failed", "unknown", "timed out"):
        step = StepResult(HR, state, HOSTILE, HOSTILE, HOSTILE, HOSTILE, HOSTILE, HOSTILE)  # type: ignore[arg-type]
        flux = FluxReport((step,), 1.0)
        yield f"flux result {state}", render_gitops.flux_result(flux, OPERATOR)
        for action in ("refresh", "sync"):
            argo = ArgoReport(APP, action, state, app, 1.0, waited=HOSTILE)  # type: ignore[arg-type]
            yield f"argo {action} result {state}", render_gitops.argo_result(argo, OPERATOR)
        sync = ArgoReport(APP, "sync", state, app, 1.0, waited=HOSTILE)  # type: ignore[arg-type]
        record = render_gitops.sync_audit_text(sync, OPERATOR)
        yield f"sync record {state}", blocks.text_message(record)
    title, lines = render_gitops.sync_confirmation(APP, app)
    yield "sync confirmation", blocks.confirmation_message(title, lines, "sealed")
    yield "already under way", render_gitops.already_under_way(HR, OPERATOR)


def alert_messages() -> Iterator[tuple[str, Message]]:
    key = AlertKey("prod", "Config", "kai-config", HOSTILE)
    seen = Observation(key, Severity.CRITICAL, HOSTILE, HOSTILE, HOSTILE, HOSTILE, since=NOW)
    alert = AlertState(
        observation=seen,
        first_seen=NOW,
        firing_since=NOW,
        root_channel="C0ALERTS",
        root_ts="1.000100",
        acked_by=OPERATOR,
        acked_at=NOW,
        silenced_by=OPERATOR,
        silenced_until=NOW + timedelta(hours=1),
        silence_reason=HOSTILE,
    )
    yield "alert root", render_alerts.root_message(alert, command="/kai")
    for kind in NoteKind:
        if kind in EVIDENCE_NOTES:  # their words are stored, rendered: see the next ones
            continue
        note = Note(kind, NOW, OPERATOR, HOSTILE, NOW + timedelta(hours=1))
        yield f"alert reply {kind.value}", render_replies.reply_message(alert, note)
    # An alert's diagnosis, kept in the state until it is posted, then sent as kept.
    log = LogTail(HOSTILE, HOSTILE, True, (HOSTILE, HOSTILE))
    event = EventLine("Pod", HOSTILE, HOSTILE, HOSTILE, 3, NOW)
    component = Component(HOSTILE, Health.DEGRADED, HOSTILE, (), (HOSTILE,), (event,), log)
    diagnosis = Diagnosis("prod", HOSTILE, NOW, (component,), (HOSTILE,))
    for name, rendered in (
        ("diagnosis", render_diagnosis.diagnosis_message(diagnosis)),
        ("failed diagnosis", render_diagnosis.failed_message(HOSTILE, "prod", OSError(HOSTILE))),
    ):
        kept = render_evidence.kept_evidence(rendered, limit=2_000)
        yield f"alert {name}, kept and sent", render_evidence.evidence_message(*kept)
    listing = [ClusterAlerts("prod", {key: alert}, failures=3, last_error=HOSTILE)]
    yield "alerts listing", render_alerts.alerts_listing(listing, hold=timedelta(seconds=60))


def other_messages() -> Iterator[tuple[str, Message]]:
    finding = Finding(HOSTILE, Health.DEGRADED, HOSTILE, f"{HOSTILE} (detail)")
    healthy = Finding(HOSTILE, Health.HEALTHY, HOSTILE)
    report = HealthReport(cluster="prod", findings=(finding, healthy), checked_at=NOW)
    yield "health report", render_health.health_message(report)
    yield "error", blocks.error_message(errors.UserError(HOSTILE))
    yield "usage", blocks.usage_message(HOSTILE, HOSTILE)
    yield "help", blocks.help_message(HOSTILE)
    yield "confirmation", blocks.confirmation_message(HOSTILE, [HOSTILE], "sealed")
    access = AccessSettings(operators=(OPERATOR, GROUP, "@platform-oncall"), viewers=None)
    with pytest.raises(errors.NotAllowed) as refused:
        policy.require_operator("U0STRANGER", HOSTILE, access, {})
    yield "not an operator", blocks.error_message(refused.value)


def suspend_messages() -> Iterator[tuple[str, Message]]:
    """Flux suspend and resume: the record on the object (who, why, until) is cluster text."""
    record = SuspendRecord(True, by=HOSTILE, at=HOSTILE, reason=HOSTILE, until=HOSTILE)
    ours = SuspendRecord(True, by=OPERATOR, at=HOSTILE, reason=HOSTILE, until=HOSTILE)
    patch = {"metadata": {"annotations": {"kai-chatops/suspend-reason": HOSTILE}}}
    refused = SuspendPlan("suspend", HR, record, refusal=ALREADY_SUSPENDED)
    yield "flux suspend refused", render_suspend.refusal_message(refused, "/kai", "prod")
    suspended = SuspendOutcome(SuspendPlan("suspend", HR, ours, patch=patch), written={})
    text = render_suspend.suspend_announcement(suspended, OPERATOR, NOW)
    yield "flux suspend record", blocks.text_message(text)
    step = StepResult(HR, "failed", HOSTILE, HOSTILE, HOSTILE, HOSTILE, HOSTILE, HOSTILE)
    resumed = SuspendOutcome(SuspendPlan("resume", HR, ours), {}, FluxReport((step,), 1.0))
    yield (
        "resume record",
        blocks.text_message(render_suspend.resume_announcement(resumed, OPERATOR)),
    )
    yield "flux resume result", render_suspend.resume_result(resumed, OPERATOR)
    expired = ExpiredSuspend(HR, ours, NOW, NOW - timedelta(hours=1))
    text = render_suspend.auto_resume_announcement(expired, resumed)
    yield "automatic flux resume", blocks.text_message(text)


def home_views() -> Iterator[tuple[str, Message]]:
    """The Home tab is published, not posted: it is escaped on its own way out."""
    finding = Finding(HOSTILE, Health.DEGRADED, HOSTILE, HOSTILE)
    report = HealthReport(cluster="prod", findings=(finding,), checked_at=NOW)
    home = Home(
        now=NOW,
        clusters=(ClusterStatus("prod", report), ClusterStatus("lab", error=HOSTILE)),
        alerts=(
            AlertLine(
                "a1b2c3", "prod", True, HOSTILE, HOSTILE, "silenced", NOW, OPERATOR, NOW, HOSTILE
            ),
        ),
        held=(
            HeldObject(
                "paused", "ScaledJob", "annia", "w", "prod", HOSTILE, HOSTILE, HOSTILE, HOSTILE
            ),
        ),
        changes=(ChangeLine(NOW, HOSTILE, "pause", HOSTILE, "ok", HOSTILE, HOSTILE),),
    )
    yield "home view", render_home.home_view(home, "/kai")
    yield "home view not allowed", render_home.not_allowed_view(HOSTILE)


def every_message() -> list[tuple[str, Message]]:
    makers: list[Callable[[], Iterator[tuple[str, Message]]]] = [
        keda_messages,
        gitops_messages,
        alert_messages,
        suspend_messages,
        home_views,
        other_messages,
    ]
    return [pair for make in makers for pair in make()]


MESSAGES = every_message()
# Kinds that carry no text from the cluster or a user (object names are validated on input).
OWN_WORDS_ONLY = {
    "pause result",
    "resume result",
    "flux progress",
    "argo progress",
    "already under way",
    "alert reply acknowledged",
    "alert reply unsilenced",
    "alert reply silence expired",
    "alert reply resolved",
}


@pytest.mark.parametrize(("kind", "message"), MESSAGES, ids=[kind for kind, _ in MESSAGES])
def test_hostile_text_is_shown_as_text_in_blocks_and_fallback_alike(
    kind: str, message: Message
) -> None:
    assert markup_problems(message, ALLOWED) == []
    shown = " ".join(html.unescape(text) for _, text in texts(message))
    is_shown = any(hostile in shown for hostile in SHOWN)
    assert is_shown is (kind not in OWN_WORDS_ONLY), "the hostile text should show, as text"
    assert is_shown is ("&amp;" in shown), "text is shown exactly as written"


@pytest.mark.parametrize(("kind", "message"), MESSAGES, ids=[kind for kind, _ in MESSAGES])
def test_the_bots_own_mentions_are_live_never_shown_escaped(kind: str, message: Message) -> None:
    for where, text in texts(message):
        assert f"&lt;@{OPERATOR}&gt;" not in text, f"{kind} {where}: a mention shown escaped"


def test_a_flux_resume_reply_ends_with_a_live_mention_of_who_asked() -> None:
    reply = dict(MESSAGES)["flux resume result"]
    footer = reply["blocks"][-1]["elements"][0]["text"]
    assert footer.startswith(f"requested by <@{OPERATOR}> · took")
