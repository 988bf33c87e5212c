"""The alert outbox: what each incident owes Slack, and recording what Slack confirmed. Pure.

The state machine owes effects (`owe`); the drain (`bot.alerts.drain`) sends the head of each
outbox and records the result here, as steps over the stored state, so every record is a
compare-and-set against the store's version. An attempt is fenced by its ID: recording a
message is only accepted from the attempt the entry names (`confirmed`); a poster whose attempt
was replaced learns whether its copy is the one kept. A resolved incident leaves the state when
its outbox is empty. No clock, no I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from bot.alerts.model import (
    AlertState,
    ClusterAlerts,
    EffectKind,
    Note,
    NoteKind,
    Owed,
)
from bot.alerts.notice_thread import NoticeThread

NOTICES = ""  # the `where` of the cluster's own notices, outside any incident
DELIVERED_KEPT = 50  # reply ts remembered per incident, for fencing late posters
RECENT_KEPT = 10  # closed incidents remembered, for late answers and a new holder's look
THREAD_LIVELY = timedelta(hours=1)  # a thread this recent is converged after a takeover
Place = AlertState | NoticeThread  # what owes messages with a root: an incident or a thread
SETTLE_PASSES = 2  # sweeps in a row (in separate drains) that must see the channel agree
HISTORY_KEPT = 10  # notes remembered per incident for its postmortem draft (the newest)
HISTORY_REASON = 80  # characters of a note's reason (a silence's, a fleet's clusters) kept there


class Confirmation(enum.Enum):
    """What a poster learns when it records a message Slack confirmed."""

    RECORDED = "recorded"  # its copy is the one the state keeps
    SUPERSEDED = "superseded"  # another copy is kept: delete this one
    CONTESTED = "contested"  # another attempt is under way: whoever finishes it sweeps


def owe(alert: AlertState, kind: EffectKind, note: Note | None = None) -> AlertState:
    """`alert` owing one more effect. An edit shows the state at sending time, so a new edit
    replaces any edit still owed."""
    if kind in (EffectKind.EDIT, EffectKind.SWEEP):
        kept = tuple(o for o in alert.outbox if o.kind is not kind)
        return replace(alert, outbox=(*kept, Owed(f"{alert.incident}:{kind.value}", kind)))
    number = 0 if kind is EffectKind.ROOT else max(alert.owed_count, 1)
    owed = Owed(f"{alert.incident}:{number}", kind, note)
    history = alert.history
    if note is not None and note.kind is not NoteKind.REMINDER:  # "still firing" tells nothing new
        told = replace(note, reason=note.reason[:HISTORY_REASON])
        history = (*history, told)[-HISTORY_KEPT:]
    return replace(alert, outbox=(*alert.outbox, owed), owed_count=number + 1, history=history)


def owe_notice(state: ClusterAlerts, notice_id: str, text: str) -> ClusterAlerts:
    """The cluster owes a message in the alert channel (once per `notice_id`)."""
    if any(o.effect_id == notice_id for o in state.notices):
        return state
    return replace(state, notices=(*state.notices, Owed(notice_id, EffectKind.NOTICE, text=text)))


def open_thread(
    state: ClusterAlerts,
    thread: NoticeThread,
    text: str,
    blocks: Sequence[Mapping[str, Any]] = (),
) -> ClusterAlerts:
    """The cluster owes `thread`'s first notice (rendered), unless that key is already told."""
    if find_thread(state, thread.key) is not None:
        return state
    root = Owed(f"{thread.key}:0", EffectKind.ROOT, text=text, blocks=tuple(blocks))
    opened = replace(thread, outbox=(root,), owed_count=1)
    return replace(state, threads=(*state.threads, opened))


