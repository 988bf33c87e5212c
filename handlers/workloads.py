"""Listeners for `/kai queues`, `/kai pending` and `/kai why` (docs/design.md §2 "KAI workloads").

Viewers may run them; read-only, answered privately (the asker's question about a job).
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.service.deps import Deps
from bot.slack.blocks import Message
from bot.workloads import render as render_workloads
from bot.workloads import usecase
from bot.workloads.commands import Pending, Queues, Why
from handlers.invocation import Executor, Invocation, Runner


async def run_queues(parsed: Queues, deps: Deps, invocation: Invocation) -> Message:
    """`/kai queues`: the KAI queue tree with GPU quota, limit, allocated and requested, starved
    queues and queues over quota marked."""
    await deps.gate.require_viewer(invocation.user_id, "list KAI queues")
    kube = deps.kube_for(parsed.cluster)
    after = deps.settings.alerts.starved_after
    found = await usecase.read_starvation(kube, now=deps.clock(), after=after)
    message = render_workloads.queues_message(
        found.rows, cluster=kube.cluster, marks=found.marks(), starved_after=after
    )
    return {**message, "response_type": "ephemeral"}


async def run_pending(parsed: Pending, deps: Deps, invocation: Invocation) -> Message:
    """`/kai pending [NAMESPACE | --all-namespaces]`: PodGroups the scheduler cannot place."""
    await deps.gate.require_viewer(invocation.user_id, "list pending PodGroups")
    kube = deps.kube_for(parsed.cluster)
    namespace = None if parsed.all_namespaces else parsed.namespace
    groups, stale, _read = await usecase.read_pending(kube, namespace)
    scope = f"namespace {namespace}" if namespace else "all namespaces"
    message = render_workloads.pending_message(
        groups,
        stale,
        cluster=kube.cluster,
        scope=scope,
        now=deps.clock(),
        command=deps.settings.slack.command,
    )
    return {**message, "response_type": "ephemeral"}


async def run_why(parsed: Why, deps: Deps, invocation: Invocation) -> Message:
    """`/kai why NAMESPACE/POD`: its PodGroup, queue, the scheduler's reasons, what to do."""
    await deps.gate.require_viewer(
        invocation.user_id, f"explain pod {parsed.namespace}/{parsed.name}"
    )
    kube = deps.kube_for(parsed.cluster)
    command = deps.settings.slack.command
    answer = await usecase.explain_pod(kube, parsed.namespace, parsed.name, command=command)
    return {
        **render_workloads.why_message(answer, cluster=kube.cluster),
        "response_type": "ephemeral",
    }


RUNNERS: dict[type, Runner] = {Queues: run_queues, Pending: run_pending, Why: run_why}
EXECUTORS: dict[str, Executor] = {}


def register(app: AsyncApp) -> None:
    """No buttons of its own."""
