"""A cluster's alert state as one JSON document, and back: what the store writes and reads.

Loading never lets a decoding error escape as anything but `DamagedState`: a document that is
not ours, or ours but damaged (`"failures": [3]`, a missing field, a bad time), is one error the
store can act on. Notice threads (evictions told), when the budget was last said, what the checks
saw move (`seen`), an incident's history and the PagerDuty events it owes are optional parts any
schema-4 document may hold, so they needed no schema bump (a release before them reads the rest).
Documents of schema 1 (before the outbox) and 2 (before diagnoses and escalations) load too: a
schema-1 root that was
"posting" becomes a root owed with an attempt of unknown outcome, so it is looked for before it
is posted.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import asdict, replace
from datetime import datetime
from typing import Any

from bot.alerts.model import (
    AlertKey,
    AlertState,
    ClusterAlerts,
    EffectKind,
    Escalation,
    Note,
    NoteKind,
    Observation,
    Owed,
    PageAction,
    Severity,
)
from bot.alerts.notice_thread import NoticeThread
from bot.alerts.seen import Move, Seen
from bot.core.conditions import parse_timestamp

# 5: fleet incidents and their clusters; 4: anchors, command IDs, recently closed incidents;
# 3: diagnoses, escalation
SCHEMA = 5
READABLE_SCHEMAS = (1, 2, 3, 4, 5)
LEGACY_ATTEMPT = "legacy"  # a schema-1 root that was being posted: its outcome is unknown


class DamagedState(ValueError):
    """The text is not a readable alert state document."""


def dump_cluster(state: ClusterAlerts) -> str:
    """The state as a JSON document (stable key order, times in RFC 3339 UTC)."""
    body = {
        "schema": SCHEMA,
        "cluster": state.cluster,
        "failures": state.failures,
        "last_error": state.last_error,
        "alerts": [_dump_alert(a) for _, a in sorted(state.alerts.items())],
        "closing": [_dump_alert(a) for a in state.closing],
        "notices": [_dump_owed(o) for o in state.notices],
        "recent": [_dump_alert(a) for a in state.recent],
        "reminders": [_dump_alert(a) for _, a in sorted(state.reminders.items())],
    }
    if state.threads or state.forgotten is not None:
        body["threads"] = [_dump_thread(t) for t in state.threads]
        body["forgotten"] = _dump_value(state.forgotten)
    if state.budget_told is not None:
        body["budget_told"] = _dump_value(state.budget_told)
    if state.seen != Seen():
        body["seen"] = _dump_seen(state.seen)
    return json.dumps(body, sort_keys=True)


def _dump_seen(seen: Seen) -> dict[str, Any]:
    return {
        "values": dict(seen.values),
        "moves": [{k: _dump_value(v) for k, v in asdict(m).items()} for m in seen.moves],
        "since": {kind: _dump_value(at) for kind, at in seen.since.items()},
    }


def _load_seen(raw: Any) -> Seen:
    if raw is None:
        return Seen()
    if not isinstance(raw, dict):
        raise DamagedState(f"seen is not a mapping: {type(raw).__name__}")
    moves = tuple(_load_move(m) for m in _list(raw.get("moves")))
    since = raw.get("since") or {}
    values = {str(k): str(v) for k, v in (raw.get("values") or {}).items()}
    return Seen(values, moves, {str(kind): _required_time(since, kind) for kind in since})


def _load_move(raw: Mapping[str, Any]) -> Move:
    fields = (str(raw[name]) for name in ("kind", "name", "before", "after"))
    return Move(_required_time(raw, "at"), *fields)


def thread_bytes(thread: NoticeThread) -> int:
    """What `thread` adds to its document's JSON (with the separator before it)."""
    return len(json.dumps(_dump_thread(thread), sort_keys=True)) + len(", ")


def incident_bytes(alert: AlertState) -> int:
    """What `alert` adds to its document's JSON (with the separator before it)."""
    return len(json.dumps(_dump_alert(alert), sort_keys=True)) + len(", ")


def load_cluster(cluster: str, text: str) -> ClusterAlerts:
    """The state a `dump_cluster` document holds; an empty text is an empty state.

    Raises:
        DamagedState: the text is not such a document, or any part of it cannot be decoded.
    """
    if not text:
        return ClusterAlerts(cluster)
    try:
        return _load(cluster, text)
    except DamagedState:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError) as e:
        raise DamagedState(f"malformed alert state document: {type(e).__name__}: {e}") from e


