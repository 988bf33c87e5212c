"""Who suspended a Flux object through kai-chatops, why, and until when: our `kai-chatops/` record.

Pure: reads `spec.suspend` (what Flux honours) and the record annotations a `/kai suspend` writes
beside it (docs/design.md §2 "Safety": who, why, when on the object, RFC 3339 UTC). The record is
ours;
`spec.suspend` alone decides whether Flux reconciles. No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core import conditions as c
from bot.core.models import RawObject

SUSPENDED_BY = "kai-chatops/suspended-by"
SUSPENDED_AT = "kai-chatops/suspended-at"
SUSPEND_REASON = "kai-chatops/suspend-reason"
SUSPEND_UNTIL = "kai-chatops/suspend-until"
RECORD_KEYS = (SUSPENDED_BY, SUSPENDED_AT, SUSPEND_REASON, SUSPEND_UNTIL)


@dataclass(frozen=True)
class SuspendRecord:
    """`spec.suspend` and our record of it ("" where a key is absent)."""

    suspended: bool
    by: str = ""
    at: str = ""
    reason: str = ""
    until: str = ""

    @property
    def is_ours(self) -> bool:
        """Suspended through kai-chatops (a suspend by hand or in Git has no `suspended-by`)."""
        return self.suspended and bool(self.by)


def read_suspend_record(obj: RawObject) -> SuspendRecord:
    """`spec.suspend` (only the boolean true suspends, as Flux's Go type reads it) and our keys."""
    notes = c.annotations_of(obj)
    return SuspendRecord(
        suspended=c.spec(obj).get("suspend") is True,
        by=c.as_text(notes.get(SUSPENDED_BY)),
        at=c.as_text(notes.get(SUSPENDED_AT)),
        reason=c.as_text(notes.get(SUSPEND_REASON)),
        until=c.as_text(notes.get(SUSPEND_UNTIL)),
    )
