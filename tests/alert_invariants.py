"""The delivery invariants, checked over the FINAL state of the alert channel in the emulator.

Every alert message carries its effect ID in Slack message metadata (`<incident>:<n>`, the root
being 0 and the replies numbered in the order they were owed), so the channel alone says what
each incident received. For every incident: exactly one visible root; its replies present
once each, in order, with no number missing, all in the root's thread; the first reply its
diagnosis (but for "cannot check cluster"), and no other; at most one escalation, never
after an acknowledgement; a resolved (or grouped) incident's last reply is the resolution (or
the grouping) and its root is edited so with its buttons gone; and no
visible message was posted by a replica that did not hold the Lease at the time.

What people saw on the way (`ChannelWatch`, an emulator observer): two roots of one incident
visible at the same moment (a page seen twice), a root shown resolved and later firing (a lie),
each forgiven only when a call Slack carried out after its client gave up caused it and the
channel is right again at the end of the next check step; and (`HolderLog.end_step`) a post
by a replica that did not hold the Lease when Slack applied it, still doubling a message a few
check steps after it landed.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.alerts.model import ClusterAlerts
from testbed.slackemu import ApiCall, PostedMessage, SlackEmulator, metadata_by

# A root edited to its end: resolved, or (a fleet incident whose last clusters left the
# configuration) ended, never called resolved.
RESOLVED = ("[RESOLVED", "[ENDED")

METADATA_EVENT = "kai_chatops_effect"
STRAY_STEPS = 3  # check steps a non-holder's doubling copy may stand while reads fail
CHANNEL_WRITES = frozenset({"chat.postMessage", "chat.update", "chat.delete"})
_FAILURE = re.compile(r"\*Object:\* (.+?) +\*Condition:\* (\S+)")  # in a root's first section


@dataclass
class Verdict:
    """What the checker found; `lost` and `duplicated` count messages."""

    incidents: int = 0
    lost: int = 0
    duplicated: int = 0
    problems: list[str] = field(default_factory=list)

    def fail(self, what: str, *, lost: int = 0, duplicated: int = 0) -> None:
        self.problems.append(what)
        self.lost += lost
        self.duplicated += duplicated

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class Stray:
    """A post Slack applied while its poster (`by`) did not hold the Lease (`holder` did), in
    check step `step`."""

    ts: str
    by: str
    holder: str
    step: int


@dataclass
class HolderLog:
    """Who held the Lease whenever Slack applied a post (an emulator observer), and the posts
    of replicas that did not hold it then (`strays`), by the check step they landed in."""

    holder: Callable[[], str | None]
    at_post: dict[str, str | None] = field(default_factory=dict)  # ts -> holder
    posted_by: dict[str, str] = field(default_factory=dict)  # ts -> poster (an edit rewrites it)
    strays: dict[str, Stray] = field(default_factory=dict)
    step: int = 0
    reported: set[str] = field(default_factory=set)

    def __call__(self, call: ApiCall) -> None:
        if call.method == "chat.postMessage" and call.ok:
            ts, holder, by = str(call.response.get("ts")), self.holder(), metadata_by(call.params)
            if _is_about_the_lease(call.params):
                return  # said by a replica that cannot use the Lease, about itself
            self.at_post[ts] = holder
            self.posted_by[ts] = by
            if by and holder is not None and by != holder:
                self.strays[ts] = Stray(ts, by, holder, self.step)

    def end_step(
        self, slack: SlackEmulator, channel: str, kept: Collection[str] = frozenset()
    ) -> list[Stray]:
        """Call at the end of each check step: the strays that landed `STRAY_STEPS` steps ago or
        more and still stand beside another copy of the same message (each reported once); then
        the next step begins. The holder deletes such a copy at its first drain that can read
        the channel to the end (the soak fails a quarter of all reads, hence a few steps). A
        stray that is the only copy (adopted once the holder can read the channel) or that the
        state keeps (`kept`) doubles nothing; `check_channel` judges it at the end."""
        shown = slack.messages(channel)
        copies = Counter(str(payload(m).get("effect") or "") for m in shown)
        standing = {m.ts: str(payload(m).get("effect") or "") for m in shown}
        late = [
            s
            for s in self.strays.values()
            if s.step + STRAY_STEPS <= self.step
            and s.ts in standing
            and s.ts not in self.reported | set(kept)
            and copies[standing[s.ts]] > 1
        ]
        self.reported.update(s.ts for s in late)
        self.step += 1
        return late


@dataclass
class ChannelWatch:
    """What people see in `channel` after every write Slack applies (an emulator observer):
    incidents with two roots visible at once (`twice`), and incidents shown resolved that then
    showed a firing root (`lies`).

    Two roots at once are never forgiven, even briefly (docs/design.md §2 Delivery): the bot
    waits out a root that may still land before it posts another. A lie caused by an edit Slack
    carried out late (held on the wire past its client's timeout: no bot can stop it landing
    after the final edit) is forgiven if the channel is right again at the end of the check step
    after the one it was seen in (call `end_step` after each); such sights are counted in
    `shown_late`.
    """

    slack: SlackEmulator
    channel: str
    twice: set[str] = field(default_factory=set)
    lies: set[str] = field(default_factory=set)
    shown_late: int = 0
    resolved: set[str] = field(default_factory=set)
    late: set[str] = field(default_factory=set)  # ts of posts that landed late
    pending: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, incident): step
    step: int = 0
    first_shown: dict[str, int] = field(default_factory=dict)  # incident -> step its root came
    # With `alerts.group_clusters`: one failure (object and condition) on several clusters is
    # one incident, so two live roots of it at once, whatever their incidents, page twice.
    per_failure: bool = False

    def __call__(self, call: ApiCall) -> None:
        if call.method not in CHANNEL_WRITES:
            return
        if call.held and call.method == "chat.postMessage" and call.ok:
            self.late.add(str(call.response.get("ts")))
        for incident, roots in self._roots().items():
            self.first_shown.setdefault(incident, self.step)
            if len(roots) > 1:
                self._saw("twice", incident, late=False)
            firing = [r for r in roots if not r.text.startswith(RESOLVED)]
            if incident in self.resolved and firing:
                self._saw("lie", incident, call.held or all(r.ts in self.late for r in firing))
            if len(firing) < len(roots):
                self.resolved.add(incident)
        if self.per_failure:
            for failure in self._live_failures_seen_twice():
                self._saw("twice", failure, late=False)

    def end_step(self, *, final: bool = False) -> None:
        """Judge the forgivable sights of earlier steps (all of them when `final`)."""
        roots = self._roots()
        for (kind, incident), step in list(self.pending.items()):
            if step >= self.step and not final:
                continue
            del self.pending[kind, incident]
            shown = roots.get(incident, [])
            if kind == "twice":
                right = len(shown) <= 1
            else:
                right = all(r.text.startswith(RESOLVED) for r in shown)
            if right:
                self.shown_late += 1
            else:
                (self.twice if kind == "twice" else self.lies).add(incident)
        self.step += 1

    def _saw(self, kind: str, incident: str, late: bool) -> None:
        if incident in (self.twice if kind == "twice" else self.lies):
            return
        if (kind, incident) in self.pending:
            return  # judged at the end of the next step
        if late:
            self.pending[kind, incident] = self.step
        else:
            (self.twice if kind == "twice" else self.lies).add(incident)

    def _live_failures_seen_twice(self) -> list[str]:
        """The failures with more than one live root (not resolved, not grouped) visible."""
        live: Counter[str] = Counter()
        for roots in self._roots().values():
            for root in roots:
                found = _FAILURE.search(str(root.blocks[0].get("text", {}).get("text", "")))
                if found and not root.text.startswith((*RESOLVED, "[GROUPED")):
                    live[f"failure {found.group(1)} {found.group(2)}"] += 1
        return [failure for failure, count in live.items() if count > 1]

    def _roots(self) -> dict[str, list[PostedMessage]]:
        shown: dict[str, list[PostedMessage]] = defaultdict(list)
        for message in self.slack.root_messages(self.channel):
            incident, _, number = str(payload(message).get("effect") or "").rpartition(":")
            if incident and number == "0":
                shown[incident].append(message)
        return shown


def _is_about_the_lease(params: Mapping[str, Any]) -> bool:
    """A lease-trouble notice: any replica that cannot renew says it (it cannot know whether
    another one holds the Lease), so it is no holder's message."""
    metadata = params.get("metadata")
    found = metadata.get("event_payload") if isinstance(metadata, Mapping) else None
    return isinstance(found, Mapping) and str(found.get("effect") or "").startswith("lease:")


