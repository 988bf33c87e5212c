"""The service's timed jobs, on APScheduler's `AsyncIOScheduler` in the running event loop.

This module only starts and stops jobs: the list of them (one alert check per cluster every
`alerts.interval`, the first ones within seconds of the start, the Lease renewal, the drain,
the timed-change tick, the eviction watches, approval expiry, the heap trim) and any `Job` the
composition root adds. The jobs themselves are `bot.service.jobs_alerts`, `jobs_timed` and
`jobs_evictions`. A job never overlaps itself (`max_instances=1`) and missed runs collapse into
one (`coalesce`): a slow cluster delays its next check, never stacks them. A failing run is
logged and the schedule goes on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.changes.approval import expire_requests
from bot.notices.usecase import EvictionNotices
from bot.service.deps import Deps
from bot.service.jobs_alerts import (
    LeaseJob,
    WatchedChecks,
    drain_alerts,
    is_leader,
    look_at_alertmanager,
)
from bot.service.jobs_evictions import EVICTION_EVERY, EvictionJob
from bot.service.jobs_timed import (
    FIRST_SWEEPS_WITHIN,
    PauseExpiry,
    TimedChanges,
    sweep_cordons,
    sweep_suspends,
)
from bot.service.memory import TRIM_EVERY, trim_heap

log = logging.getLogger(__name__)

JobFunction = Callable[[Deps], Awaitable[None]]
PAUSE_TICK = timedelta(seconds=2)  # how often the soonest known due time is looked at
APPROVAL_TICK = timedelta(seconds=30)  # how often requests past their 15 minutes are ended
# A fleet's first alert checks after a start (or a takeover of the Lease): each cluster's first
# list is judged at once, so they all come within a few seconds (a cause already there is paged
# `hold` after the start, not up to an interval later), FIRST_CHECK_GAP apart so that a
# thousand clusters do not all list at the same instant.
FIRST_CHECKS_WITHIN = timedelta(seconds=5)
FIRST_CHECK_GAP = timedelta(milliseconds=20)


@dataclass(frozen=True)
class Job:
    """A job: `run(deps)` every `every`; the first run after `every`, or at once (`at_start`),
    or after `first_after` (to spread per-cluster jobs over their first seconds).

    A job that posts or changes things should begin with `if not is_leader(deps): return`, so
    only one replica does it.
    """

    name: str
    run: JobFunction
    every: timedelta
    at_start: bool = False
    first_after: timedelta | None = None


def eviction_jobs(deps: Deps) -> list[Job]:
    """One eviction watch per cluster when `notices.evictions` is on."""
    if not deps.settings.notices.evictions:
        return []
    notices = EvictionNotices(deps.settings, deps.alerts)
    return [
        Job(f"evictions-{c.name}", EvictionJob(c.name, notices), EVICTION_EVERY, at_start=True)
        for c in deps.settings.clusters
    ]


async def expire_approvals(deps: Deps) -> None:
    """Say on each approval request nobody approved in time that it expired (leader only)."""
    if is_leader(deps):
        await expire_requests(deps)


def alert_jobs(deps: Deps, first_checks_after: timedelta = timedelta(0)) -> list[Job]:
    """The Lease renewal (first, at once), per configured cluster the alert check, and one tick
    for every cluster's timed-pause and timed-suspend expiries (whoever holds the Lease runs
    them; the expiry is stored on the object).

    The clusters' first checks come within a few seconds of the start (`first_checks`; after
    `first_checks_after`, the test bed's: its tests drive the checks of the first interval),
    then every interval; with a Lease, taking it (at the start, or over from another replica)
    is what brings them, the same way. The first sweeps are spread evenly over FIRST_SWEEPS_WITHIN.
    """
    jobs = [Job("alerts-drain", drain_alerts, deps.settings.alerts.interval, at_start=True)]
    clusters = deps.settings.clusters
    interval = deps.settings.alerts.interval
    checks = [WatchedChecks(deps, cluster.name) for cluster in clusters]
    firsts = [first_checks_after + at for at in first_checks(len(clusters), interval)]
    if deps.lease is not None:
        lease = LeaseJob(list(zip(checks, firsts, strict=True)))
        jobs.append(Job("lease", lease, deps.lease.renew_every, at_start=True))
    expiries: list[PauseExpiry] = []
    for index, (cluster, check, first) in enumerate(zip(clusters, checks, firsts, strict=True)):
        # With a Lease, taking it (at the start too) brings the first checks: the job's own
        # first run is an interval later, or every check would run twice at once at a start.
        after = first if deps.lease is None else first + interval
        jobs.append(Job(f"alerts-{cluster.name}", check, interval, first_after=after))
        sweep_first = FIRST_SWEEPS_WITHIN * ((index + 1) / len(clusters))
        expiries.append(PauseExpiry(cluster.name, first_sweep_after=sweep_first))
        for sweep in (sweep_suspends, sweep_cordons):
            expiries.append(PauseExpiry(cluster.name, first_sweep_after=sweep_first, sweep=sweep))
    jobs.append(Job("timed-changes", TimedChanges(expiries), PAUSE_TICK))
    jobs.append(Job("trim-heap", trim_heap, TRIM_EVERY))
    if deps.settings.alertmanager is not None:
        jobs.append(Job("alertmanager", look_at_alertmanager, interval))
    if deps.settings.access.approval is not None:
        jobs.append(Job("approval-expiry", expire_approvals, APPROVAL_TICK))
    return jobs


def first_checks(clusters: int, interval: timedelta) -> list[timedelta]:
    """When each of `clusters` clusters is first checked after a start: the first at once, the
    others FIRST_CHECK_GAP apart, all within FIRST_CHECKS_WITHIN (and within the interval)."""
    spread = min(interval, FIRST_CHECKS_WITHIN, FIRST_CHECK_GAP * clusters)
    return [spread * (index / clusters) for index in range(clusters)]


class Schedule:
    """The scheduler and its jobs; `start()` inside the running loop, `await stop()` to end."""

    def __init__(self, deps: Deps, jobs: Sequence[Job]) -> None:
        self.deps = deps
        self.jobs = tuple(jobs)
        self.scheduler = AsyncIOScheduler(timezone=UTC)
        self._running: set[asyncio.Task[Any]] = set()

    def start(self) -> None:
        """Add the jobs and start.

        Raises:
            RuntimeError: outside a running event loop.
        """
        for job in self.jobs:
            first: dict[str, Any] = {"next_run_time": datetime.now(UTC)} if job.at_start else {}
            if job.first_after is not None:  # then every `every` from that first run
                first = {"next_run_time": datetime.now(UTC) + job.first_after}
            self.scheduler.add_job(
                self._runner(job),
                "interval",
                seconds=job.every.total_seconds(),
                id=job.name,
                name=job.name,
                max_instances=1,
                coalesce=True,
                misfire_grace_time=None,  # late is better than never: run, however late
                replace_existing=True,
                **first,
            )
        self.scheduler.start()

    async def stop(self) -> None:
        """Stop scheduling and cancel the runs under way (they are idempotent: the next start
        redoes them)."""
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
            await asyncio.sleep(0)  # the shutdown is queued on the loop: let it happen now
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
        for job in self.jobs:
            if isinstance(job.run, WatchedChecks | TimedChanges):
                await job.run.close()
        for gateway in self.deps.kube.values():
            close_streams = getattr(gateway, "close_streams", None)  # a gateway's watches
            if close_streams is not None:
                await close_streams()

    def _runner(self, job: Job) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            task = asyncio.current_task()
            if task is not None:
                self._running.add(task)
            try:
                await self.deps.inflight.acks_sent()  # a job due during a burst of acks waits
                await job.run(self.deps)
            except asyncio.CancelledError:
                log.info("job %s stopped with the service", job.name)
            except Exception:
                log.exception("job %s failed; it runs again in %s", job.name, job.every)
            finally:
                if task is not None:
                    self._running.discard(task)

        return run


def build_scheduler(
    deps: Deps, extra_jobs: Sequence[Job] = (), first_checks_after: timedelta = timedelta(0)
) -> Schedule:
    """The alert jobs (see `alert_jobs`), the eviction watches, plus `extra_jobs`, not started
    yet."""
    alerts = alert_jobs(deps, first_checks_after)
    return Schedule(deps, [*alerts, *eviction_jobs(deps), *extra_jobs])
