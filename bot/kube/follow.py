"""Following one object after a change until a condition holds: a watch, then polls.

A reconcile, refresh, sync or pause is over when a controller writes the object's status; a watch
from the resourceVersion of our own write (or of our read) sees that write as it happens, in one
request, where polls see it up to a poll interval late, in many. When the API forbids `watch`
(403) or the watch breaks (410 Expired, a dropped connection, a stream ended early),
`watch_until` says the wait is not over and `follow` polls the rest of it. The watch is the
bot's own read (never impersonated) on the one watch transport (`bot.kube.watches`), holding no
client thread. The one `follow` of KEDA pauses (`bot.keda.usecase`) and GitOps requests
(`bot.gitops.usecase`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from bot.core import conditions, errors
from bot.core.models import RawObject, Sleep
from bot.kube.kinds import ResourceRef
from bot.kube.ports import KubeReader, KubeWatcher

log = logging.getLogger(__name__)

IsDone = Callable[[RawObject | None], bool]  # None: the object was deleted


class FollowedObject(Protocol):
    """The object to follow (a KEDA or a GitOps target)."""

    @property
    def ref(self) -> ResourceRef: ...
    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str | None: ...


@dataclass(frozen=True)
class Polling:
    """How long a wait lasts and how `follow` polls when it cannot watch: soon after the watch
    gives up, then less often (up to Flux's 2 s), until `timeout` seconds have passed. Tests pass
    short values; nothing here sleeps on its own."""

    timeout: float
    first: float = 0.05
    factor: float = 1.5
    longest: float = 2.0
    sleep: Sleep = asyncio.sleep

    def intervals(self) -> Iterator[float]:
        interval = self.first
        while True:
            yield interval
            interval = min(interval * self.factor, self.longest)


@dataclass(frozen=True)
class Watched:
    """The last state seen (None: deleted), whether `is_done` held for it, and whether the wait
    is over (done, or watched until the deadline); when not over, poll the rest."""

    obj: RawObject | None
    done: bool
    over: bool


async def watch_until(
    kube: KubeReader,
    ref: ResourceRef,
    name: str,
    namespace: str | None,
    is_done: IsDone,
    *,
    since: RawObject,
    deadline: float,
) -> Watched:
    """Watch the object from `since` (as read or as our write returned it) until `is_done`
    holds or the event loop's time reaches `deadline`.

    Never raises a KubeError: a watch that cannot be made or breaks is logged and the result
    says the wait is not over.
    """
    if is_done(since):
        return Watched(since, True, True)
    version = conditions.as_text(conditions.metadata(since).get("resourceVersion"))
    if not isinstance(kube, KubeWatcher) or not version:
        return Watched(since, False, False)
    loop = asyncio.get_running_loop()
    last: RawObject | None = since
    changes = kube.watch_object(
        ref, name, namespace, resource_version=version, seconds=deadline - loop.time()
    )
    try:
        async with contextlib.aclosing(changes):  # ends the stream now
            async for last in changes:
                if is_done(last):
                    return Watched(last, True, True)
    except (errors.KubeForbidden, errors.KubeExpired, errors.KubeUnavailable) as e:
        log.info("cannot follow %s %s by watch, polling instead: %s", ref.kind, name, e)
        return Watched(last, False, False)
    if loop.time() < deadline:
        log.info("the watch of %s %s ended early; polling the rest of the wait", ref.kind, name)
    return Watched(last, False, loop.time() >= deadline)


async def follow(
    kube: KubeReader,
    target: FollowedObject,
    is_done: IsDone,
    *,
    written: RawObject | None,
    deadline: float,
    polling: Polling,
) -> tuple[RawObject | None, bool]:
    """Follow the object until `is_done` holds for it or the event loop's time reaches
    `deadline`: by a watch from our write (`written`, as the patch returned it), then, when it
    cannot be made or breaks, or there is no write to watch from, by polls for the rest.

    Returns the last state seen (None: deleted) and whether `is_done` held for it.

    Raises:
        KubeError: a poll's read failed (a watch that fails only hands over to the polls).
    """
    if written is not None:
        watched = await watch_until(
            kube, target.ref, target.name, target.namespace, is_done,
            since=written, deadline=deadline,
        )  # fmt: skip
        if watched.over:
            return watched.obj, watched.done
    return await _poll(kube, target, is_done, deadline, polling)


async def _poll(
    kube: KubeReader, target: FollowedObject, is_done: IsDone, deadline: float, polling: Polling
) -> tuple[RawObject | None, bool]:
    """Read until `is_done` or the deadline (the last read at it)."""
    loop = asyncio.get_running_loop()
    for interval in polling.intervals():
        await polling.sleep(max(0.0, min(interval, deadline - loop.time())))
        obj = await kube.get_object(target.ref, target.name, target.namespace)
        if is_done(obj):
            return obj, True
        if loop.time() >= deadline:
            return obj, False
    raise AssertionError("intervals never end")
