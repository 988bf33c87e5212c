"""Listener for `/kai diagnose kai|keda|NAMESPACE/DEPLOYMENT` (docs/design.md §2 "Diagnose").

Viewers may run it; read-only. The diagnosis is posted in the channel, as the evidence the
channel discusses (the alert thread's first reply is the same message).
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.diagnostics import render, usecase
from bot.diagnostics.commands import Diagnose
from bot.diagnostics.subjects import subject_for_command
from bot.service.deps import Deps
from bot.slack.blocks import Message
from handlers.invocation import Invocation, Runner


async def run_diagnose(parsed: Diagnose, deps: Deps, invocation: Invocation) -> Message:
    """`/kai diagnose`: pods, restarts, terminations, Warning events and a log tail, in channel."""
    subject = subject_for_command(parsed, deps.settings)
    await deps.gate.require_viewer(invocation.user_id, f"diagnose {subject.describe()}")
    kube = deps.kube_for(parsed.cluster)
    diagnosis = await usecase.diagnose(kube, subject, now=deps.clock())
    return {**render.diagnosis_message(diagnosis), "response_type": "in_channel"}


RUNNERS: dict[type, Runner] = {Diagnose: run_diagnose}


def register(app: AsyncApp) -> None:
    """No buttons of its own."""
