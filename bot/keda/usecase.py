"""KEDA pause and resume against a cluster: list, read, patch, read back, wait for KEDA.

Use-cases: the gateway comes in as a parameter (a `Protocol`), decisions come from the pure
`bot.keda.pause` and wording from `bot.keda.render`. Writes are merge patches carrying the
resourceVersion read, so a concurrent change is re-read and re-decided, never overwritten.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.config.settings import Settings
from bot.core import conditions, errors
from bot.core.models import RawObject
from bot.keda import commands, render
from bot.keda.pause import (
    KedaRow,
    KedaTarget,
    PauseOutcome,
    Plan,
    plan_pause,
    plan_resume,
    summarise,
)
from bot.kube import follow, kinds
from bot.kube.ports import KubeReader, KubeWriter
from bot.rules import keda

log = logging.getLogger(__name__)

REFS = (kinds.SCALED_JOB, kinds.SCALED_OBJECT)
CONFLICT_RETRIES = 2  # re-read and re-decide this many times after a 409
PausePlanMaker = Callable[[RawObject], Plan]


@dataclass(frozen=True)
class AckWait:
    """How long to wait for KEDA's `Paused` condition to follow the annotation, and how often."""

    timeout: float = 10.0
    interval: float = 0.5

    @property
    def polling(self) -> follow.Polling:
        """Polls every `interval` when the watch cannot be used."""
        return follow.Polling(self.timeout, first=self.interval, factor=1.0, longest=self.interval)


async def listing(
    kube: KubeReader, parsed: commands.ScaledJobs, settings: Settings
) -> tuple[list[KedaRow], str]:
    """`/kai scaledjobs`: the rows, and how the reply names where they were listed.

    Raises:
        UserError: no namespace given and `keda.namespaces` is empty, or a cluster-wide list
            is forbidden (naming the one-namespace form instead).
        KubeError: the cluster is unreachable or forbids a namespace's list.
    """
    namespaces, scope = listing_scope(parsed, settings)
    try:
        return await list_rows(kube, namespaces), scope
    except errors.KubeForbidden as e:
        if namespaces is not None:
            raise
        example = (settings.keda.namespaces or ("NAMESPACE",))[0]
        raise errors.UserError(
            "Listing across all namespaces needs cluster-wide list rights on scaledjobs and "
            "scaledobjects (keda.sh), which kai-chatops lacks here; list one namespace instead, "
            f"e.g. `{settings.slack.command} scaledjobs {example}`. ({e})"
        ) from e


def listing_scope(
    parsed: commands.ScaledJobs, settings: Settings
) -> tuple[Sequence[str] | None, str]:
    """The namespaces to list (None: cluster-wide) and how the reply names them.

    Raises:
        UserError: no namespace given and `keda.namespaces` is empty.
    """
    if parsed.all_namespaces:
        return None, "all namespaces"
    if parsed.namespace:
        return [parsed.namespace], f"namespace {parsed.namespace}"
    configured = list(settings.keda.namespaces)
    if not configured:
        raise errors.UserError(
            "keda.namespaces is empty in the configuration: give a NAMESPACE or --all-namespaces."
        )
    label = "namespace" if len(configured) == 1 else "namespaces"
    return configured, f"{label} {', '.join(configured)}"


async def list_rows(kube: KubeReader, namespaces: Sequence[str] | None) -> list[KedaRow]:
    """Every ScaledJob and ScaledObject with its verdict, by namespace, kind and name.

    `namespaces=None` lists cluster-wide: one paginated list per kind, whatever the number of
    namespaces. Otherwise one list per kind and namespace (what a namespaced Role allows).

    Raises:
        KubeError: the cluster is unreachable or forbids a list.
    """
    if namespaces is None:
        calls = [kube.list_objects(ref) for ref in REFS]
    else:
        calls = [kube.list_objects(ref, ns) for ns in namespaces for ref in REFS]
    pages = await asyncio.gather(*calls)
    rows = [summarise(obj) for page in pages for obj in page]
    return sorted(rows, key=lambda row: (row.namespace, row.kind, row.name))


async def read_target(kube: KubeReader, target: KedaTarget) -> RawObject:
    """The object.

    Raises:
        UserError: it does not exist (naming the other kind when one of that name does).
        KubeError: the cluster is unreachable or forbids the read.
    """
    obj = await kube.get_object(target.ref, target.name, target.namespace)
    if obj is not None:
        return obj
    other = KedaTarget(target.other_kind, target.namespace, target.name, target.cluster)
    try:
        other_exists = await kube.get_object(other.ref, other.name, other.namespace) is not None
    except errors.KubeError:
        other_exists = False
    if other_exists:
        raise errors.UserError(render.missing_text(target, other_exists))
    message = render.missing_text(target, other_exists)
    raise errors.ObjectMissing(message, target.kind, target.namespace, target.name)


