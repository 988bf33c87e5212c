"""The scheduler stall alert (docs/design.md §2 "Scheduler stall"): a critical alert per shard
whose scheduler reports Ready but has stopped scheduling (KAI #1536: a scheduler getting
401 Unauthorized stayed Running and Ready while nothing was scheduled).

It fires when the shard's leader Lease has not been renewed for `alerts.stall_after`, or when
PodGroups of the shard wait and the scheduler has touched none of them (no scheduling
condition written, no Event counted up) for that long, while its pods report Ready (a scheduler
with no Ready pod is the Deployment's own alert). Its title names the Lease holder and how long
ago it renewed, its message the Lease, its last renewal, the pods and the groups; the
diagnosis in the thread repeats those lines. Pure: what each scheduler shows is
`bot.alerts.stall_signs`'; the wait is the alert's hold (`waited_out`), as for starvation.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.alerts.model import AlertKey, Observation, Severity
from bot.alerts.render import format_time
from bot.alerts.stall_signs import ShardScheduler
from bot.core.durations import format_duration
from bot.rules import kai

KIND = "Deployment"  # the shard's scheduler Deployment: its diagnosis is that Deployment's
CONDITION = "Stalled"
LEASE = "LeaseNotRenewed"
UNTOUCHED = "PodGroupsUntouched"
# The scheduler's Lease lasts 15 s (cmd/scheduler/app/server.go `leaseDuration`, the same at
# v0.12.0): a renewal younger than that is no sign of anything, so `stall_after` is at least it.
LEASE_DURATION = timedelta(seconds=15)
# client-go lets a repeated Event about one object through once per 5 minutes after a burst of
# 25 (k8s.io/client-go tools/record/events_cache.go `defaultSpamQPS` 1/300), and KAI rewrites a
# scheduling condition only when it changes: a healthy scheduler's one pending group can look
# untouched for 5 minutes, so the groups count as silent only after a minute more than that.
GROUPS_QUIET = timedelta(minutes=6)
_CHECK_FIRST = (
    "A Ready scheduler that stops renewing its Lease, or touching its pending PodGroups, has "
    "stopped scheduling: new pods of shard {shard} stay Pending. Look in its log for `401 "
    "Unauthorized` (KAI #1536: kai-config deleted and recreated replaced its ServiceAccount, "
    "and a scheduler before v0.17 keeps the old token for about 48 minutes): `kubectl -n {ns} "
    "rollout restart deployment {name}` gives it a new one. The thread's diagnosis shows its "
    "pods, events and log; `{command} pending` the groups that wait."
)


def stall_alerts(
    cluster: str, shards: Sequence[ShardScheduler], now: datetime, *, after: timedelta, command: str
) -> list[Observation]:
    """One critical alert per stalled shard scheduler of `cluster`; none when the rule is off."""
    if after <= timedelta(0):
        return []
    found = []
    for shard in shards:
        stall = find_stall(shard, now, after)
        if stall is not None:
            found.append(_observation(cluster, shard, stall, command))
    return found


def find_stall(shard: ShardScheduler, now: datetime, after: timedelta) -> kai.Stall | None:
    """Its Lease not renewed for `after`, or its pending groups untouched for `after` (at least
    GROUPS_QUIET); nothing while it has no Ready pod."""
    if shard.ready < 1:
        return None
    for shown_by, since, window in _clocks(shard, after):
        if kai.overdue([(shown_by, since)], now, window) is not None:
            return kai.Stall(shown_by, since, _headline(shard, shown_by, now - since))
    return None


def next_look(shards: Sequence[ShardScheduler], now: datetime, after: timedelta) -> datetime | None:
    """The soonest moment a scheduler not stalled yet would be, if nothing changes: the check
    looks again then (the Leases and Events it reads wake no check, `bot.kube.informer.QUIET`)."""
    if after <= timedelta(0):
        return None
    moments = [
        since + window
        for shard in shards
        if shard.ready >= 1
        for _, since, window in _clocks(shard, after)
        if since + window > now
    ]
    return min(moments, default=None)


def is_stall(key: AlertKey) -> bool:
    return key.kind == KIND and key.condition == CONDITION


def _clocks(shard: ShardScheduler, after: timedelta) -> list[tuple[str, datetime, timedelta]]:
    """Each sign of a stop (what shows it, since when, for how long it may last): the Lease's
    last renewal while the scheduler elects a leader; the last touch of its pending groups."""
    clocks = []
    lease = shard.lease
    if shard.elects and lease is not None and lease.renewed is not None:
        clocks.append((LEASE, lease.renewed, max(after, LEASE_DURATION)))
    if shard.waiting and shard.touched is not None:
        clocks.append((UNTOUCHED, shard.touched, max(after, GROUPS_QUIET)))
    return clocks


def _headline(shard: ShardScheduler, shown_by: str, age: timedelta) -> str:
    waited = format_duration(age, "coarse")
    if shown_by == LEASE and shard.lease is not None:
        holder = _pod_of(shard.lease.holder) or "nobody"
        return (
            f"KAI scheduler {shard.deployment} stalled: {holder} has not renewed its Lease "
            f"for {waited}"
        )
    count = len(shard.waiting)
    groups = f"{count} pending PodGroup{'s' if count != 1 else ''}"
    return f"KAI scheduler {shard.deployment} stalled: {groups} untouched for {waited}"


def _observation(
    cluster: str, shard: ShardScheduler, stall: kai.Stall, command: str
) -> Observation:
    where = f"{shard.namespace}/{shard.deployment}"
    return Observation(
        key=AlertKey(cluster, KIND, where, CONDITION),
        severity=Severity.CRITICAL,
        title=stall.headline,
        reason=stall.shown_by,
        message="\n".join([_lease_line(shard), _pods_line(shard), _groups_line(shard)]),
        check_first=_CHECK_FIRST.format(
            shard=shard.shard, ns=shard.namespace, name=shard.deployment, command=command
        ),
        since=stall.since,
        waited_out=True,
    )


def _lease_line(shard: ShardScheduler) -> str:
    """Who holds the Lease and when it last renewed it, or why there is none to read."""
    where = f"{shard.namespace}/{shard.lease_name}"
    lease = shard.lease
    if not shard.elects:
        return (
            f"No Lease to read: with {shard.replicas} replica the scheduler runs no leader "
            "election (the operator turns it on for more than one)."
        )
    if lease is None:
        return f"Lease {where} does not exist: no replica of {shard.replicas} leads."
    holder = lease.holder or "nobody"
    renewed = format_time(lease.renewed) if lease.renewed else "never"
    return f"Lease {where} held by {holder}, last renewed {renewed}."


def _pods_line(shard: ShardScheduler) -> str:
    return (
        f"{shard.ready} of {shard.replicas} pod(s) of Deployment {shard.namespace}/"
        f"{shard.deployment} report Ready."
    )


def _groups_line(shard: ShardScheduler) -> str:
    if not shard.waiting:
        return f"No PodGroup of shard {shard.shard} is pending."
    count, (namespace, name) = len(shard.waiting), shard.waiting[0]
    since = f" since {format_time(shard.touched)}" if shard.touched else ""
    return (
        f"{count} PodGroup(s) of shard {shard.shard} pending ({namespace}/{name} among them), "
        f"none touched by the scheduler (a scheduling condition, an Event){since}."
    )


def _pod_of(holder: str) -> str:
    """The pod in a holder identity `<hostname>_<uuid>` (a pod's hostname is its name)."""
    return holder.rpartition("_")[0] or holder