def payload(message: PostedMessage) -> Mapping[str, Any]:
    meta = message.metadata
    if meta.get("event_type") != METADATA_EVENT:
        return {}
    found = meta.get("event_payload")
    return found if isinstance(found, Mapping) else {}


def check_channel(
    slack: SlackEmulator,
    channel: str,
    *,
    holders: HolderLog | None = None,
    kept: Collection[str] = frozenset(),
    changes: bool = True,
) -> Verdict:
    """Every invariant above over `channel` as it is now; a non-holder's post the state keeps
    (`kept`: adopted by the holder as the one copy) is not a stray. Without `changes`, pages
    need no "what changed" reply (a release before it fired them)."""
    verdict = Verdict()
    by_incident: dict[str, list[tuple[int, PostedMessage]]] = defaultdict(list)
    for message in slack.messages(channel):
        effect = str(payload(message).get("effect") or "")
        incident, _, number = effect.rpartition(":")
        if "/" in incident and number.isdigit():
            by_incident[incident].append((int(number), message))
        if holders is not None and effect and message.ts not in kept:
            _check_poster(verdict, message, holders)
    verdict.incidents = len(by_incident)
    for incident, messages in sorted(by_incident.items()):
        _check_incident(verdict, incident, messages, changes)
    return verdict


def _check_poster(verdict: Verdict, message: PostedMessage, holders: HolderLog) -> None:
    """Who posted it, as the post said (a root's metadata names its last editor since)."""
    by = holders.posted_by.get(message.ts) or str(payload(message).get("by") or "")
    held = holders.at_post.get(message.ts)
    if held is not None and by != held:
        verdict.fail(f"{message.ts} posted by {by} while {held} held the Lease")


