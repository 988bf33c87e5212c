"""How alerts look in Slack: the root message and its buttons, the `/kai alerts` list, and the
short private answer to ack, silence or unsilence (the thread's replies: `render_replies`; the
diagnosis: `render_evidence`).

Pure Block Kit dicts, always fitted to Slack's limits; no Slack library, no clock (every time
shown comes from the alert or the note). Operators' messages are shown verbatim, escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.alerts.model import AlertKey, AlertState, ClusterAlerts, Phase, Severity
from bot.core import errors
from bot.core.durations import format_duration
from bot.core.redaction import redact
from bot.core.rich import Rich, rich_join, rich_text
from bot.slack.blocks import (
    Block,
    Message,
    Text,
    button,
    context,
    escape,
    fit_message,
    mention,
    section,
    text_message,
    truncate,
)

ACK_ACTION = "kai_alert_ack"
SILENCE_1H_ACTION = "kai_alert_silence_1h"
SILENCE_4H_ACTION = "kai_alert_silence_4h"
HEALTH_ACTION = "kai_alert_health"
SILENCE_ACTIONS = {SILENCE_1H_ACTION: timedelta(hours=1), SILENCE_4H_ACTION: timedelta(hours=4)}

SEVERITY_ICONS = {Severity.CRITICAL: ":rotating_light:", Severity.WARNING: ":warning:"}
RESOLVED_ICON = ":white_check_mark:"
UNWATCHED_ICON = ":heavy_minus_sign:"  # clusters that left the configuration: not recovered
LISTED_CHARS = 1000  # of a list of clusters in one message; longer is cut, "and N more"
_FALLBACK_MESSAGE = 300  # characters of the operator's message in the notification text


def button_value(key: AlertKey) -> str:
    """What an alert's buttons carry: `cluster:alert_id`."""
    return f"{key.cluster}:{key.alert_id}"


def parse_button_value(value: str) -> tuple[str, str]:
    """The (cluster, alert_id) an alert button carries.

    Raises:
        UserError: the value is not one of ours.
    """
    cluster, _, alert_id = value.partition(":")
    if not cluster or not alert_id:
        raise errors.UserError("This button does not belong to a kai-chatops alert.")
    return cluster, alert_id


def clicked_root(body: Mapping[str, Any]) -> tuple[str, str]:
    """Where the root message whose button was clicked is, from the click's payload: (channel,
    ts), each "" when the payload does not say."""
    container = body.get("container") or {}
    channel = str(container.get("channel_id") or body.get("channel", {}).get("id", ""))
    return channel, str(container.get("message_ts") or "")