def reply_in_thread(
    state: ClusterAlerts,
    key: str,
    count: int,
    at: datetime,
    text: str,
    blocks: Sequence[Mapping[str, Any]] = (),
) -> ClusterAlerts:
    """The thread `key` owes a reply telling occurrences up to `count` (once: a count already
    told owes nothing)."""
    thread = find_thread(state, key)
    if thread is None or count <= thread.count:
        return state
    number = max(thread.owed_count, 1)
    owed = Owed(f"{key}:{number}", EffectKind.NOTICE, text=text, blocks=tuple(blocks))
    told = replace(
        thread,
        count=count,
        last=max(at, thread.last),
        outbox=(*thread.outbox, owed),
        owed_count=number + 1,
    )
    return _put_thread(state, told)


def forget_threads(state: ClusterAlerts, before: datetime, keep: int) -> ClusterAlerts:
    """Threads owing nothing whose latest occurrence is before `before` leave the state, and
    the oldest such beyond `keep`; `forgotten` remembers the latest occurrence forgotten, so
    a forgotten key seen again unchanged is not told twice."""
    quiet = sorted((t for t in state.threads if not t.outbox), key=lambda t: t.last)
    extra = max(0, len(state.threads) - keep)
    gone = {t.key for t in quiet if t.last < before} | {t.key for t in quiet[:extra]}
    if not gone:
        return state
    latest = max(t.last for t in state.threads if t.key in gone)
    horizon = latest if state.forgotten is None else max(latest, state.forgotten)
    kept = tuple(t for t in state.threads if t.key not in gone)
    return replace(state, threads=kept, forgotten=horizon)


def lively_threads(state: ClusterAlerts, now: datetime) -> list[NoticeThread]:
    """The notice threads a deposed holder may have been posting to: those still owing, and
    those whose latest occurrence is within THREAD_LIVELY (a cluster may keep hundreds of quiet
    threads: looking at each after every takeover would cost two Slack reads apiece)."""
    return [t for t in state.threads if t.outbox or now - t.last < THREAD_LIVELY]


def find_thread(state: ClusterAlerts, key: str) -> NoticeThread | None:
    return next((t for t in state.threads if t.key == key), None)


def find_place(state: ClusterAlerts, where: str) -> Place | None:
    """The incident or the notice thread `where` names."""
    return find_incident(state, where) or find_thread(state, where)


def owing(state: ClusterAlerts) -> list[str]:
    """Everything that owes Slack something: the notices, incidents, then notice threads."""
    threads = [t.key for t in state.threads if t.outbox]
    return [NOTICES, *(a.incident for a in incidents(state)), *threads]


def owes_nothing(state: ClusterAlerts) -> bool:
    """Whether no outbox of the state holds anything: the notices', any incident's, any
    thread's (what `owing` lists, each with a head)."""
    return all(head(state, where) is None for where in owing(state))


def awaiting_evidence(state: ClusterAlerts) -> list[tuple[AlertState, Owed]]:
    """Every diagnosis still owed without its evidence, with its incident."""
    return [(a, o) for a in incidents(state) for o in a.outbox if o.awaits_evidence]


def gathered(
    state: ClusterAlerts,
    where: str,
    effect_id: str,
    text: str,
    blocks: Sequence[Mapping[str, Any]],
) -> ClusterAlerts:
    """The diagnosis `effect_id` of incident `where` with its evidence, rendered. Set once:
    evidence another replica stored first is kept, so every try sends the same words."""
    outbox = _outbox(state, where)
    entry = next((o for o in outbox if o.effect_id == effect_id), None)
    if entry is None or not entry.awaits_evidence or not text:
        return state
    filled = replace(entry, text=text, blocks=tuple(blocks))
    return _with_outbox(state, where, tuple(filled if o is entry else o for o in outbox))


def incidents(state: ClusterAlerts) -> list[AlertState]:
    """Every incident that owes something: resolved ones first (they are older), then live ones
    by when they were first seen."""
    live = sorted([*state.alerts.values(), *state.reminders.values()], key=lambda a: a.first_seen)
    return [a for a in (*state.closing, *live) if a.outbox]


def find_incident(state: ClusterAlerts, incident: str) -> AlertState | None:
    every = (*state.closing, *state.alerts.values(), *state.reminders.values())
    return next((a for a in every if a.incident == incident), None)


