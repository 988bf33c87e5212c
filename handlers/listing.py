"""`/kai list KIND [NAMESPACE | --all-namespaces]` (viewers; read-only, answered privately), and
the hint every not-found reply gets: `with_elsewhere_hint` wraps a runner so that when the object
it names does not exist (`ObjectMissing`: reconcile, sync, pause, resume, and whatever raises it
later), the reply says what to type instead (`bot.listing.usecase`).
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.core import errors
from bot.listing import usecase
from bot.listing.commands import ListObjects
from bot.service.deps import Deps
from bot.slack.blocks import Message
from handlers.invocation import Invocation, Runner


async def run_list(parsed: ListObjects, deps: Deps, invocation: Invocation) -> Message:
    """`/kai list KIND`: one line per object with its verdict, worst first."""
    await deps.gate.require_viewer(invocation.user_id, f"list {parsed.kind} objects")
    kube = deps.kube_for(parsed.cluster)
    message = await usecase.list_kind(kube, deps.settings, parsed, now=deps.clock())
    return {**message, "response_type": "ephemeral"}


def with_elsewhere_hint(run: Runner) -> Runner:
    """`run`, whose not-found replies also say what to type instead, as the command typed."""

    async def hinted(parsed: object, deps: Deps, invocation: Invocation) -> Message:
        try:
            return await run(parsed, deps, invocation)
        except errors.ObjectMissing as e:
            kube = deps.kube_for(getattr(parsed, "cluster", None))
            hint = await usecase.hint_for_missing(kube, deps.settings, e, parsed)
            raise errors.UserError(f"{e}{hint}") from e

    return hinted


RUNNERS: dict[type, Runner] = {ListObjects: run_list}


def register(app: AsyncApp) -> None:
    """No buttons of its own."""
