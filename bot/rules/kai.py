"""Health of KAI `Config` and `SchedulingShard` objects (`kai.scheduler/v1`) from their conditions.

docs/design.md §2, the same logic as KAI's own Argo CD Lua check (PR #1875): keys on condition
`status` and `observedGeneration`, never on `reason`. `Ready` and `Reconciling` leave the verdict
alone: KAI v0.12.0 writes no `Ready` and leaves `Reconciling` True for good; v0.13.0 (#1060)
adds `Ready` (a copy of `Available`) and sets `Reconciling` True only while a pass runs
(KAI-Scheduler pkg/operator/controller/status_reconciler/status_reconciler.go at each tag). What
they do tell, with a clock, is a stuck operator (`find_stall`). Pure: no I/O, `now` passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.core import conditions as c
from bot.core.durations import format_duration
from bot.core.models import Health, RawObject, Verdict

GROUP = "kai.scheduler"
KINDS = ("Config", "SchedulingShard")
REQUIRED_CONDITIONS = ("Deployed", "Available", "DependenciesFulfilled")


def evaluate_kai_object(obj: RawObject) -> Verdict:
    """The verdict for a KAI Config or SchedulingShard."""
    return c.make_verdict(obj, assess_kai_object(obj))


def assess_kai_object(obj: RawObject) -> c.Assessment:
    """Classifies a KAI Config or SchedulingShard by docs/design.md §2's rules, in their order."""
    conds = c.list_conditions(obj)
    generation = c.object_generation(obj)
    if not conds:
        return c.Assessment(
            Health.PROGRESSING,
            "no status.conditions yet: the KAI operator has not reconciled this object",
        )
    deps = c.find_condition(conds, "DependenciesFulfilled")
    if c.condition_status(deps) == "False" and _is_current(deps, generation):
        return c.Assessment(
            Health.DEGRADED,
            f"DependenciesFulfilled is False at generation {_gen(deps)}",
            c.condition_message(deps),
        )
    return _assess_freshness(conds, generation) or _assess_statuses(conds, generation)


def _assess_freshness(conds: Sequence[c.Condition], generation: int | None) -> c.Assessment | None:
    missing = [t for t in REQUIRED_CONDITIONS if c.find_condition(conds, t) is None]
    stale = [
        cond
        for t in REQUIRED_CONDITIONS
        if (cond := c.find_condition(conds, t)) is not None and not _is_current(cond, generation)
    ]
    problems = []
    if missing:
        plural = len(missing) > 1
        problems.append(
            f"no {_and(missing)} condition{'s' if plural else ''}: "
            f"the operator has not written {'them' if plural else 'it'} yet"
        )
    if stale:
        problems.append(_describe_stale(stale, generation))
    if not problems:
        return None
    return c.Assessment(Health.PROGRESSING, "; ".join(problems))


def _describe_stale(stale: Sequence[c.Condition], generation: int | None) -> str:
    olds = sorted({_gen(s) for s in stale})
    if len(stale) == len(REQUIRED_CONDITIONS):
        subject = "conditions are"
    else:
        subject = f"{_and([_type(s) for s in stale])} {'is' if len(stale) == 1 else 'are'}"
    return (
        f"{subject} from generation {'/'.join(olds)}, object is at generation {generation}: "
        "the operator has not reconciled the change yet"
    )


def _assess_statuses(conds: Sequence[c.Condition], generation: int | None) -> c.Assessment:
    not_true = [
        cond
        for t in REQUIRED_CONDITIONS
        if not c.is_condition_true(cond := c.find_condition(conds, t))
    ]
    at = f" at generation {generation}" if generation is not None else ""
    if not not_true:
        return c.Assessment(
            Health.HEALTHY, f"Deployed, Available and DependenciesFulfilled are True{at}"
        )
    states = (f"{_type(n)} is {c.condition_status(n) or 'unset'}" for n in not_true)
    headline = ", ".join(states) + at
    if len(not_true) == 1:
        return c.Assessment(Health.PROGRESSING, headline, c.condition_message(not_true[0]))
    detail = "\n".join(c.join_message(_type(n), c.condition_message(n)) for n in not_true)
    return c.Assessment(Health.PROGRESSING, headline, detail)


