"""How much the memory of approvals keeps (`bot.access.approval_store`): pure.

Records are kept by key (`approval-<ID>` in a ConfigMap, a row per ID in SQLite) within
`MAX_BYTES`, measured as the ConfigMap's data is (compact JSON). Before any record is written,
the stale go: unreadable, or expired more than `KEPT` ago. A new request then takes room from
records that no longer run (ended, or past their 15 minutes), oldest first; when the requests
still running fill the memory, the new one is refused, said in words. A record already kept is
always written (its end grows it by a few hundred bytes: the headroom under a ConfigMap's 1 MiB
holds every running record's end). So nothing but running requests can fill it, and they all
end within 15 minutes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timedelta

from bot.access import approvals
from bot.access.approvals import Approval
from bot.core import errors

MAX_BYTES = 900_000  # as the replay memory's: a ConfigMap holds 1 MiB with its metadata
KEPT = timedelta(days=1)  # after its expiry, how long a record stays (to say how it ended)


def stale(data: Mapping[str, str], now: datetime) -> list[str]:
    """The keys of records that expired more than `KEPT` ago, or cannot be read."""
    return [key for key, body in data.items() if _is_stale(decoded(body), now)]


def room_for(data: Mapping[str, str], key: str, body: str, now: datetime) -> list[str]:
    """The keys to drop so that `data` with `key: body` stays within `MAX_BYTES`: the stale,
    then (for a new key) records that no longer run, oldest first.

    Raises:
        UserError: `key` is new and the records still running leave no room for it.
    """
    dropped = [k for k in stale(data, now) if k != key]
    if key in data:
        return dropped  # a record kept is always written: the headroom holds its end
    kept = {k: v for k, v in data.items() if k not in dropped}
    size = _bytes(kept) + _entry_bytes(key, body)
    done = _done_oldest_first(kept, now)
    while size > MAX_BYTES and done:
        old = done.pop(0)
        size -= _entry_bytes(old, kept.pop(old))
        dropped.append(old)
    if size > MAX_BYTES:
        raise _full(len(kept))  # only running records are left
    return dropped


def _done_oldest_first(data: Mapping[str, str], now: datetime) -> list[str]:
    """The keys of records that no longer run, the longest ago asked first."""
    done = {}
    for key, body in data.items():
        record = decoded(body)
        if record is not None and not is_running(record, now):
            done[key] = record.requested_at
    return sorted(done, key=lambda k: (done[k], k))


def is_running(record: Approval, now: datetime) -> bool:
    """Waiting for an approver, or approved with its change under way, within its 15 minutes."""
    return record.state in ("waiting", "approved") and now < record.expires_at


def _is_stale(record: Approval | None, now: datetime) -> bool:
    return record is None or record.expires_at + KEPT <= now


def _bytes(data: Mapping[str, str]) -> int:
    """As `len(json.dumps(data, separators=(",", ":")))`, summed entry by entry."""
    return 1 + sum(_entry_bytes(key, value) for key, value in data.items())


def _entry_bytes(key: str, value: str) -> int:
    """One entry's share of the compact JSON: `"key":"value",` with its comma."""
    return len(json.dumps(key)) + len(json.dumps(value)) + 2


def _full(running: int) -> errors.UserError:
    return errors.UserError(
        f"{running} changes are waiting for approval, as many as the memory of approvals "
        "keeps; this one was not kept and nothing was changed. Approve or cancel one of them, "
        "or run the command again once one has ended (each ends within 15 minutes)."
    )


def decoded(text: str) -> Approval | None:
    """A stored record; one we cannot read counts as absent (it can approve nothing)."""
    try:
        return approvals.from_json(text)
    except (ValueError, KeyError, TypeError, AttributeError):  # not a record of ours
        return None
