"""The alert data: identity, what a check saw, one alert's state and outbox, a cluster's alerts.

Frozen values only, shared by the state machine (`bot.alerts.machine`), the outbox bookkeeping
(`bot.alerts.outbox`), the rules that produce observations (`bot.alerts.rules`), rendering and
the store (JSON in `bot.alerts.document`). Pure: no I/O, no clock.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bot.alerts.seen import Seen

if TYPE_CHECKING:  # its module imports Owed from here
    from bot.alerts.notice_thread import NoticeThread


class Severity(enum.Enum):
    CRITICAL = "critical"
    WARNING = "warning"


class Phase(enum.Enum):
    """Where an alert is in its life; derived from its fields (see `AlertState.phase`)."""

    PENDING = "pending"  # bad, but not yet for `hold`: nothing posted
    FIRING = "firing"
    ACKNOWLEDGED = "acknowledged"
    SILENCED = "silenced"
    RESOLVED = "resolved"


class RootStatus(enum.Enum):
    """The alert's root message: not owed yet, owed (in the outbox), posted (ts known)."""

    NONE = "none"
    POSTING = "posting"
    POSTED = "posted"


class NoteKind(enum.Enum):
    DIAGNOSIS = "diagnosis"  # the first reply: the failing component's evidence
    CHANGES = "changes"  # the second: what changed on the cluster in the hour before it fired
    REMINDER = "reminder"
    ACKNOWLEDGED = "acknowledged"
    SILENCED = "silenced"
    UNSILENCED = "unsilenced"
    SILENCE_EXPIRED = "silence expired"
    ESCALATED = "escalated"  # still firing, unanswered, `escalate_after` after it fired
    RESOLVED = "resolved"
    # A fleet incident's thread (`bot.alerts.fleet`); the note's `reason` names the clusters
    # (`Note.clusters`).
    JOINED = "joined"  # clusters began firing the same alert
    # Clusters stopped firing it: their alerts resolved (after `hold`, as their own would), or
    # (`Note.unwatched`) they left the configuration, so nobody knows whether they recovered.
    RECOVERED = "recovered"
    GROUPED = "grouped"  # a cluster's own incident now followed in the fleet's (`reason`: ID)


class Escalation(enum.Enum):
    """Whether an incident was escalated: decided once, when `escalate_after` has passed."""

    PENDING = "pending"  # not due yet (or no check has seen it due)
    OWED = "owed"  # the one escalation reply is owed (or delivered)
    SPARED = "spared"  # acknowledged or silenced when it came due: never escalated


@dataclass(frozen=True)
class Note:
    """What a thread reply says: who, when, why; `still_bad` after a silence ends; of a fleet
    incident's RECOVERED note, `unwatched` when its clusters left the configuration instead.
    `until`: a silence's end; a fleet note's clusters changed between `at` and `until` (None:
    at `at`)."""

    kind: NoteKind
    at: datetime
    user: str = ""
    reason: str = ""
    until: datetime | None = None
    still_bad: bool = True
    unwatched: bool = False

    @property
    def clusters(self) -> tuple[str, ...]:
        """The clusters a fleet incident's JOINED or RECOVERED note names, in its `reason`
        (a cluster name holds no comma)."""
        return tuple(self.reason.split(CLUSTERS_SEPARATOR)) if self.reason else ()


CLUSTERS_SEPARATOR = ", "
# The replies the holder gathers after the root went out, in this order (`bot.alerts.machine`).
EVIDENCE_NOTES = (NoteKind.DIAGNOSIS, NoteKind.CHANGES)


class EffectKind(enum.Enum):
    """A Slack effect an alert owes: its root, a reply in its thread, an edit of its root, a
    notice in the channel (outside any thread), or, last of a resolved incident, a sweep that
    deletes any copy of its messages that landed after it was looked for."""

    ROOT = "root"
    REPLY = "reply"
    EDIT = "edit"
    NOTICE = "notice"
    SWEEP = "sweep"