@dataclass(frozen=True)
class Stall:
    """An operator that stopped: what shows it (`Progressing` or `Reconciling`), since when."""

    shown_by: str
    since: datetime
    headline: str


def find_stall(
    obj: RawObject, reading: c.Assessment, now: datetime, timeout: timedelta
) -> Stall | None:
    """The operator not reconciling, on any KAI release: conditions Progressing for longer than
    `timeout` since their last write, or a pass reported running (`reconciling_since`) for
    longer than that; None while neither holds."""
    late = overdue(stall_clocks(obj, reading), now, timeout)
    if late is None:
        return None
    shown_by, since = late
    age = format_duration(now - since, "coarse")
    return Stall(shown_by, since, f"operator not reconciling: {_STALLED[shown_by]} {age}")


def overdue(
    clocks: Sequence[tuple[str, datetime]], now: datetime, timeout: timedelta
) -> tuple[str, datetime] | None:
    """The first clock (what shows a stall, since when) that has run longer than `timeout`:
    the operator's here, a shard scheduler's in `bot.alerts.stall`."""
    return next(((shown, since) for shown, since in clocks if now - since > timeout), None)


def scheduler_lease_name(scheduler: str, shard: RawObject) -> str:
    """The leader-election Lease of a shard's scheduler: `<schedulerName>`, or
    `<schedulerName>-<partitionLabelValue>` for a shard with a partition, in the operand
    namespace (KAI-Scheduler cmd/scheduler/app/server.go: the lock is `componentName`, from
    `--scheduler-name` and `--partition-label-value`, in `--namespace`, which
    pkg/operator/operands/scheduler/resources_for_shard.go `buildArgsList` sets from
    kai-config's `global.schedulerName`, the shard's `partitionLabelValue` and `spec.namespace`;
    the same at v0.12.0 and v0.20.1). The scheduler holds one only with leader election, which
    the operator turns on for `spec.scheduler.replicas` above one (`--leader-elect=true`)."""
    partition = partition_of(shard)
    return f"{scheduler}-{partition}" if partition else scheduler


def partition_of(shard: RawObject) -> str:
    """The shard's `spec.partitionLabelValue` ("" for the shard of unlabelled nodes)."""
    return c.as_text(c.spec(shard).get("partitionLabelValue"))


def stall_clocks(obj: RawObject, reading: c.Assessment) -> list[tuple[str, datetime]]:
    """Since when each sign of a stopped operator has held (`find_stall` turns one into a
    stall once `timeout` has passed): Progressing since the conditions' last write, a pass
    running since it began."""
    clocks = []
    written = c.last_write_time(obj)
    if reading.health is Health.PROGRESSING and written is not None:
        clocks.append(("Progressing", written))
    started = reconciling_since(obj)
    if started is not None:
        clocks.append(("Reconciling", started))
    return clocks


_STALLED = {
    "Progressing": "Progressing for",
    "Reconciling": "a pass it began never ended, Reconciling True for",
}


def reconciling_since(obj: RawObject) -> datetime | None:
    """When the pass the operator reports running began: `Reconciling` True, on a release that
    sets it True only while it reconciles. Those releases write `Ready` (KAI v0.13.0+, #1060;
    v0.12.16+, #1107), and end every pass with `Reconciling` False, error or not (the deferred
    `ReconcileStatus`); v0.12.0-v0.12.15 write no `Ready` and leave `Reconciling` True for good,
    so there it tells nothing (None)."""
    conds = c.list_conditions(obj)
    reconciling = c.find_condition(conds, "Reconciling")
    if c.find_condition(conds, "Ready") is None or not c.is_condition_true(reconciling):
        return None
    return c.last_transition(reconciling)


def _is_current(cond: c.Condition | None, generation: int | None) -> bool:
    """True when the condition was written for the object's current generation.

    An object without `metadata.generation` (a trimmed dump) gives nothing to compare against,
    so its conditions are taken as current.
    """
    return generation is None or c.observed_generation(cond) == generation


def _gen(cond: c.Condition | None) -> str:
    value = c.observed_generation(cond)
    return str(value) if value is not None else "?"


def _type(cond: c.Condition | None) -> str:
    return c.as_text(cond.get("type")) if cond is not None else "?"


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