def _check_incident(
    verdict: Verdict, incident: str, messages: list[tuple[int, PostedMessage]], changes: bool
) -> None:
    roots = [m for n, m in messages if n == 0]
    if len(roots) != 1:
        lost, extra = (1, 0) if not roots else (0, len(roots) - 1)
        verdict.fail(f"{incident}: {len(roots)} visible roots", lost=lost, duplicated=extra)
        if not roots:
            return
    root = roots[0]
    replies = [(n, m) for n, m in messages if n != 0]
    misplaced = [m.ts for _, m in replies if m.thread_ts != root.ts]
    if misplaced:
        verdict.fail(f"{incident}: replies outside the root's thread: {misplaced}")
    numbers = [n for n, _ in replies]
    repeated = len(numbers) - len(set(numbers))
    if repeated:
        verdict.fail(f"{incident}: replies posted twice: {numbers}", duplicated=repeated)
    missing = sorted(set(range(1, max(numbers, default=0) + 1)) - set(numbers))
    if missing:
        verdict.fail(f"{incident}: replies missing: {missing}", lost=len(missing))
    if numbers != sorted(numbers):
        verdict.fail(f"{incident}: replies out of order: {numbers}")
    _check_diagnosis(verdict, incident, root, replies, changes)
    _check_resolution(verdict, incident, root, [m for _, m in replies])


def _check_diagnosis(
    verdict: Verdict,
    incident: str,
    root: PostedMessage,
    replies: list[tuple[int, PostedMessage]],
    changes_owed: bool = True,
) -> None:
    """Reply 1 of every page with a component to look at is its diagnosis, and only reply 1;
    reply 2 what changed before it, and only reply 2."""
    diagnoses = [n for n, m in replies if payload(m).get("note") == "diagnosis"]
    if "Cannot check cluster" in root.text:
        if diagnoses:
            verdict.fail(f"{incident}: a diagnosis of a cluster that cannot be checked")
        return
    if 1 not in diagnoses:
        # No reply at all: the diagnosis is lost (a gap before later replies is counted above).
        lost = 0 if replies else 1
        verdict.fail(f"{incident}: its first reply is not its diagnosis", lost=lost)
    if [n for n in diagnoses if n != 1]:
        verdict.fail(f"{incident}: diagnoses after the first reply: {diagnoses}")
    # Reply 2, after the diagnosis, is what changed in the hour before (bot/timeline), once.
    changes = [n for n, m in replies if payload(m).get("note") == "changes"]
    if changes_owed and 1 in diagnoses and changes != [2]:
        lost = 1 if not changes and max(n for n, _ in replies) < 2 else 0
        verdict.fail(f"{incident}: what changed is not its second reply: {changes}", lost=lost)


