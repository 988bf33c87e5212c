"""How much the memory of approvals keeps (issue 36, finding 1): the stale always go, a new
request takes room only from records that no longer run, oldest first, and a record already
kept is always written."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.access import approval_room, approvals
from bot.access.approval_room import KEPT, MAX_BYTES
from bot.access.approvals import Approval
from bot.access.confirmations import new_pending
from bot.core import errors

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
LIFETIME = approvals.LIFETIME


def record(change_id: str, at: datetime = T0, reason: str = "", **changed: object) -> Approval:
    pending = new_pending("pause", {"reason": reason}, user_id="UASK", channel_id="C1", now=at)
    made = approvals.new_approval(
        pending, channel_id="C1", what="pause X", lines=(), now=at, change_id=change_id
    )
    return replace(made, **changed)  # type: ignore[arg-type]


def kept(*records: Approval) -> dict[str, str]:
    return {f"approval-{r.id}": approvals.to_json(r) for r in records}


def entry(key: str, body: str) -> int:
    """What one more key costs a non-empty ConfigMap's data: `,"key":"body"`."""
    return len(json.dumps(key)) + len(json.dumps(body)) + 2


def padded_to(data: dict[str, str], room: int, at: datetime = T0) -> dict[str, str]:
    """`data` and one running record more, its reason sized so `room` bytes are left."""
    base = kept(record("PADPADPA", at))
    size = len(json.dumps({**data, **base}, separators=(",", ":")))
    pad = record("PADPADPA", at, reason="r" * (MAX_BYTES - room - size))
    full = {**data, **kept(pad)}
    assert MAX_BYTES - len(json.dumps(full, separators=(",", ":"))) == room
    return full


def test_records_a_day_past_their_expiry_or_unreadable_are_stale() -> None:
    old = record("OLDOLDOL", T0)
    day = T0 + LIFETIME + KEPT
    data = {**kept(old, record("NEWNEWNE", day)), "approval-BROKEN": "{not json"}

    assert approval_room.stale(data, day - timedelta(seconds=1)) == ["approval-BROKEN"]
    assert approval_room.stale(data, day) == ["approval-OLDOLDOL", "approval-BROKEN"]


def test_a_new_record_with_room_drops_only_the_stale() -> None:
    day = T0 + LIFETIME + KEPT
    data = kept(record("OLDOLDOL", T0), record("ENDEDEND", day, state="cancelled"))
    new = record("NEWNEWNE", day)

    dropped = approval_room.room_for(data, "approval-NEWNEWNE", approvals.to_json(new), day)

    assert dropped == ["approval-OLDOLDOL"]


@pytest.mark.parametrize(
    ("room", "fits"), [(0, False), (1, True)], ids=["one-byte-short", "exactly-enough"]
)
def test_a_new_record_fits_up_to_max_bytes_exactly(room: int, fits: bool) -> None:
    new = approvals.to_json(record("NEWNEWNE"))
    data = padded_to(kept(record("AAAAAAAA")), entry("approval-NEWNEWNE", new) - 1 + room)

    if fits:
        assert approval_room.room_for(data, "approval-NEWNEWNE", new, T0) == []
        assert len(json.dumps({**data, "approval-NEWNEWNE": new}, separators=(",", ":"))) == (
            MAX_BYTES
        )
    else:
        with pytest.raises(errors.UserError, match=r"^2 changes are waiting for approval"):
            approval_room.room_for(data, "approval-NEWNEWNE", new, T0)


def test_a_new_record_takes_room_from_records_that_no_longer_run_oldest_first() -> None:
    now = T0 + timedelta(minutes=10)
    ended = [
        record("CANCELED", T0 + timedelta(minutes=3), state="cancelled"),
        record("DONEDONE", T0 + timedelta(minutes=1), state="done"),
        record("EXPIREDD", T0 + timedelta(minutes=2), state="expired"),
        record("PASTTIME", now - LIFETIME),  # still "waiting", but its 15 minutes are over
        record("APPROVLD", now - LIFETIME, state="approved"),
    ]
    running = [record("WAITING1", now), record("APPROVED", now, state="approved")]
    new = approvals.to_json(record("NEWNEWNE", now))
    first_two = sum(entry(k, v) for k, v in kept(ended[4], ended[3]).items())
    data = padded_to(kept(*ended, *running), entry("approval-NEWNEWNE", new) - first_two - 1, now)

    dropped = approval_room.room_for(data, "approval-NEWNEWNE", new, now)

    # Asked at minute -5 (twice: by ID), then 1 and 2; the third frees enough.
    assert dropped == ["approval-APPROVLD", "approval-PASTTIME", "approval-DONEDONE"]


def test_running_records_are_never_dropped_for_a_new_one() -> None:
    now = T0 + timedelta(minutes=14, seconds=59)
    data = padded_to(kept(record("WAITING1", T0), record("APPROVED", T0, state="approved")), 0)
    new = approvals.to_json(record("NEWNEWNE", now))

    with pytest.raises(errors.UserError) as refused:
        approval_room.room_for(data, "approval-NEWNEWNE", new, now)

    assert str(refused.value) == (
        "3 changes are waiting for approval, as many as the memory of approvals keeps; this "
        "one was not kept and nothing was changed. Approve or cancel one of them, or run the "
        "command again once one has ended (each ends within 15 minutes)."
    )


def test_a_record_already_kept_is_written_even_past_max_bytes_dropping_only_the_stale() -> None:
    day = T0 + LIFETIME + KEPT
    waiting = record("WAITING1", day)
    data = padded_to({**kept(waiting), **kept(record("OLDOLDOL", T0))}, 0, day)
    approved = approvals.approve(waiting, "WAITING1", "UAPP", day)

    dropped = approval_room.room_for(data, "approval-WAITING1", approvals.to_json(approved), day)

    assert dropped == ["approval-OLDOLDOL"]


def test_a_record_being_rewritten_is_never_dropped_as_stale() -> None:
    day = T0 + LIFETIME + KEPT
    data = kept(record("OLDOLDOL", T0))

    assert approval_room.room_for(data, "approval-OLDOLDOL", data["approval-OLDOLDOL"], day) == []


@pytest.mark.parametrize(
    ("state", "at", "running"),
    [
        ("waiting", T0 + LIFETIME - timedelta(microseconds=1), True),
        ("waiting", T0 + LIFETIME, False),
        ("approved", T0 + LIFETIME - timedelta(microseconds=1), True),
        ("approved", T0 + LIFETIME, False),
        ("cancelled", T0, False),
        ("done", T0, False),
        ("expired", T0, False),
    ],
    ids=["waiting", "waiting-past", "approved", "approved-past", "cancelled", "done", "expired"],
)
def test_a_record_runs_while_waiting_or_approved_within_its_15_minutes(
    state: str, at: datetime, running: bool
) -> None:
    assert approval_room.is_running(record("AAAAAAAA", state=state), at) is running


def test_an_unreadable_record_reads_as_none() -> None:
    assert approval_room.decoded('{"id": "X"}') is None
    assert approval_room.decoded("[]") is None
    assert approval_room.decoded("not json") is None
    assert approval_room.decoded(approvals.to_json(record("AAAAAAAA"))) == record("AAAAAAAA")


def test_a_new_record_that_fits_exactly_drops_nothing_that_no_longer_runs() -> None:
    now = T0 + timedelta(minutes=10)
    new = approvals.to_json(record("NEWNEWNE", now))
    ended = record("ENDEDEND", T0, state="cancelled")
    data = padded_to(kept(ended), entry("approval-NEWNEWNE", new), now)

    assert approval_room.room_for(data, "approval-NEWNEWNE", new, now) == []
