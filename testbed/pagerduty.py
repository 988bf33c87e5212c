"""A stand-in for PagerDuty's Events API v2 on 127.0.0.1, as PagerDuty publishes it, with
faults a test can inject. `PAGERDUTY_API_URL` points the service at it.

What it follows (PagerDuty/developer-docs/docs/events-API-v2/02-Trigger-Events.md, and
01-Overview.md and 05-Rate-Limits.md beside it):
- `POST /v2/enqueue`, a JSON event: `routing_key` (32 characters), `event_action` (trigger,
  acknowledge, resolve), `dedup_key` (at most 255 characters; a trigger without one gets a new
  one), and for a trigger `payload.summary` (at most 1024), `payload.source`,
  `payload.severity` (critical, error, warning, info);
- 202 `{"status": "success", "message": "Event processed", "dedup_key": ...}`; 400
  `{"status": "invalid event", "message": "Event object is invalid", "errors": [...]}` (the
  documented example's shape; the words of each error but the routing key's are ours); 429
  above `rate_limit` events a minute per routing key (about 120, the docs say), not ingested;
- de-duplication: events of a `dedup_key` apply to the open alert of that key and routing key;
  a trigger of an open alert is one more log entry of it (no new alert); acknowledge and resolve
  without an open alert are dropped; a trigger after the resolution opens a new alert.
Faults (`fail_next`, `drop_next_after_applying`, `outage`): an answer of the test's choosing
without ingesting the event, or the event ingested and the connection closed unanswered.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

HOST = "127.0.0.1"
ACTIONS = ("trigger", "acknowledge", "resolve")
SEVERITIES = ("critical", "error", "warning", "info")
OPEN = ("triggered", "acknowledged")
STATUS_OF = {"trigger": "triggered", "acknowledge": "acknowledged", "resolve": "resolved"}


@dataclass
class Alert:
    """PagerDuty's alert of one `dedup_key`: its status, every status it went through, and the
    log entry of every event applied to it."""

    routing_key: str
    dedup_key: str
    summary: str
    links: list[dict[str, Any]]
    statuses: list[str] = field(default_factory=lambda: ["triggered"])
    log: list[str] = field(default_factory=lambda: ["trigger"])

    @property
    def status(self) -> str:
        return self.statuses[-1]


@dataclass(frozen=True)
class Received:
    """One request to `/v2/enqueue`: its event, the status answered (0: dropped unanswered),
    and whether it was ingested."""

    event: dict[str, Any] | None
    status: int
    ingested: bool

    @property
    def action(self) -> str:
        return str((self.event or {}).get("event_action", ""))


@dataclass(frozen=True)
class Fault:
    """What the next request meets: `status` answered without ingesting it, or (`drop`) the
    event ingested and the connection closed unanswered."""

    status: int = 0
    drop: bool = False


class PagerDutyStandIn:
    """The stand-in server; `url` is what `PAGERDUTY_API_URL` names."""

    def __init__(
        self, *, rate_limit: int = 120, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate_limit = rate_limit
        self.received: list[Received] = []
        self.alerts: list[Alert] = []
        self.outage = 0  # a status every request gets while set (a 5xx outage), 0: none
        # Called with each request as it is recorded (a test notes what else had happened).
        self.observer: Callable[[Received], None] | None = None
        self._faults: deque[Fault] = deque()
        self._sent: dict[str, deque[float]] = {}  # routing key -> when its events came
        self._monotonic = monotonic
        self._runner: web.AppRunner | None = None
        self._port = 0

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self._port}"

    async def start(self) -> None:
        """Serve on 127.0.0.1 on a free port (see `url`)."""
        app = web.Application()
        app.router.add_post("/v2/enqueue", self._enqueue)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, HOST, 0).start()
        self._port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def fail_next(self, status: int, times: int = 1) -> None:
        """The next `times` requests are answered `status` (429, 500, ...) and not ingested."""
        self._faults.extend(Fault(status=status) for _ in range(times))

    def drop_next_after_applying(self, times: int = 1) -> None:
        """The next `times` events are ingested, then their connection closed unanswered."""
        self._faults.extend(Fault(drop=True) for _ in range(times))

    def ingested(self) -> list[Received]:
        return [r for r in self.received if r.ingested]

    def alerts_of(self, dedup_key: str) -> list[Alert]:
        return [a for a in self.alerts if a.dedup_key == dedup_key]

    async def _enqueue(self, request: web.Request) -> web.StreamResponse:
        fault = self._faults.popleft() if self._faults else None
        if fault is None and self.outage:
            fault = Fault(status=self.outage)
        event, errors = _parsed(await request.read())
        if fault is not None and not fault.drop:
            self._record(Received(event, fault.status, ingested=False))
            return web.json_response({"status": "error"}, status=fault.status)
        if errors or event is None:
            self._record(Received(event, 400, ingested=False))
            body = {"status": "invalid event", "message": "Event object is invalid"}
            return web.json_response({**body, "errors": errors}, status=400)
        if self._over_limit(str(event["routing_key"])):
            self._record(Received(event, 429, ingested=False))
            return web.Response(status=429)
        dedup_key = self._apply(event)
        if fault is not None and request.transport is not None:
            self._record(Received(event, 0, ingested=True))
            request.transport.abort()  # applied, and the answer never leaves
            return web.Response(status=202)
        self._record(Received(event, 202, ingested=True))
        answer = {"status": "success", "message": "Event processed", "dedup_key": dedup_key}
        return web.json_response(answer, status=202)

    def _record(self, received: Received) -> None:
        self.received.append(received)
        if self.observer is not None:
            self.observer(received)

    def _over_limit(self, routing_key: str) -> bool:
        """Above `rate_limit` events in the last 60 s for this key (the docs' window)."""
        now = self._monotonic()
        times = self._sent.setdefault(routing_key, deque())
        while times and now - times[0] >= 60:
            times.popleft()
        if len(times) >= self.rate_limit:
            return True
        times.append(now)
        return False

    def _apply(self, event: dict[str, Any]) -> str:
        """PagerDuty's de-duplication: the event applied to the open alert of its key."""
        key, action = str(event["routing_key"]), str(event["event_action"])
        dedup_key = str(event.get("dedup_key") or uuid.uuid4())
        alert = next(
            (
                a
                for a in reversed(self.alerts)
                if a.dedup_key == dedup_key and a.routing_key == key and a.status in OPEN
            ),
            None,
        )
        if alert is None and action == "trigger":
            summary = str(event["payload"]["summary"])
            self.alerts.append(Alert(key, dedup_key, summary, list(event.get("links") or [])))
        elif alert is not None:  # acknowledge or resolve without an open alert: dropped
            alert.log.append(action)
            if action != "trigger" and alert.status != STATUS_OF[action]:
                alert.statuses.append(STATUS_OF[action])
        return dedup_key


def _parsed(raw: bytes) -> tuple[dict[str, Any] | None, list[str]]:
    """The event and what makes it invalid (empty: valid)."""
    try:
        event = json.loads(raw)
    except ValueError:
        return None, ["Event object is not valid JSON"]
    if not isinstance(event, dict):
        return None, ["Event object is not a JSON object"]
    return event, _problems(event)


def _problems(event: dict[str, Any]) -> list[str]:
    problems = []
    if len(str(event.get("routing_key") or "")) != 32:
        problems.append("Length of 'routing_key' is incorrect (should be 32 characters)")
    action = event.get("event_action")
    if action not in ACTIONS:
        problems.append("'event_action' is invalid (expected trigger, acknowledge or resolve)")
    dedup_key = event.get("dedup_key")
    if dedup_key is not None and (not isinstance(dedup_key, str) or len(dedup_key) > 255):
        problems.append("'dedup_key' is invalid (a string of at most 255 characters)")
    if action in ("acknowledge", "resolve") and not dedup_key:
        problems.append(f"'dedup_key' is required to {action}")
    if action == "trigger":
        problems += _payload_problems(event.get("payload"))
    return problems


def _payload_problems(payload: object) -> list[str]:
    if not isinstance(payload, dict):
        return ["'payload' is missing or not an object"]
    problems = []
    summary = payload.get("summary")
    if not isinstance(summary, str) or not summary.strip() or len(summary) > 1024:
        problems.append("'payload.summary' is required, at most 1024 characters")
    if not isinstance(payload.get("source"), str) or not payload["source"].strip():
        problems.append("'payload.source' is required")
    if payload.get("severity") not in SEVERITIES:
        problems.append("'payload.severity' is invalid (critical, error, warning or info)")
    return problems


@asynccontextmanager
async def running_standin(**options: Any) -> AsyncIterator[PagerDutyStandIn]:
    """A `PagerDutyStandIn(**options)` serving until the block ends."""
    standin = PagerDutyStandIn(**options)
    await standin.start()
    try:
        yield standin
    finally:
        await standin.stop()