def _check_resolution(
    verdict: Verdict, incident: str, root: PostedMessage, replies: list[PostedMessage]
) -> None:
    notes = [str(payload(m).get("note") or "") for m in replies]
    if notes.count("escalated") > 1:
        verdict.fail(f"{incident}: escalated more than once: {notes}")
    if "escalated" in notes and "acknowledged" in notes[: notes.index("escalated")]:
        verdict.fail(f"{incident}: escalated after it was acknowledged: {notes}")
    # An incident ends resolved, or grouped into a fleet incident (`alerts.group_clusters`).
    for end, label in (("resolved", RESOLVED), ("grouped", ("[GROUPED",))):
        ended_root = root.text.startswith(label)
        if end in notes and notes[-1] != end:
            verdict.fail(f"{incident}: something said after it was {end}: {notes}")
        if end in notes and not ended_root:
            verdict.fail(f"{incident}: {end} in its thread, root not edited", lost=1)
        if ended_root and end not in notes:
            verdict.fail(f"{incident}: root edited to {end}, no reply saying so", lost=1)
        if ended_root and any(b.get("type") == "actions" for b in root.blocks):
            verdict.fail(f"{incident}: {end} root still has its buttons")


def replies_noted(slack: SlackEmulator, channel: str, note: str) -> int:
    """How many thread replies in the channel carry `note` (`diagnosis`, `escalated`, …)."""
    return sum(1 for m in slack.messages(channel) if m.thread_ts and payload(m).get("note") == note)


def resolved_incidents(slack: SlackEmulator, channel: str) -> list[PostedMessage]:
    """The visible alert roots edited to resolved."""
    return [
        m
        for m in slack.root_messages(channel)
        if str(payload(m).get("effect") or "").endswith(":0") and m.text.startswith(RESOLVED)
    ]


def kept_messages(state: ClusterAlerts | None) -> set[str]:
    """The ts of every message the state keeps (roots and replies, recently closed included):
    a late copy the holder adopted is one of them."""
    if state is None:
        return set()
    every = (*state.alerts.values(), *state.closing, *state.recent, *state.threads)
    return {a.root_ts for a in every if a.root_ts} | {
        ts for a in every for ts in a.delivered.values()
    }


def check_notices(
    slack: SlackEmulator,
    channel: str,
    told: Mapping[str, int],
    *,
    holders: HolderLog | None = None,
    kept: Collection[str] = frozenset(),
) -> Verdict:
    """Eviction notices in `channel`: for each thread key in `told` (with its Event's final
    count) exactly one visible notice and each reply once, in order, in its thread, one per
    rise seen (a rise before the Event was first seen is said in the notice), the last of
    them saying the final count; nothing else the bot posted; no post by a replica that did
    not hold the Lease (unless the state keeps it)."""
    verdict = Verdict()
    found: dict[str, list[tuple[int, PostedMessage]]] = defaultdict(list)
    for message in slack.messages(channel):
        effect = str(payload(message).get("effect") or "")
        key, _, number = effect.rpartition(":")
        if not effect:
            continue
        if key not in told or not number.isdigit():
            verdict.fail(f"{channel}: a message nobody owed: {effect}", duplicated=1)
            continue
        found[key].append((int(number), message))
        if holders is not None and message.ts not in kept:
            _check_poster(verdict, message, holders)
    verdict.incidents = len(found)
    for key, count in sorted(told.items()):
        messages = found.get(key, [])
        roots = [m for n, m in messages if n == 0]
        if len(roots) != 1:
            lost, extra = (1, 0) if not roots else (0, len(roots) - 1)
            verdict.fail(f"{key}: {len(roots)} visible notices", lost=lost, duplicated=extra)
            continue
        replies = sorted((n, m) for n, m in messages if n != 0)
        numbers = [n for n, m in replies if m.thread_ts == roots[0].ts]
        if numbers != list(range(1, len(numbers) + 1)) or len(numbers) != len(replies):
            extra = len(numbers) - len(set(numbers))
            verdict.fail(f"{key}: replies {numbers} of {len(replies)}", duplicated=extra)
        last = replies[-1][1] if replies else roots[0]
        if count > 1 and f"counts {count} evictions" not in last.text:
            verdict.fail(f"{key}: {count} evictions, the last message says otherwise", lost=1)
        if len(replies) > count - 1:
            verdict.fail(f"{key}: {len(replies)} replies for {count - 1} rises", duplicated=1)
    return verdict
