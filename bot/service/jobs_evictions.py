"""The eviction-notice job of one cluster: its list-then-watch of KAI's Evict Events
(`bot.notices.watch`) for most of each run, on the Lease holder only.

`bot.service.schedule` runs it every EVICTION_EVERY; a run ends before the next is due, so the
job never finds itself still running.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from bot.kube import threads
from bot.kube.ports import CollectionFollower
from bot.notices.usecase import EvictionNotices
from bot.notices.watch import EvictionWatch
from bot.service.deps import Deps
from bot.service.jobs_alerts import is_leader

EVICTION_EVERY = timedelta(minutes=1)  # an eviction job's run; the next follows at once
EVICTION_PASS = EVICTION_EVERY - timedelta(seconds=2)  # how long a run watches
EVICTION_RETRY = timedelta(seconds=5)  # after a failed list or watch, or while not the holder


class EvictionJob:
    """The eviction notices of one cluster (`notices.evictions`): for most of its interval,
    on the Lease holder, its list-then-watch of KAI's Evict Events, watch after watch, a
    failure tried again after EVICTION_RETRY; a replica that does not hold the Lease forgets
    where it was and lists again once it does."""

    def __init__(self, cluster: str, notices: EvictionNotices) -> None:
        self.cluster = cluster
        self.notices = notices
        self.watch: EvictionWatch | None = None  # made at the first run, on the cluster's gateway

    async def __call__(self, deps: Deps) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + EVICTION_PASS.total_seconds()
        while (left := end - loop.time()) > 1:
            kube = deps.kube[self.cluster]
            if not is_leader(deps) or not isinstance(kube, CollectionFollower):
                if self.watch is not None:
                    self.watch.forget()
                await asyncio.sleep(min(EVICTION_RETRY.total_seconds(), left))
                continue
            if self.watch is None or self.watch.kube is not kube:
                self.watch = EvictionWatch(self.notices, kube, lambda: deps.clock())
            began = loop.time()
            with threads.scheduled():
                watched = await self.watch.run(lambda: is_leader(deps), left)
            if not watched or loop.time() - began < 1:  # never a tight loop of requests
                await asyncio.sleep(min(EVICTION_RETRY.total_seconds() if not watched else 1, left))
