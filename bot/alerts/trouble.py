"""When to say that something keeps failing, and when to say that it works again. Pure.

For faults outside any alert's state ("cannot keep the alert state", "cannot use the Lease"):
a warning after `failures` failures in a row (a hold), again every `every` while it lasts, and
once it was said, a recovery note after things worked for `cool_down` without a failure, so an
intermittent fault is one warning and one all-clear. A warning or note counts as said only once
Slack confirmed it (`said`); until then it is due again at the next failure or success.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta


@dataclass(frozen=True)
class TroublePolicy:
    failures: int
    cool_down: timedelta
    every: timedelta = timedelta(hours=1)


@dataclass(frozen=True)
class Trouble:
    """One kind of fault as this replica saw it."""

    failures: int = 0  # in a row
    warned_at: datetime | None = None  # the last warning Slack confirmed; None: nothing said
    ok_since: datetime | None = None  # working since, after a warning


def failed(trouble: Trouble, now: datetime, policy: TroublePolicy) -> tuple[Trouble, bool]:
    """One more failure; whether a warning is due now."""
    trouble = replace(trouble, failures=trouble.failures + 1, ok_since=None)
    if trouble.failures < policy.failures:
        return trouble, False
    last = trouble.warned_at
    return trouble, last is None or now - last >= policy.every


def succeeded(trouble: Trouble, now: datetime, policy: TroublePolicy) -> tuple[Trouble, bool]:
    """A success; whether the recovery note is due now."""
    if trouble.warned_at is None:
        return Trouble(), False
    ok_since = trouble.ok_since or now
    trouble = replace(trouble, failures=0, ok_since=ok_since)
    return trouble, now - ok_since >= policy.cool_down


def said(trouble: Trouble, now: datetime, *, warning: bool) -> Trouble:
    """Slack confirmed the warning (or, `warning=False`, the recovery note)."""
    return replace(trouble, warned_at=now) if warning else Trouble()
