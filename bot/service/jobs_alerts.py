"""The alert jobs: one cluster's check (on the Lease holder), its watched-copies loop, the drain
and the Lease renewal.

Plain `async def f(deps)` functions and two job objects (`WatchedChecks`, `LeaseJob`), which
`bot.service.schedule` runs; tests call them directly and move `deps.clock`. The loop that
wakes a check when what it read changes is `bot.kube.wakeup`, beside the copies it follows;
this module only binds it to the alert desk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.alerts.model import ALERTMANAGER
from bot.integrations import usecase_alertmanager
from bot.kube import threads
from bot.kube.informer import CachedKube
from bot.kube.ports import KubeReader
from bot.kube.wakeup import WakeOnChange
from bot.service.deps import Deps
from bot.slack.blocks import escape


def is_leader(deps: Deps) -> bool:
    """Whether this replica should do the leader's work (always, without a Lease)."""
    return deps.lease is None or deps.lease.is_leader()


def is_deposed(deps: Deps) -> bool:
    """Whether another replica holds the Lease, as this one last read it: not a renewal of
    its own that came late (a busy replica may not act for a moment, and still holds it)."""
    return deps.lease is not None and deps.lease.last_holder not in ("", deps.lease.identity)


async def check_cluster(
    deps: Deps, cluster: str, *, reads: KubeReader | None = None, deliver_apart: bool = False
) -> datetime | None:
    """The alert check of one cluster (reading through `reads` when given; its sending left to
    the cluster's courier with `deliver_apart`, as the scheduled checks do); does nothing
    unless this replica holds the Lease. Returns when a hold it saw runs out."""
    if not is_leader(deps):
        return None
    with threads.scheduled(), deps.metrics.alert_check_seconds.time():
        return await deps.alerts.run_check(
            deps.kube[cluster],
            deps.clock(),
            still_leader=lambda: is_leader(deps),
            reads=reads,
            deliver_apart=deliver_apart,
        )


class WatchedChecks(WakeOnChange):
    """The alert check of one cluster, reading a local copy kept current by watches
    (`bot.kube.informer`): run every interval as before (the job), at once when anything it
    reads changes, and again when a hold it saw runs out (`bot.kube.wakeup`), so a page comes
    `hold` after its cause rather than up to an interval later."""

    def __init__(self, deps: Deps, cluster: str) -> None:
        super().__init__(lambda: deps.kube[cluster], self._check, lambda: deps.clock())
        self.deps = deps
        self.cluster = cluster
        self.missed = False  # a check came while this replica could not act: run it again

    async def __call__(self, deps: Deps) -> None:
        await self.check()

    async def check(self) -> None:
        """The interval's check (and any the changes during it asked for). A replica that
        another one deposed lets its copies go: a deposed holder following a fleet keeps
        thousands of watches open on the clusters for checks it does not make. One whose own
        renewal came late keeps them: under a fleet-wide failure a busy holder may not act
        for a moment, and listing the whole fleet again then made it busier still."""
        if not is_leader(self.deps):
            self.missed = True
            if is_deposed(self.deps):
                await self.forget()
            return
        await self.run()

    async def _check(self, reads: CachedKube) -> datetime | None:
        self.missed = False
        look = await check_cluster(self.deps, self.cluster, reads=reads, deliver_apart=True)
        self.missed = not is_leader(self.deps)  # what it saw was not posted
        return look


async def drain_alerts(deps: Deps) -> None:
    """Deliver what the alerts of every cluster still owe Slack (on the Lease holder): at
    start-up, and when this replica becomes the holder, so nothing waits for the next check.
    Each cluster's drain is left to its courier: the job (the Lease's, on a takeover) never
    waits for Slack, and a slow cluster's drain holds up no other."""
    if not is_leader(deps):
        return
    for cluster in deps.settings.clusters:
        deps.alerts.drain_apart(cluster.name)
    if deps.settings.alertmanager is not None:
        deps.alerts.drain_apart(ALERTMANAGER)


async def look_at_alertmanager(deps: Deps) -> None:
    """Alertmanager's groups (on the Lease holder): their reminders, escalations and silences
    ending, their diagnoses, and what a webhook taken in by another replica owes Slack."""
    if deps.settings.alertmanager is None or not is_leader(deps):
        return
    await usecase_alertmanager.look_again(deps.alerts, deps.settings, deps.kube, deps.clock())


async def keep_lease(deps: Deps) -> bool:
    """Take or renew the Lease (a no-op without one). When the Lease cannot be used at all no
    replica may be running the checks: that is said in the alert channel once (not once per
    replica), and so is its end. A replica that just became the holder drains at once.
    Returns whether it just became the holder."""
    if deps.lease is None:
        return False
    was_leader = deps.lease.is_leader()
    await deps.lease.renew(deps.clock())
    error = deps.lease.last_error
    where = f"{deps.lease.namespace}/{deps.lease.name}"
    await deps.alerts.note_trouble(
        f"lease:{where}",
        deps.clock(),
        error=None if error is None else str(error),
        warning=(
            f":warning: kai-chatops cannot use its Lease {where}, so no replica may be "
            f"running the alert checks: {escape(str(error))}"
        ),
        recovery=f":white_check_mark: kai-chatops can use its Lease {where} again.",
        speaker=deps.lease.last_holder in ("", deps.lease.identity),
    )
    if deps.lease.is_leader() and not was_leader:
        await drain_alerts(deps)
        return True
    return False


class LeaseJob:
    """The Lease renewal (`keep_lease`), and when this replica takes the Lease over, every
    cluster's check run again within seconds, each at its offset: a replica that did not hold
    the Lease checked nothing and follows nothing, so a takeover (a failover, a rolling
    deploy) is not blind until each cluster's next interval. When it could only not act for
    a moment (its own renewal came late), only the checks that came meanwhile run again: the
    others saw nothing new, and a fleet's checks all at once are what made it late."""

    def __init__(self, checks: Sequence[tuple[WatchedChecks, timedelta]]) -> None:
        self.checks = tuple(checks)

    async def __call__(self, deps: Deps) -> None:
        if await keep_lease(deps):
            loop = asyncio.get_running_loop()
            for check, after in self.checks:
                if check.missed or check.runs == 0:
                    loop.call_later(after.total_seconds(), check.wake)