async def prepare_pause(
    kube: KubeReader,
    target: KedaTarget,
    *,
    user: str,
    reason: str,
    duration: timedelta | None,
    now: datetime,
) -> Plan:
    """Read the object and decide the pause (for the confirmation); writes nothing."""
    obj = await read_target(kube, target)
    return plan_pause(target, obj, user=user, reason=reason, duration=duration, now=now)


async def prepare_resume(kube: KubeReader, target: KedaTarget) -> Plan:
    """Read the object and decide the resume (for the confirmation); writes nothing."""
    return plan_resume(target, await read_target(kube, target))


async def pause(
    kube: KubeWriter,
    target: KedaTarget,
    *,
    user: str,
    reason: str,
    duration: timedelta | None,
    now: datetime,
    wait: AckWait,
) -> PauseOutcome:
    """Pause the object as it now stands, then report what KEDA did (see `apply_plan`)."""

    def make_plan(obj: RawObject) -> Plan:
        return plan_pause(target, obj, user=user, reason=reason, duration=duration, now=now)

    return await apply_plan(kube, target, make_plan, wait)


async def resume(kube: KubeWriter, target: KedaTarget, *, wait: AckWait) -> PauseOutcome:
    """Resume the object as it now stands, then report what KEDA did (see `apply_plan`)."""
    return await apply_plan(kube, target, lambda obj: plan_resume(target, obj), wait)


async def apply_plan(
    kube: KubeWriter, target: KedaTarget, make_plan: PausePlanMaker, wait: AckWait
) -> PauseOutcome:
    """Read, decide, merge-patch with the resourceVersion read, read back, wait for KEDA.

    A 409 (changed meanwhile) re-reads and decides again, up to `CONFLICT_RETRIES` times; a plan
    with nothing to do writes nothing.

    Raises:
        UserError: the object does not exist, or vanished right after the write.
        KubeError: forbidden, unreachable, or still conflicting after the retries.
    """
    for attempt in range(CONFLICT_RETRIES + 1):
        obj = await read_target(kube, target)
        plan = make_plan(obj)
        if plan.nothing_to_do:
            return PauseOutcome(plan)
        version = conditions.as_text(conditions.metadata(obj).get("resourceVersion"))
        try:
            written = await kube.patch_object(
                target.ref, target.name, target.namespace, plan.patch_body(version)
            )
        except errors.KubeConflict:
            if attempt == CONFLICT_RETRIES:
                raise
            log.info("%s changed while we patched it; reading it again", target.describe())
            continue
        return await _wait_for_keda(kube, plan, wait, written=written)
    raise AssertionError("unreachable")


async def _wait_for_keda(
    kube: KubeReader, plan: Plan, wait: AckWait, *, written: RawObject
) -> PauseOutcome:
    """Follow the object from our write (`bot.kube.follow`) until KEDA's `Paused` condition
    matches, or the wait ends.

    Stops at once when the annotations seen are not what the plan wrote (someone changed
    them), since KEDA will never acknowledge a state the object no longer asks for. When a read
    fails after the write, the object as the patch returned it stands for the result, with the
    error in `read_error` (the change was made and must still be reported and recorded, as
    not read back).

    Raises:
        UserError: the object vanished right after the write.
    """
    target, expected = plan.target, plan.action == "pause"
    loop = asyncio.get_running_loop()
    started = loop.time()

    def is_settled(obj: RawObject | None) -> bool:
        return obj is None or _is_settled(keda.read_pause_state(obj), expected)

    try:
        obj, _ = await follow.follow(
            kube, target, is_settled,
            written=written, deadline=started + wait.timeout, polling=wait.polling,
        )  # fmt: skip
    except errors.KubeError as e:
        log.warning("%s: cannot read it back after the change: %s", target.describe(), e)
        state = keda.read_pause_state(written)
        return PauseOutcome(plan, state, False, loop.time() - started, read_error=str(e))
    if obj is None:
        raise errors.UserError(f"{target.describe()} was deleted right after the change.")
    state = keda.read_pause_state(obj)
    return PauseOutcome(plan, state, _is_acknowledged(state, expected), loop.time() - started)


def _is_acknowledged(state: keda.PauseState, expected: bool) -> bool:
    """KEDA's condition follows the annotation. A one-direction pause that stays keeps Paused
    True after a resume: that is KEDA's ack."""
    wanted_condition = keda.expects_paused_condition(state)
    return state.paused is expected and state.condition_paused is wanted_condition


def _is_settled(state: keda.PauseState, expected: bool) -> bool:
    """Nothing more to wait for: acknowledged, or the object no longer asks for it."""
    return _is_acknowledged(state, expected) or state.paused is not expected
