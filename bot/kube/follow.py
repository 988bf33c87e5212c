"""Following one object after a change: a watch of that object until a condition holds.

A reconcile, refresh, sync or pause is over when a controller writes the object's status; a watch
from the resourceVersion of our own write (or of our read) sees that write as it happens, in one
request, where polls see it up to a poll interval late, in many. When the API forbids `watch`
(403), the watch breaks (410 Expired, a dropped connection, a stream ended early) or every watch
thread is busy, `watch_until` says the wait is not over and the caller polls the rest of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

from bot.core import conditions, errors
from bot.core.models import RawObject
from bot.kube.kinds import ResourceRef
from bot.kube.ports import KubeReader, KubeWatcher

log = logging.getLogger(__name__)

IsDone = Callable[[RawObject | None], bool]  # None: the object was deleted


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
        async with contextlib.aclosing(changes):  # ends the stream (and frees its thread) now
            async for last in changes:
                if is_done(last):
                    return Watched(last, True, True)
    except (errors.KubeForbidden, errors.KubeExpired, errors.KubeUnavailable) as e:
        log.info("cannot follow %s %s by watch, polling instead: %s", ref.kind, name, e)
        return Watched(last, False, False)
    if loop.time() < deadline:
        log.info("the watch of %s %s ended early; polling the rest of the wait", ref.kind, name)
    return Watched(last, False, loop.time() >= deadline)
