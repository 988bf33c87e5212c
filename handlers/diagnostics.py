"""Listener for `/kai diagnose kai|keda|NAMESPACE/DEPLOYMENT` (docs/design.md §2 "Diagnose").

Viewers may run it; read-only. The diagnosis is posted in the channel, as the evidence the
channel discusses (the alert thread's first reply is the same message).
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.config.settings import Settings
from bot.diagnostics import render as render_diagnosis
from bot.diagnostics import usecase
from bot.diagnostics.commands import Diagnose
from bot.diagnostics.subjects import DeploymentSubject, KaiSubject, KedaSubject, Subject
from bot.service.deps import Deps
from bot.slack.blocks import Message
from handlers.invocation import Executor, Invocation, Runner


async def run_diagnose(parsed: Diagnose, deps: Deps, invocation: Invocation) -> Message:
    """`/kai diagnose`: pods, restarts, terminations, Warning events and a log tail, in channel."""
    subject = subject_of(parsed, deps.settings)
    await deps.gate.require_viewer(invocation.user_id, f"diagnose {subject.describe()}")
    kube = deps.kube_for(parsed.cluster)
    diagnosis = await usecase.diagnose(kube, subject, now=deps.clock())
    return {**render_diagnosis.diagnosis_message(diagnosis), "response_type": "in_channel"}


def subject_of(parsed: Diagnose, settings: Settings) -> Subject:
    """What `diagnose` looks at: `kai` in kai.namespace, `keda` by keda.apiservice, or one."""
    if parsed.target == "kai":
        return KaiSubject(settings.kai.namespace)
    if parsed.target == "keda":
        return KedaSubject(settings.keda.apiservice)
    return DeploymentSubject(parsed.namespace, parsed.name)


RUNNERS: dict[type, Runner] = {Diagnose: run_diagnose}
EXECUTORS: dict[str, Executor] = {}


def register(app: AsyncApp) -> None:
    """No buttons of its own."""