def head(state: ClusterAlerts, where: str) -> Owed | None:
    """The next effect `where` (an incident, or NOTICES) owes, if any."""
    outbox = _outbox(state, where)
    return outbox[0] if outbox else None


def attempted(
    state: ClusterAlerts,
    where: str,
    effect_id: str,
    attempt: str,
    by: str,
    at: datetime,
    anchor: str = "",
) -> ClusterAlerts | None:
    """The state with the head marked as attempted by `by`; None when it is no longer the head
    (someone delivered it meanwhile). The first attempt's `anchor` (a Slack ts before it) is
    kept through later attempts, and a root's also on its incident: every copy comes after."""
    owed = head(state, where)
    if owed is None or owed.effect_id != effect_id:
        return None
    anchor = owed.anchor or anchor
    marked = replace(owed, attempt=attempt, attempted_by=by, attempted_at=at, anchor=anchor)
    changed = _with_outbox(state, where, (marked, *_outbox(state, where)[1:]))
    place = find_place(changed, where)
    if owed.kind is EffectKind.ROOT and place is not None and not place.root_anchor:
        changed = _put_place(changed, replace(place, root_anchor=anchor))
    return changed


def unattempted(state: ClusterAlerts, where: str, effect_id: str, attempt: str) -> ClusterAlerts:
    """Slack surely did not apply `attempt` of the head (it answered with an error): nothing
    of it can land, so the next try posts without looking first."""
    owed = head(state, where)
    if owed is None or owed.effect_id != effect_id or owed.attempt != attempt:
        return state
    cleared = replace(owed, attempt="", attempted_by="", attempted_at=None)
    return _with_outbox(state, where, (cleared, *_outbox(state, where)[1:]))


def confirmed(
    state: ClusterAlerts, where: str, effect_id: str, attempt: str, channel: str, ts: str
) -> tuple[ClusterAlerts, Confirmation]:
    """Slack holds our copy of `effect_id` at `ts`: record it if our attempt is still the one
    the entry names (compare-and-set on the attempt ID). An entry already delivered keeps
    the copy it recorded: ours is superseded unless it is that copy, also when the incident
    has closed meanwhile (a deposed replica's answer that came late). A copy whose entry
    nobody remembers is kept: a duplicate can be deleted later, a lost message cannot."""
    outbox = _outbox(state, where)
    entry = next((o for o in outbox if o.effect_id == effect_id), None)
    if entry is not None:
        if entry.attempt != attempt:
            return state, Confirmation.CONTESTED
        return _delivered(state, where, entry, channel, ts), Confirmation.RECORDED
    kept = _recorded_ts(state, where, effect_id)
    return state, Confirmation.SUPERSEDED if kept and kept != ts else Confirmation.RECORDED


def adopted(
    state: ClusterAlerts, where: str, effect_id: str, channel: str, ts: str
) -> ClusterAlerts:
    """A copy of the head was found in Slack at `ts` (an earlier attempt landed): it counts as
    delivered, whatever attempt made it."""
    owed = head(state, where)
    if owed is None or owed.effect_id != effect_id:
        return state
    return _delivered(state, where, owed, channel, ts)


def dropped(
    state: ClusterAlerts, where: str, effect_id: str, attempt: str | None = None
) -> ClusterAlerts:
    """The head is given up (an edit of a root someone deleted: there is nothing to edit), or
    done (an edit applied): with `attempt`, only while the head is still that attempt, for a
    newer edit owed meanwhile replaced it and shows what the older one did not."""
    owed = head(state, where)
    if owed is None or owed.effect_id != effect_id:
        return state
    if attempt is not None and owed.attempt != attempt:
        return state
    return _with_outbox(state, where, _outbox(state, where)[1:])


def extra_copies(alert: Place, found: Mapping[str, Sequence[str]]) -> list[str]:
    """Of the copies `found` (effect ID -> ts) of this incident's messages, those to delete:
    every copy of a delivered root or reply but the one the state keeps."""
    kept = {f"{alert.incident}:0": alert.root_ts, **alert.delivered}
    return sorted(
        ts
        for effect, copies in found.items()
        if kept.get(effect)
        for ts in copies
        if ts != kept[effect]
    )