def _load(cluster: str, text: str) -> ClusterAlerts:
    body = json.loads(text)
    if not isinstance(body, dict) or body.get("schema") not in READABLE_SCHEMAS:
        raise DamagedState(f"not an alert state document of schema {SCHEMA}")
    alerts = [_load_alert(raw) for raw in _list(body.get("alerts"))]
    failures = body.get("failures") or 0
    if not isinstance(failures, int) or isinstance(failures, bool) or failures < 0:
        raise DamagedState(f"failures is not a count: {failures!r}")
    return ClusterAlerts(
        cluster=cluster,
        alerts={a.key: a for a in alerts},
        failures=failures,
        last_error=str(body.get("last_error") or ""),
        closing=tuple(_load_alert(raw) for raw in _list(body.get("closing"))),
        notices=tuple(_load_owed(raw) for raw in _list(body.get("notices"))),
        recent=tuple(_load_alert(raw) for raw in _list(body.get("recent"))),
        threads=tuple(_load_thread(raw) for raw in _list(body.get("threads"))),
        forgotten=parse_timestamp(body.get("forgotten")),
        reminders={a.key: a for a in map(_load_alert, _list(body.get("reminders")))},
        budget_told=parse_timestamp(body.get("budget_told")),
        seen=_load_seen(body.get("seen")),
    )


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise DamagedState(f"expected a list, found {type(value).__name__}")
    return value


# Kept only when set: a document without them reads as before, and costs no byte more.
_OPTIONAL = ("members", "labels", "silence_id")


def _dump_alert(alert: AlertState) -> dict[str, Any]:
    skip = ("observation", "outbox", "delivered", "history")
    raw = {
        k: _dump_value(v)
        for k, v in asdict(alert).items()
        if k not in skip and (v or k not in _OPTIONAL)
    }
    seen = asdict(alert.observation)
    seen["key"] = asdict(alert.observation.key)
    raw["observation"] = {k: _dump_value(v) for k, v in seen.items()}
    raw["outbox"] = [_dump_owed(o) for o in alert.outbox]
    raw["delivered"] = dict(alert.delivered)
    raw["pages"] = [p.value for p in alert.pages]
    if alert.history:
        raw["history"] = [_dump_note(n) for n in alert.history]
    return raw


def _dump_note(note: Note) -> dict[str, Any]:
    return {k: _dump_value(v) for k, v in asdict(note).items()}


def _dump_thread(thread: NoticeThread) -> dict[str, Any]:
    raw = {k: _dump_value(v) for k, v in asdict(thread).items() if k != "outbox"}
    raw["outbox"] = [_dump_owed(o) for o in thread.outbox]
    raw["delivered"] = dict(thread.delivered)
    return raw


def _load_thread(raw: Mapping[str, Any]) -> NoticeThread:
    count = raw.get("count")
    if not isinstance(count, int) or isinstance(count, bool):
        raise DamagedState(f"a notice thread's count is not a count: {count!r}")
    return NoticeThread(
        key=str(raw["key"]),
        channel=str(raw["channel"]),
        count=count,
        last=_required_time(raw, "last"),
        outbox=tuple(_load_owed(o) for o in _list(raw.get("outbox"))),
        owed_count=int(raw.get("owed_count") or 0),
        root_ts=str(raw.get("root_ts") or ""),
        root_anchor=str(raw.get("root_anchor") or ""),
        delivered={str(k): str(v) for k, v in (raw.get("delivered") or {}).items()},
    )


def _dump_owed(owed: Owed) -> dict[str, Any]:
    raw = {k: _dump_value(v) for k, v in asdict(owed).items() if k not in ("note", "blocks")}
    if owed.owed_at is None:
        del raw["owed_at"]
    if owed.blocks:
        raw["blocks"] = [dict(b) for b in owed.blocks]
    if owed.note is not None:
        raw["note"] = _dump_note(owed.note)
    return raw


def _dump_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    return value


