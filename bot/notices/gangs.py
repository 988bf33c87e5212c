"""Whether a stale-gang Evict Event evicted a gang that had in fact completed. Pure.

KAI never calls a gang with a Succeeded pod stale: `PodGroupInfo.IsStale` returns false first
thing when one of its pods Succeeded (KAI-Scheduler pkg/scheduler/api/podgroup_info/job_info.go,
v0.12.0 to v0.17.0). From v0.16.2 (#1778, v0.17.0: #1647) the scheduler's pod informer leaves
Succeeded pods out (pkg/scheduler/cache/cache.go `filterTerminalPods`), so that guard never
fires: a gang whose pods finish one by one drops below its minimum, and `stalegangeviction`
evicts the rest of it while it completes (KAI issue #1968; fixed by #2012, backported as #2022,
in no release yet). Such an eviction tells its owners nothing they need: when every pod of the
gang that is not being deleted (the eviction's own) has Succeeded, no notice is posted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.core import conditions
from bot.core.models import RawObject
from bot.workloads.why import POD_GROUP_ANNOTATION

STALE_GANG = "stalegangeviction"


def pods_of(group: str, pods: Iterable[RawObject]) -> list[RawObject]:
    """The pods of PodGroup `group` among `pods` of its namespace (their `pod-group-name`)."""
    return [
        p
        for p in pods
        if conditions.as_text(conditions.annotations_of(p).get(POD_GROUP_ANNOTATION)) == group
    ]


def has_completed(pods: Sequence[RawObject]) -> bool:
    """Every pod of the gang still standing has Succeeded, and there is one: the gang
    completed, whatever KAI evicted on the way (pods being deleted are left out: they are what
    the eviction removes)."""
    standing = [p for p in pods if not conditions.metadata(p).get("deletionTimestamp")]
    phases = {conditions.as_text(conditions.status(p).get("phase")) for p in standing}
    return phases == {"Succeeded"}