class PageAction(enum.Enum):
    """An event of PagerDuty's Events API v2 an incident owes (`bot.alerts.pages`), in the
    order PagerDuty's alert goes through them."""

    TRIGGER = "trigger"
    ACKNOWLEDGE = "acknowledge"
    RESOLVE = "resolve"


@dataclass(frozen=True)
class Owed:
    """One Slack effect, stored before it is attempted and removed once Slack confirmed it.

    `effect_id` is stable and travels with the message in Slack's message metadata, so a
    message whose post had an unknown outcome can be found instead of posted twice. The
    attempt fields fence posters: the replica that made the attempt, its ID and when.
    A diagnosis reply is owed empty and filled once by the Lease holder (`text` and `blocks`,
    rendered): every try, by any replica, then sends those same words.
    """

    effect_id: str
    kind: EffectKind
    note: Note | None = None
    text: str = ""  # a notice's words; a diagnosis's fallback text
    blocks: tuple[Mapping[str, Any], ...] = ()  # a diagnosis's blocks, as rendered
    attempt: str = ""  # "" never attempted
    attempted_by: str = ""
    attempted_at: datetime | None = None
    # A Slack `ts` known before the attempt was sent: any copy it made is newer, so a search
    # for it is anchored on Slack's own clock, never the host's ("" = search everything).
    anchor: str = ""
    # When the effect was first saved as owed (`bot.alerts.backlog`): how long Slack has owed
    # it, for `/metrics`. Bookkeeping, left out of equality (None: not saved yet).
    owed_at: datetime | None = field(default=None, compare=False)

    @property
    def was_attempted(self) -> bool:
        return bool(self.attempt)

    @property
    def awaits_evidence(self) -> bool:
        """A diagnosis (or what-changed) reply whose evidence has not been gathered yet: not
        sendable."""
        gathered = self.note is not None and self.note.kind in EVIDENCE_NOTES
        return gathered and not self.text


@dataclass(frozen=True, order=True)
class AlertKey:
    """An alert's identity (docs/design.md §2): the same key after a resolution is a new
    incident."""

    cluster: str
    kind: str
    object: str
    condition: str

    @property
    def alert_id(self) -> str:
        """A short ID people can type (`/kai ack 3f9a2c`), stable across restarts and replicas."""
        fields = (self.cluster, self.kind, self.object, self.condition)  # as declared
        return hashlib.sha256("\x1f".join(fields).encode()).hexdigest()[:6]

    @property
    def subject(self) -> str:
        """`Config kai-config`: the object as a report names it."""
        return f"{self.kind} {self.object}"

    @property
    def is_fleet(self) -> bool:
        """A fleet incident (`bot.alerts.fleet`): one alert firing on several clusters."""
        return self.cluster == FLEET

    @property
    def is_alertmanager(self) -> bool:
        """An Alertmanager notification group's incident (docs/alertmanager.md)."""
        return self.cluster == ALERTMANAGER

    @property
    def is_reminder(self) -> bool:
        """A forgotten pause or suspend (`bot.alerts.reminders`), not a health alert."""
        return self.condition in REMINDER_CONDITIONS


# The store document, and the `cluster` of the keys, of fleet incidents (`bot.alerts.fleet`):
# no cluster can be called so (a Kubernetes name never starts with "_").
FLEET = "_fleet"
# The store document, and the `cluster` of the keys, of Alertmanager's notification groups
# (`bot.integrations.alertmanager_groups`): its ConfigMap is `<state.configmap>--alertmanager`.
ALERTMANAGER = "_alertmanager"
# The `fleet` of a cluster's alert that just fired and waits (two `alerts.interval`) to learn
# whether the rest of the fleet fires it too, before it pages on its own.
WAITING = "waiting"

# The conditions of a reminder's key: a pause or suspend without an end (`bot.alerts.reminders`).
REMINDER_CONDITIONS = frozenset({"paused without an end", "suspended without an end"})


