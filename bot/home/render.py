"""How the Home tab looks: one `home` view within Slack's view limits (100 blocks, 250 kB).

Pure: Block Kit dicts built with `bot.slack.blocks`; every line from the cluster or a user is
escaped, and only user IDs we recorded become mentions. Each part has a block budget; what does
not fit is counted ("… 12 more"), never cut silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from bot.core import conditions
from bot.core.durations import format_duration
from bot.core.models import Health, HealthReport
from bot.core.rich import Rich, rich_text
from bot.home.model import (
    AlertLine,
    ApprovalLine,
    ChangeLine,
    ClusterStatus,
    HeldObject,
    Home,
    QueueMark,
)
from bot.slack.blocks import (
    ICONS,
    Block,
    Text,
    button,
    context,
    escape,
    fit_view,
    header,
    mention,
    neutralise_blocks,
    section,
)
from bot.slack.packing import pack_lines

REFRESH_ACTION = "kai_home_refresh"
RECENT_CHANGES = 10
# Sections per part, so the whole view stays within Slack's 100 blocks (`limits.MAX_VIEW_BLOCKS`):
# 3 blocks on top and, per part, a header and at most one "more" note (13 in all) leave 87.
_BUDGET = {"clusters": 45, "alerts": 15, "approvals": 3, "held": 17, "changes": 6}
# Bytes of JSON per part, so the whole view stays within Slack's 250 kB (`limits.MAX_VIEW_BYTES`;
# non-ASCII text counts six bytes a character, as sent): 230 kB, and the rest for the top.
_BYTES = {
    "clusters": 100_000,
    "alerts": 50_000,
    "approvals": 10_000,
    "held": 40_000,
    "changes": 30_000,
}
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,}")
_STATE_ICONS = {
    "firing": ":rotating_light:",
    "acknowledged": ":eyes:",
    "silenced": ":no_bell:",
}
_HELD_ICONS = {"paused": ":double_vertical_bar:", "suspended": ":double_vertical_bar:"}
_OUTCOME_ICONS = {"ok": ":white_check_mark:", "done": ":white_check_mark:"}
_QUEUE_ICONS = {"starved": ":hourglass_flowing_sand:", "over quota": ":arrow_double_up:"}
QUEUE_LEGEND = (
    f"{_QUEUE_ICONS['starved']} starved: a KAI queue below its GPU quota with a PodGroup pending "
    f"longer than `alerts.starved_after` · {_QUEUE_ICONS['over quota']} over quota: more GPUs "
    "allocated than its quota"
)


def home_view(home: Home, command: str) -> dict[str, object]:
    """The Home tab: clusters, active alerts, what is paused or suspended, the last changes."""
    blocks: list[Block] = [
        header("kai-chatops"),
        context(f"As of {shown_time(home.now)} · `{escape(command)} help` lists the commands"),
        {"type": "actions", "elements": [button("Refresh", REFRESH_ACTION, "refresh")]},
    ]
    blocks += _part("Clusters", _cluster_lines(home.clusters), "clusters", "No cluster")
    blocks += _part(
        f"Active alerts ({len(home.alerts)})",
        _error_lines(home.alerts_error) + [_alert_line(a, home.now) for a in home.alerts],
        "alerts",
        "No active alerts.",
    )
    waiting = _error_lines(home.approvals_error) + [
        _approval_line(a, command) for a in home.approvals
    ]
    if waiting:  # only where access.approval is set and something waits
        blocks += _part(f"Waiting for approval ({len(home.approvals)})", waiting, "approvals", "")
    held_errors = [line for error in home.held_errors for line in _error_lines(error)]
    blocks += _part(
        "Paused and suspended",
        [*held_errors, *(_held_line(h) for h in home.held)],
        "held",
        "Nothing paused or suspended.",
    )
    blocks += _part(
        "Recent changes",
        _error_lines(home.changes_error) + [_change_line(ch) for ch in home.changes],
        "changes",
        "No changes made through kai-chatops yet.",
    )
    return fit_view({"type": "home", "blocks": neutralise_blocks(blocks)})


def not_allowed_view(message: str) -> dict[str, object]:
    """The Home tab of someone who may not look (not in `access.viewers`)."""
    return {
        "type": "home",
        "blocks": neutralise_blocks(
            [header("kai-chatops"), section(f":no_entry: {escape(message)}")]
        ),
    }


def _part(title: str, lines: Sequence[Text], budget: str, empty: str) -> list[Block]:
    if not lines:
        return [header(title), context(escape(empty))]
    sections, placed = pack_lines(lines, _BUDGET[budget], _BYTES[budget])
    blocks = [header(title), *sections]
    if placed < len(lines):
        blocks.append(context(f"… {len(lines) - placed} more not shown here"))
    return blocks


def _cluster_lines(clusters: Sequence[ClusterStatus]) -> list[str]:
    lines = []
    for status in clusters:
        name = f"*{escape(status.cluster)}*"
        if status.report is None:
            lines.append(f"{ICONS[Health.UNKNOWN]} {name}: could not check: {escape(status.error)}")
        else:
            lines += _report_lines(name, status.report)
        lines += [_queue_line(mark) for mark in status.queues]
        if status.queues_error:
            lines.append(f"      :warning: KAI queues: {escape(status.queues_error)}")
    if any(status.queues for status in clusters):
        lines.append(QUEUE_LEGEND)
    return lines


def _queue_line(mark: QueueMark) -> str:
    head = f"      {_QUEUE_ICONS[mark.mark]} queue {escape(mark.name)} *{mark.mark}*"
    numbers = f"{escape(mark.allocated)} of {escape(mark.quota)} GPUs (quota) allocated"
    waiting = f", {escape(mark.waiting)} waiting" if mark.waiting else ""
    return f"{head}: {numbers}{waiting}"


def _report_lines(name: str, report: HealthReport) -> list[str]:
    verdict = report.verdict
    problems = report.problems
    count = f" · {len(problems)} finding{'s' if len(problems) != 1 else ''} not Healthy"
    head = f"{ICONS[verdict]} {name}: {verdict.value}" + (count if problems else "")
    found = [
        f"      {ICONS[f.health]} {escape(f.subject)}: {f.health.value} — {escape(f.summary)}"
        for f in problems
    ]
    return [head, *found]


def _alert_line(alert: AlertLine, now: datetime) -> Text:
    icon = ":red_circle:" if alert.critical else ":large_orange_circle:"
    head = (
        f"{icon} `{escape(alert.alert_id)}` {escape(alert.cluster)} · "
        f"{escape(alert.subject)}: {escape(alert.title)}"
    )
    fired = f" for {age(alert.since, now)}" if alert.since is not None else ""
    state = f"{_STATE_ICONS[alert.state]} {alert.state}"
    if alert.state == "firing":
        return f"{head} — {state}{fired}"
    owner = rich_text(" by ", person(alert.by))
    if alert.state == "silenced" and alert.until is not None:
        owner += f" until {shown_time(alert.until)}"
    reason = f": {escape(alert.reason)}" if alert.reason else ""
    return rich_text(f"{head} — {state}", owner, f"{reason} (fired {age(alert.since, now)} ago)")


def _held_line(held: HeldObject) -> Text:
    where = f"*{escape(held.kind)} {escape(held.namespace)}/{escape(held.name)}* on "
    where += escape(held.cluster)
    what = f"{held.what} ({escape(held.how)})" if held.how else held.what
    if not held.by:
        return f"{_HELD_ICONS[held.what]} {where} — {what} by hand (no kai-chatops record)"
    text = rich_text(f"{_HELD_ICONS[held.what]} {where} — {what} by ", person(held.by))
    if held.at:
        text += f" at {escape(record_time(held.at))}"
    text += f", until {escape(record_time(held.until))}" if held.until else ", until resumed"
    return text + (f": {escape(held.reason)}" if held.reason else "")


def _approval_line(waiting: ApprovalLine, command: str) -> Text:
    return rich_text(
        f":lock: `{escape(waiting.change_id)}` · ",
        person(waiting.requested_by),
        f" asked to {escape(waiting.what)} · `{escape(command)} approve "
        f"{escape(waiting.change_id)}` by {shown_time(waiting.expires_at)}",
    )


def _change_line(change: ChangeLine) -> Text:
    icon = _OUTCOME_ICONS.get(change.outcome, ":warning:")
    text = rich_text(
        f"{icon} {shown_time(change.at)} · ",
        person(change.user.removeprefix("slack:")),
        f" {escape(change.action)} {escape(change.target)}: ",
        escape(change.note or change.outcome),
    )
    return text + (f" — {escape(change.reason)}" if change.reason else "")


def _error_lines(error: str) -> list[str]:
    return [f":warning: {escape(error)}"] if error else []


def person(user: str) -> Rich:
    """A mention for a user ID; anything else (written by hand on an object) as escaped text."""
    return mention(user) if _USER_ID.fullmatch(user) else rich_text(escape(user))


def shown_time(moment: datetime) -> str:
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def record_time(text: str) -> str:
    moment = conditions.parse_timestamp(text)
    return shown_time(moment) if moment is not None else text


def age(since: datetime | None, now: datetime) -> str:
    """`2h5m`, to the minute (at least 1m); `?` when unknown."""
    return "?" if since is None else format_duration(now - since, "minute")