def _load_alert(raw: Mapping[str, Any]) -> AlertState:
    seen = raw["observation"]
    observation = Observation(
        key=AlertKey(**{k: str(v) for k, v in seen["key"].items()}),
        severity=Severity(seen["severity"]),
        title=str(seen.get("title") or ""),
        reason=str(seen.get("reason") or ""),
        message=str(seen.get("message") or ""),
        check_first=str(seen.get("check_first") or ""),
        since=parse_timestamp(seen.get("since")),
        immediate=bool(seen.get("immediate")),
        waited_out=bool(seen.get("waited_out")),
        by=str(seen.get("by") or ""),
    )
    alert = AlertState(
        observation=observation,
        first_seen=_required_time(raw, "first_seen"),
        firing_since=parse_timestamp(raw.get("firing_since")),
        clear_since=parse_timestamp(raw.get("clear_since")),
        root_channel=str(raw.get("root_channel") or ""),
        root_ts=str(raw.get("root_ts") or ""),
        acked_by=str(raw.get("acked_by") or ""),
        acked_at=parse_timestamp(raw.get("acked_at")),
        silenced_by=str(raw.get("silenced_by") or ""),
        silenced_until=parse_timestamp(raw.get("silenced_until")),
        silence_reason=str(raw.get("silence_reason") or ""),
        last_reminder=parse_timestamp(raw.get("last_reminder")),
        resolved_at=parse_timestamp(raw.get("resolved_at")),
        escalation=Escalation(raw.get("escalation") or Escalation.PENDING.value),
        outbox=tuple(_load_owed(o) for o in _list(raw.get("outbox"))),
        owed_count=int(raw.get("owed_count") or 0),
        delivered={str(k): str(v) for k, v in (raw.get("delivered") or {}).items()},
        root_anchor=str(raw.get("root_anchor") or ""),
        commands=tuple(str(c) for c in _list(raw.get("commands"))),
        settled=int(raw.get("settled") or 0),
        fleet=str(raw.get("fleet") or ""),
        clusters=_names(raw.get("clusters")),
        recovered=_names(raw.get("recovered")),
        paged=_names(raw.get("paged")),
        unwatched=_names(raw.get("unwatched")),
        untold=_names(raw.get("untold")),
        joins_told=parse_timestamp(raw.get("joins_told")),
        leaves_told=parse_timestamp(raw.get("leaves_told")),
        history=tuple(_load_note(n) for n in _list(raw.get("history"))),
        members=_names(raw.get("members")),
        labels=_names(raw.get("labels")),
        silence_id=str(raw.get("silence_id") or ""),
        pages=tuple(PageAction(p) for p in _list(raw.get("pages"))),
        paged_to=PageAction(raw["paged_to"]) if raw.get("paged_to") else None,
    )
    return _migrated(alert, raw)


def _migrated(alert: AlertState, raw: Mapping[str, Any]) -> AlertState:
    """A schema-1 alert: a root "posting" or "none" after firing is owed again (looked for first
    when it was being posted)."""
    status = raw.get("root_status")
    if status is None or alert.root_ts or alert.firing_since is None or alert.outbox:
        return alert
    attempt = LEGACY_ATTEMPT if status == "posting" else ""
    root = Owed(f"{alert.incident}:0", EffectKind.ROOT, attempt=attempt)
    return replace(alert, outbox=(root,), owed_count=1)


def _names(value: Any) -> tuple[str, ...]:
    return tuple(str(name) for name in _list(value))


def _load_owed(raw: Mapping[str, Any]) -> Owed:
    kind = EffectKind(raw["kind"])
    note = raw.get("note")
    if kind is EffectKind.REPLY and not note:
        raise DamagedState(f"reply {raw.get('effect_id')!r} without its note")
    return Owed(
        effect_id=str(raw["effect_id"]),
        kind=kind,
        note=_load_note(note) if note else None,
        text=str(raw.get("text") or ""),
        blocks=tuple(_block(b) for b in _list(raw.get("blocks"))),
        attempt=str(raw.get("attempt") or ""),
        attempted_by=str(raw.get("attempted_by") or ""),
        attempted_at=parse_timestamp(raw.get("attempted_at")),
        anchor=str(raw.get("anchor") or ""),
        owed_at=parse_timestamp(raw.get("owed_at")),
    )


def _block(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise DamagedState(f"a stored block is not a mapping: {type(raw).__name__}")
    return raw


def _load_note(raw: Mapping[str, Any]) -> Note:
    return Note(
        kind=NoteKind(raw["kind"]),
        at=_required_time(raw, "at"),
        user=str(raw.get("user") or ""),
        reason=str(raw.get("reason") or ""),
        until=parse_timestamp(raw.get("until")),
        still_bad=bool(raw.get("still_bad", True)),
        unwatched=bool(raw.get("unwatched")),
    )


def _required_time(raw: Mapping[str, Any], name: str) -> datetime:
    value = parse_timestamp(raw.get(name))
    if value is None:
        raise DamagedState(f"{name} is not a time: {raw.get(name)!r}")
    return value
