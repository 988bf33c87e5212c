"""Listeners for `/kai queues`, `/kai pending` and `/kai why` (docs/design.md §2 "KAI workloads").

Viewers may run them; read-only, answered privately (the asker's question about a job).
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.service.deps import Deps
from bot.slack.blocks import Message
from bot.workloads import render, usecase
from bot.workloads.commands import ShowPending, ShowQueues, Why
from handlers.invocation import Invocation, Runner


async def run_queues(parsed: ShowQueues, deps: Deps, invocation: Invocation) -> Message:
    """`/kai queues`: the KAI queue tree with GPU quota, limit, allocated and requested, starved
    queues and queues over quota marked."""
    await deps.gate.require_viewer(invocation.user_id, "list KAI queues")
    kube, after = deps.kube_for(parsed.cluster), deps.settings.alerts.starved_after
    found = await usecase.read_starvation(kube, now=deps.clock(), after=after)
    message = render.queues_message(
        found.rows, cluster=kube.cluster, marks=found.marks(), starved_after=after
    )
    return {**message, "response_type": "ephemeral"}


async def run_pending(parsed: ShowPending, deps: Deps, invocation: Invocation) -> Message:
    """`/kai pending [NAMESPACE | --all-namespaces]`: PodGroups the scheduler cannot place."""
    await deps.gate.require_viewer(invocation.user_id, "list pending PodGroups")
    kube, command = deps.kube_for(parsed.cluster), deps.settings.slack.command
    namespace = None if parsed.all_namespaces else parsed.namespace
    groups, stale, _read = await usecase.read_pending(kube, namespace)
    scope = f"namespace {namespace}" if namespace else "all namespaces"
    message = render.pending_message(
        groups, stale, cluster=kube.cluster, scope=scope, now=deps.clock(), command=command
    )
    return {**message, "response_type": "ephemeral"}


async def run_why(parsed: Why, deps: Deps, invocation: Invocation) -> Message:
    """`/kai why NAMESPACE/POD`: its PodGroup, queue, the scheduler's reasons, what to do."""
    where = f"{parsed.namespace}/{parsed.name}"
    await deps.gate.require_viewer(invocation.user_id, f"explain pod {where}")
    kube, command = deps.kube_for(parsed.cluster), deps.settings.slack.command
    answer = await usecase.explain_pod(kube, parsed.namespace, parsed.name, command=command)
    return {**render.why_message(answer, cluster=kube.cluster), "response_type": "ephemeral"}


RUNNERS: dict[type, Runner] = {ShowQueues: run_queues, ShowPending: run_pending, Why: run_why}


def register(app: AsyncApp) -> None:
    """No buttons of its own."""