def _delivered(
    state: ClusterAlerts, where: str, owed: Owed, channel: str, ts: str
) -> ClusterAlerts:
    rest = tuple(o for o in _outbox(state, where) if o.effect_id != owed.effect_id)
    thread = find_thread(state, where)
    if thread is not None:
        if owed.kind is EffectKind.ROOT:
            thread = replace(thread, root_ts=ts)
        else:
            kept = list(thread.delivered.items())[-(DELIVERED_KEPT - 1) :]
            thread = replace(thread, delivered=dict([*kept, (owed.effect_id, ts)]))
        return _put_thread(state, replace(thread, outbox=rest))
    alert = find_incident(state, where)
    if alert is None:
        return _with_outbox(state, where, rest)
    if owed.kind is EffectKind.ROOT:
        alert = replace(alert, root_channel=channel, root_ts=ts)
    elif owed.kind is EffectKind.REPLY:
        kept = list(alert.delivered.items())[-(DELIVERED_KEPT - 1) :]
        alert = replace(alert, delivered=dict([*kept, (owed.effect_id, ts)]))
    return put_incident(state, replace(alert, outbox=rest))


def swept(state: ClusterAlerts, where: str, *, agreed: bool) -> ClusterAlerts:
    """A closing incident's sweep looked at the channel: it leaves once `SETTLE_PASSES` sweeps
    in a row saw the channel agree with the state; a disagreeing look starts the count again.
    (The drain goes on converging recently closed incidents while a late call may land.)"""
    alert = find_incident(state, where)
    owed = head(state, where)
    if alert is None or owed is None or owed.kind is not EffectKind.SWEEP:
        return state
    settled = alert.settled + 1 if agreed else 0
    if settled < SETTLE_PASSES:
        return put_incident(state, replace(alert, settled=settled))
    return put_incident(state, replace(alert, settled=settled, outbox=alert.outbox[1:]))


def find_known(state: ClusterAlerts, incident: str) -> Place | None:
    """The incident, live, closing or recently closed, or the notice thread."""
    return find_place(state, incident) or next(
        (a for a in state.recent if a.incident == incident), None
    )


def _recorded_ts(state: ClusterAlerts, where: str, effect_id: str) -> str:
    alert = find_known(state, where)
    if alert is None:
        return ""
    if effect_id == f"{alert.incident}:0":
        return alert.root_ts
    return alert.delivered.get(effect_id, "")


def _outbox(state: ClusterAlerts, where: str) -> tuple[Owed, ...]:
    if where == NOTICES:
        return state.notices
    place = find_place(state, where)
    return place.outbox if place is not None else ()


def _with_outbox(state: ClusterAlerts, where: str, outbox: tuple[Owed, ...]) -> ClusterAlerts:
    if where == NOTICES:
        return replace(state, notices=outbox)
    place = find_place(state, where)
    return state if place is None else _put_place(state, replace(place, outbox=outbox))


def _put_place(state: ClusterAlerts, place: Place) -> ClusterAlerts:
    if isinstance(place, NoticeThread):
        return _put_thread(state, place)
    return put_incident(state, place)


def _put_thread(state: ClusterAlerts, thread: NoticeThread) -> ClusterAlerts:
    threads = tuple(thread if t.key == thread.key else t for t in state.threads)
    return replace(state, threads=threads)


def put_incident(state: ClusterAlerts, alert: AlertState) -> ClusterAlerts:
    """The incident replaced in the state; a resolved one owing nothing (to Slack, nor to
    PagerDuty: `bot.alerts.pages`) leaves it."""
    if alert.resolved_at is None:
        return state.with_alert(alert)
    closing = [a for a in state.closing if a.incident != alert.incident]
    if alert.outbox or alert.pages:
        closing.append(alert)
        closing.sort(key=lambda a: a.first_seen)
        return replace(state, closing=tuple(closing))
    recent = (*[a for a in state.recent if a.incident != alert.incident], alert)
    return replace(state, closing=tuple(closing), recent=recent[-RECENT_KEPT:])