@dataclass(frozen=True)
class Observation:
    """One bad condition a check saw: what it is, how bad, and the operator's own words.

    `immediate` alerts skip `hold` both ways (the check-failure alert: its failure count is its
    hold). `waited_out` alerts fire without `hold` (a queue starved `alerts.starved_after`: that
    wait was their hold) and resolve after it like any other. `since` is when the condition
    itself says it started, if it says.
    """

    key: AlertKey
    severity: Severity
    title: str
    reason: str = ""
    message: str = ""
    check_first: str = ""
    since: datetime | None = None
    immediate: bool = False
    waited_out: bool = False
    by: str = ""  # of a reminder: who made the change ("" by hand)


@dataclass(frozen=True)
class AlertState:
    """One alert as stored: its latest observation, its timeline, its root message, its owners."""

    observation: Observation
    first_seen: datetime
    firing_since: datetime | None = None
    clear_since: datetime | None = None
    root_channel: str = ""
    root_ts: str = ""
    acked_by: str = ""
    acked_at: datetime | None = None
    silenced_by: str = ""
    silenced_until: datetime | None = None
    silence_reason: str = ""
    last_reminder: datetime | None = None
    resolved_at: datetime | None = None
    escalation: Escalation = Escalation.PENDING
    outbox: tuple[Owed, ...] = ()
    owed_count: int = 0  # effects numbered so far in this incident (the root is 0)
    delivered: Mapping[str, str] = field(default_factory=dict)  # effect ID -> reply ts
    root_anchor: str = ""  # the anchor of the root's first attempt: where its copies begin
    commands: tuple[str, ...] = ()  # IDs of the last commands applied, so none applies twice
    settled: int = 0  # a closing incident's sweeps in a row that found the channel agreeing
    # Grouping across clusters (`bot.alerts.fleet`). A cluster's alert: `fleet` is the ID of
    # the fleet incident that follows it (it has no thread of its own) or WAITING, `paged` its
    # cluster when its own root paged before it was grouped. A fleet incident: `clusters` every
    # cluster that fired it, in order, `recovered` those whose alert resolved, `unwatched` those
    # that left the configuration while firing (neither is firing now), `paged` the clusters
    # whose own roots paged already (so its root pages nobody again).
    fleet: str = ""
    clusters: tuple[str, ...] = ()
    recovered: tuple[str, ...] = ()
    paged: tuple[str, ...] = ()
    unwatched: tuple[str, ...] = ()
    # A fleet incident's thread tells who joined (and who left) at most once per
    # `alerts.interval` (`bot.alerts.fleet`): `untold` the clusters whose joining or leaving it
    # has not told yet (the root's list shows them already), `joins_told` and `leaves_told`
    # when it last told each.
    untold: tuple[str, ...] = ()
    joins_told: datetime | None = None
    leaves_told: datetime | None = None
    # What its thread was told, in order (each reply's note as it was owed; at most
    # `bot.alerts.outbox.HISTORY_KEPT`): the postmortem draft reads it (`/kai timeline ALERT_ID`).
    history: tuple[Note, ...] = ()
    # An Alertmanager group's incident (`AlertKey.is_alertmanager`): `members` its alerts firing
    # now (`fingerprint@startsAt`), `labels` the group's common labels (`name=value`, the
    # matchers of a silence), `silence_id` the Alertmanager silence made from Slack ("" none).
    members: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    silence_id: str = ""
    # PagerDuty (`bot.alerts.pages`): the events owed, in order, and the last one ever owed.
    pages: tuple[PageAction, ...] = ()
    paged_to: PageAction | None = None

    @property
    def key(self) -> AlertKey:
        return self.observation.key

    @property
    def alert_id(self) -> str:
        return self.observation.key.alert_id

    @property
    def phase(self) -> Phase:
        if self.resolved_at is not None:
            return Phase.RESOLVED
        if self.firing_since is None:
            return Phase.PENDING
        if self.silenced_until is not None:
            return Phase.SILENCED
        return Phase.ACKNOWLEDGED if self.acked_by else Phase.FIRING

    @property
    def is_active(self) -> bool:
        """Fired and not resolved: it has (or is getting) a root message. (The phase neither
        PENDING nor RESOLVED, asked of each alert of a fleet at every check.)"""
        return self.resolved_at is None and self.firing_since is not None

    @property
    def incident(self) -> str:
        """This incident's ID: the alert and when it was first seen (a refiring is another)."""
        return f"{self.key.cluster}/{self.alert_id}/{self.first_seen.strftime('%Y%m%dT%H%M%S%f')}"

    @property
    def grouped(self) -> bool:
        """A cluster's alert followed in a fleet incident (not one waiting to know)."""
        return bool(self.fleet) and self.fleet != WAITING

    @property
    def where(self) -> str:
        """Where it fires: its cluster, or a fleet incident's clusters ("3 clusters: a, b, c")."""
        if self.key.is_alertmanager:
            return "Alertmanager"
        if not self.key.is_fleet:
            return self.key.cluster
        return f"{len(self.clusters)} clusters: {', '.join(self.clusters)}"

    @property
    def firing_clusters(self) -> tuple[str, ...]:
        """A fleet incident's clusters that fire it now: neither recovered nor unwatched."""
        gone = {*self.recovered, *self.unwatched}
        return tuple(c for c in self.clusters if c not in gone)

    @property
    def has_thread(self) -> bool:
        return bool(self.root_ts)

    @property
    def root_status(self) -> RootStatus:
        if self.root_ts:
            return RootStatus.POSTED
        owes_root = any(o.kind is EffectKind.ROOT for o in self.outbox)
        return RootStatus.POSTING if owes_root else RootStatus.NONE