def format_time(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def root_message(alert: AlertState, paged: Sequence[str] = (), *, command: str) -> Message:
    """The alert's root: who it pages (`paged`: user or group IDs, or handles shown as text;
    not once resolved), severity, cluster, object, condition, reason, the operator's message,
    since when, what to check first, its state (with the `command` to ack or silence it: the
    configured slash command), and the buttons (none once resolved)."""
    seen = alert.observation
    key = seen.key
    resolved = alert.phase is Phase.RESOLVED
    icon = RESOLVED_ICON if resolved else SEVERITY_ICONS[seen.severity]
    label = f"RESOLVED ({seen.severity.value})" if resolved else seen.severity.value.upper()
    if resolved and alert.fleet:
        label = f"GROUPED ({seen.severity.value})"
    if resolved and ended_unwatched(alert):
        icon, label = UNWATCHED_ICON, f"ENDED ({seen.severity.value})"
    paging = Rich() if resolved else mentions(paged)
    facts: list[Text] = [
        f"{icon} *{label}* · *{escape(seen.title)}*",
        *([rich_text("*Paging:* ", paging)] if paging else []),
        _where_fact(alert),
    ]
    if alert.paged and key.is_fleet:
        facts.append(f"*Already paged by its own alert on:* {escape(listed(alert.paged))}")
    if seen.reason:
        facts.append(f"*Reason:* {escape(seen.reason)}")
    facts.append(f"*Since:* {format_time(seen.since or alert.first_seen)}")
    blocks = [section(rich_join("\n", facts))]
    if seen.message.strip():
        shown = _redacted(seen.message.strip(chr(10)))
        blocks.append(section(f"*Message:*\n```{escape(shown)}```"))
    if seen.check_first and not resolved:
        blocks.append(section(f"*Check first:* {escape(seen.check_first)}"))
    blocks.append(context(_status_line(alert, command)))
    if not resolved:
        blocks.append(_buttons(key))
    text = _root_text(alert, label)
    return fit_message(
        {"text": rich_text(text, " · ", paging) if paging else text, "blocks": blocks}
    )


def _where_fact(alert: AlertState) -> str:
    """Where it fires and what: cluster, object, condition; an Alertmanager group's labels."""
    key = alert.key
    if key.is_alertmanager:
        return f"*From:* Alertmanager   *Group:* {escape(key.object)}"
    return (
        f"{_clusters_fact(alert)}   *Object:* {escape(key.subject)}   "
        f"*Condition:* {escape(key.condition)}"
    )


def what_fires(key: AlertKey) -> str:
    """`Config kai-config DependenciesFulfilled False`; an Alertmanager group by its labels."""
    return f"group {key.object}" if key.is_alertmanager else f"{key.subject} {key.condition}"


def _clusters_fact(alert: AlertState) -> str:
    """`*Cluster:* a`; a fleet incident's clusters, those recovered or no longer watched (left
    the configuration) marked so."""
    if not alert.key.is_fleet:
        return f"*Cluster:* {escape(alert.key.cluster)}"
    shown = [_marked(alert, c) for c in alert.clusters]
    firing = len(alert.firing_clusters)
    count = f"{len(alert.clusters)}, {firing} firing" if firing < len(alert.clusters) else firing
    return f"*Clusters ({count}):* {escape(listed(shown))}"


def _marked(alert: AlertState, cluster: str) -> str:
    if cluster in alert.recovered:
        return f"{cluster} (recovered)"
    return f"{cluster} (no longer watched)" if cluster in alert.unwatched else cluster


def listed(names: Sequence[str], limit: int = LISTED_CHARS) -> str:
    """`a, b, c`; cut to `a, b and 7 more` where the whole list would pass `limit` characters
    (a fleet of a thousand clusters, within Slack's limits)."""
    whole = ", ".join(names)
    if len(whole) <= limit:
        return whole
    kept: list[str] = []
    length = 0
    for name in names:
        more = f" and {len(names) - len(kept) - 1} more"
        if length + len(", ") * bool(kept) + len(name) + len(more) > limit:
            break
        length += len(", ") * bool(kept) + len(name)
        kept.append(name)
    return f"{', '.join(kept)} and {len(names) - len(kept)} more"


def ended_unwatched(alert: AlertState) -> bool:
    """A fleet incident that ended with clusters that left the configuration while firing:
    nobody saw them recover, so it is never called resolved."""
    return alert.key.is_fleet and bool(alert.unwatched)


def _redacted(text: str) -> str:
    """A condition's message with secret-shaped values redacted, line by line (an operator's
    message may quote a log line or a connection string)."""
    return "\n".join(redact(line) for line in text.split("\n"))


def mentions(entries: Sequence[str]) -> Rich:
    """The configured people: IDs become mentions (`bot.slack.blocks.mention`, the only door);
    a handle that could not be resolved is shown as text and notifies nobody."""
    return rich_join(" ", (mention(e) if not e.startswith("@") else escape(e) for e in entries))


def _where(alert: AlertState) -> str:
    """Its cluster, or a fleet incident's clusters (`AlertState.where`), a long list cut."""
    if not alert.key.is_fleet:
        return alert.where
    return f"{len(alert.clusters)} clusters: {listed(alert.clusters)}"


def _root_text(alert: AlertState, label: str) -> str:
    seen = alert.observation
    text = f"[{label}] {_where(alert)}: {what_fires(seen.key)}: {seen.title}"
    message = " ".join(_redacted(seen.message).split())
    return f"{text}: {truncate(message, _FALLBACK_MESSAGE)}" if message else text


def _status_line(alert: AlertState, command: str) -> Rich:
    alert_id = alert.alert_id
    state = rich_text(f"Alert `{alert_id}` · ", _describe_phase(alert))
    if alert.phase is Phase.RESOLVED:
        return state
    return state + f" · `{command} ack {alert_id}` · `{command} silence {alert_id} 2h REASON`"


def _describe_phase(alert: AlertState) -> Text:
    phase = alert.phase
    if phase is Phase.RESOLVED and alert.fleet and alert.resolved_at is not None:
        at = format_time(alert.resolved_at)
        return f"grouped at {at} into fleet incident `{alert.fleet}`, followed there"
    if phase is Phase.RESOLVED and ended_unwatched(alert) and alert.resolved_at is not None:
        fired = fired_for(alert, alert.resolved_at)
        at = format_time(alert.resolved_at)
        return f"ended at {at} after firing for {fired}: no cluster still watched fires it"
    if phase is Phase.RESOLVED and alert.resolved_at is not None:
        fired = fired_for(alert, alert.resolved_at)
        return f"resolved at {format_time(alert.resolved_at)} after firing for {fired}"
    parts: list[Text] = [f"firing since {format_time(alert.firing_since or alert.first_seen)}"]
    if alert.acked_by and alert.acked_at is not None:
        at = f" at {format_time(alert.acked_at)}"
        parts.append(rich_text("acknowledged by ", mention(alert.acked_by), at))
    if alert.silenced_until is not None:
        parts.append(_silence_text(alert.silenced_by, alert.silenced_until, alert.silence_reason))
    return rich_join(" · ", parts)


def _silence_text(user: str, until: datetime, reason: str) -> Rich:
    why = f": {escape(reason)}" if reason else ""
    return rich_text("silenced by ", mention(user), f" until {format_time(until)}{why}")


def _buttons(key: AlertKey) -> Block:
    value = button_value(key)
    return {
        "type": "actions",
        "block_id": f"kai_alert_{key.alert_id}",
        "elements": [
            button("Acknowledge", ACK_ACTION, value, style="primary"),
            button("Silence 1h", SILENCE_1H_ACTION, value),
            button("Silence 4h", SILENCE_4H_ACTION, value),
            # A fleet incident's clusters each have their own report (`/kai health CLUSTER`);
            # an Alertmanager group names no cluster of ours.
            *(
                []
                if key.is_fleet or key.is_alertmanager
                else [button("Run health check", HEALTH_ACTION, value)]
            ),
        ],
    }


def fired_for(alert: AlertState, until: datetime) -> str:
    return elapsed(alert.firing_since or alert.first_seen, until)


def elapsed(start: datetime, end: datetime) -> str:
    """How long from `start` to `end`, never negative: after the wall clock stepped back, the
    two may be out of order, and "-1h59m" helps nobody."""
    return format_duration(max(end - start, timedelta(0)))


def alerts_listing(states: Sequence[ClusterAlerts], *, hold: timedelta) -> Message:
    """`/kai alerts`: every active or pending alert and silence with its ID, per cluster."""
    blocks: list[Block] = []
    lines_text: list[Text] = []
    for state in states:
        lines = [_listing_line(a, hold) for a in _ordered(state.alerts.values())]
        if state.failures:
            error = truncate(" ".join(state.last_error.split()), 300)
            lines.append(
                f":warning: the last {state.failures} check(s) of {state.cluster} failed: "
                f"{escape(error)}"
            )
        if not lines:
            lines = [f"No active alerts or silences on {escape(state.cluster)}."]
        blocks.append(section(rich_join("\n", lines)))
        lines_text += lines
    count = sum(1 for s in states for a in s.alerts.values() if a.is_active)
    title = f"Alerts: {count} active"
    return fit_message(
        {"text": rich_join("\n", [title, *lines_text]), "blocks": [section(f"*{title}*"), *blocks]}
    )


def _ordered(alerts: Iterable[AlertState]) -> list[AlertState]:
    order = {Severity.CRITICAL: 0, Severity.WARNING: 1}
    return sorted(alerts, key=lambda a: (order[a.observation.severity], a.first_seen))


def _listing_line(alert: AlertState, hold: timedelta) -> Text:
    seen = alert.observation
    head = (
        f"{SEVERITY_ICONS[seen.severity]} `{alert.alert_id}` {escape(_where(alert))} · "
        f"{escape(what_fires(seen.key))}: {escape(seen.title)}"
    )
    if alert.phase is Phase.PENDING:
        at_once = seen.immediate or seen.waited_out
        fires_at = alert.first_seen + (timedelta(0) if at_once else hold)
        return f"{head} — pending: fires at {format_time(fires_at)} if it still holds"
    return rich_text(f"{head} — ", _describe_phase(alert))


def damaged_state_notice(cluster: str, reason: str, kept_at: str) -> str:
    """The loud notice that a state document could not be read and alerting starts afresh."""
    return (
        f":rotating_light: kai-chatops could not read its alert state for cluster "
        f"{escape(cluster)} ({escape(truncate(reason, 300))}). The unreadable document is kept "
        f"aside in {escape(kept_at)}. Alerting goes on from empty state: an alert still firing "
        "is posted again as a new incident, and the threads of earlier alerts are no longer "
        "updated."
    )


def command_done(alert: AlertState, what: str, *, duration: timedelta | None = None) -> Message:
    """`Silenced alert 3f9a2c for 2h (prod: ...); noted in its thread.`, for the asker only."""
    where = "; noted in its thread." if alert.has_thread else "."
    detail = f" for {format_duration(duration)}" if duration is not None else ""
    title = escape(alert.observation.title)
    source = "Alertmanager" if alert.key.is_alertmanager else alert.key.cluster
    text = f"{what} alert {alert.alert_id}{detail} ({source}: {title}){where}"
    return text_message(text)
