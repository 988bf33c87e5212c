"""The evidence around pods: recent Warning events, a redacted log tail, EndpointSlice readiness.

Pure: raw Events and EndpointSlices, log text and `now` in; `EventLine`s, lines and `Endpoints`
out. Log lines, Event messages and condition messages are redacted before anything else sees
them (`redact`): a token printed by a crashing container must not end up in a Slack channel.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime, timedelta

from bot.core import conditions
from bot.core.models import RawObject
from bot.core.redaction import redact
from bot.diagnostics.model import Endpoints, EventLine

EVENT_WINDOW = timedelta(hours=1)
MAX_EVENTS = 10
LOG_LINES = 20
MAX_LOG_LINE = 240


def log_tail(text: str, limit: int = LOG_LINES) -> tuple[str, ...]:
    """The last `limit` non-empty lines, redacted, each cut to a readable length."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()][-limit:]
    return tuple(_cut(redact(line)) for line in lines)


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LOG_LINE else line[: MAX_LOG_LINE - 1] + "…"


def event_time(event: RawObject) -> datetime | None:
    """When an event last happened: lastTimestamp, the series' last, eventTime, or creation."""
    series = conditions.as_mapping(event.get("series"))
    for value in (
        event.get("lastTimestamp"),
        series.get("lastObservedTime"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
    ):
        moment = conditions.parse_timestamp(value)
        if moment is not None:
            return moment
    return conditions.creation_time(event)


def recent_warnings(
    events: Iterable[RawObject],
    involved: Collection[tuple[str, str]],
    now: datetime,
    *,
    window: timedelta = EVENT_WINDOW,
    limit: int = MAX_EVENTS,
) -> tuple[EventLine, ...]:
    """Warning events about `involved` (kind, name) pairs from the last `window`, newest first."""
    lines = []
    for event in events:
        target = conditions.as_mapping(event.get("involvedObject") or event.get("regarding"))
        key = (conditions.as_text(target.get("kind")), conditions.as_text(target.get("name")))
        when = event_time(event)
        if conditions.as_text(event.get("type")) != "Warning" or key not in involved:
            continue
        if when is not None and now - when > window:
            continue
        count = conditions.as_int(event.get("count")) or conditions.as_int(
            conditions.as_mapping(event.get("series")).get("count")
        )
        lines.append(
            EventLine(
                kind=key[0],
                name=key[1],
                reason=conditions.as_text(event.get("reason")),
                message=redact(
                    conditions.as_text(event.get("message") or event.get("note")).strip()
                ),
                count=count or 1,
                last_seen=when,
            )
        )
    lines.sort(key=lambda e: e.last_seen or now, reverse=True)
    return tuple(lines[:limit])


def read_endpoints(service: str, slices: Iterable[RawObject]) -> Endpoints:
    """Ready and not-ready addresses over a Service's EndpointSlices.

    An endpoint whose `conditions.ready` is absent counts as ready, as the EndpointSlice API
    tells consumers to read an unknown state (discovery/v1 `EndpointConditions.ready`).
    """
    ready: list[str] = []
    not_ready: list[str] = []
    count = 0
    for endpoint_slice in slices:
        count += 1
        for endpoint in endpoint_slice.get("endpoints") or []:
            addresses = [str(a) for a in endpoint.get("addresses") or []]
            target = conditions.as_text(
                conditions.as_mapping(endpoint.get("targetRef")).get("name")
            )
            shown = [f"{a} ({target})" if target else a for a in addresses]
            is_ready = conditions.as_mapping(endpoint.get("conditions")).get("ready") is not False
            (ready if is_ready else not_ready).extend(shown)
    return Endpoints(service, tuple(ready), tuple(not_ready), count)