@dataclass(frozen=True)
class ClusterAlerts:
    """Every alert of one cluster, plus the consecutive check failures behind "cannot check".

    `closing` holds resolved incidents that still owe Slack something (their resolution, say):
    an alert leaves the state only once its outbox is empty. `notices` are channel messages
    owed outside any alert (the state was found damaged and reset); `threads` those told once
    each, in their own channel, with replies (evictions). `recent` remembers the
    last incidents that left, with the ts of what they kept: a late answer or a new Lease
    holder can still tell a kept message from a copy to delete.
    """

    cluster: str
    alerts: Mapping[AlertKey, AlertState] = field(default_factory=dict)
    failures: int = 0
    last_error: str = ""
    closing: tuple[AlertState, ...] = ()
    notices: tuple[Owed, ...] = ()
    recent: tuple[AlertState, ...] = ()  # the last incidents closed, kept for late answers
    threads: tuple[NoticeThread, ...] = ()  # notices told outside any alert (evictions)
    # Threads whose latest occurrence was at or before this were forgotten: not told again.
    forgotten: datetime | None = None
    # Forgotten pauses and suspends, each an incident like an alert's (`bot.alerts.reminders`),
    # apart from the alerts so no check, listing or command of alerts sees them.
    reminders: Mapping[AlertKey, AlertState] = field(default_factory=dict)
    # When the channel was last told this document reached its byte budget (`bot.alerts.budget`).
    budget_told: datetime | None = None
    # What the checks saw move on the cluster (Kustomization revisions, `kai-config`, the
    # APIService), remembered for `/kai timeline` (`bot.alerts.seen`, bounded by its own caps).
    seen: Seen = field(default_factory=Seen)

    def with_alert(self, alert: AlertState) -> ClusterAlerts:
        if alert.key.is_reminder:
            return replace(self, reminders={**self.reminders, alert.key: alert})
        return replace(self, alerts={**self.alerts, alert.key: alert})

    def without(self, key: AlertKey) -> ClusterAlerts:
        if key.is_reminder:
            return replace(self, reminders={k: v for k, v in self.reminders.items() if k != key})
        return replace(self, alerts={k: v for k, v in self.alerts.items() if k != key})

    def find(self, alert_id: str) -> AlertState | None:
        wanted = alert_id.strip().lower()
        return next((a for a in self.alerts.values() if a.alert_id == wanted), None)
