"""PagerDuty's Events API v2 as PagerDuty publishes it: the event an incident's owed action is
sent as, what an answer means, and the environment that names the integration. Pure.

Upstream, PagerDuty's published docs (repository PagerDuty/developer-docs):
PagerDuty/developer-docs/docs/events-API-v2/02-Trigger-Events.md (`POST /v2/enqueue`;
`routing_key` the 32-character integration key; `event_action` trigger, acknowledge or
resolve; `dedup_key` at most 255 characters, later events of the same key apply to the open
alert; `payload.summary` at most 1024 characters, `source` and `severity` required for a
trigger; `links`), PagerDuty/developer-docs/docs/events-API-v2/01-Overview.md ("Response Codes
& Retry Logic": 202 accepted; 400 not to be retried; 429, 5xx and network errors retried after
some time), PagerDuty/developer-docs/docs/events-API-v2/05-Rate-Limits.md (about 120 events a
minute per integration key; a 429 is not ingested).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.alerts.model import AlertState, PageAction
from bot.core import errors
from bot.core.redaction import redact

DEFAULT_API_URL = "https://events.pagerduty.com"
ENQUEUE_PATH = "/v2/enqueue"
SUMMARY_MAX = 1024
DETAIL_MAX = 2000  # a message kept in custom_details (PagerDuty takes 512 KB; a page needs less)
ROUTING_KEY_LENGTH = 32
SLACK_URL = "https://slack.com/"  # the link's base when the workspace's own is not known


class Outcome(enum.Enum):
    """What PagerDuty's answer means for the event owed."""

    ACCEPTED = "accepted"  # 202: taken; owed no more
    REFUSED = "refused"  # 400: invalid, and so it stays: given up, said loudly
    RETRY = "retry"  # 429, 5xx, any other answer or none: not taken (or not known): again later


def outcome(status: int | None) -> Outcome:
    """The meaning of HTTP `status` (None: no answer came). An answer the docs do not list
    (401, 403, 404: a wrong URL or key) is retried: paging goes on once it is fixed."""
    if status == 202:
        return Outcome.ACCEPTED
    if status == 400:
        return Outcome.REFUSED
    return Outcome.RETRY


def event(alert: AlertState, action: PageAction, routing_key: str, link: str) -> dict[str, Any]:
    """The Events API v2 body of `action` for `alert`: its `dedup_key` is the incident's ID
    (a refiring is a new incident, so a new PagerDuty alert); a trigger carries the title as
    summary and the link to the Slack thread. Text from the cluster is redacted."""
    body: dict[str, Any] = {
        "routing_key": routing_key,
        "event_action": action.value,
        "dedup_key": alert.incident,
    }
    if action is PageAction.TRIGGER:
        body["payload"] = _payload(alert)
        body["links"] = [{"href": link, "text": "Slack thread"}]
        body["client"] = "kai-chatops"
        body["client_url"] = link
    return body


def _payload(alert: AlertState) -> dict[str, Any]:
    seen = alert.observation
    fired = alert.firing_since or alert.first_seen
    details = {"alert_id": alert.alert_id, "where": alert.where, "reason": redact(seen.reason)}
    details["message"] = redact(seen.message)[:DETAIL_MAX]
    return {
        "summary": redact(seen.title)[:SUMMARY_MAX] or alert.key.subject,
        "source": alert.where,
        "severity": seen.severity.value,  # critical and warning are PagerDuty's words too
        "timestamp": fired.isoformat(),
        "component": alert.key.subject,
        "class": alert.key.condition,
        "custom_details": details,
    }


def thread_link(workspace_url: str, channel: str, ts: str) -> str:
    """Slack's permalink shape, `https://<workspace>.slack.com/archives/<channel>/p<ts without
    the dot>` (the channel alone while the root has no ts yet)."""
    base = workspace_url if workspace_url.endswith("/") else f"{workspace_url}/"
    if not ts:
        return f"{base}archives/{channel}"
    return f"{base}archives/{channel}/p{ts.replace('.', '')}"


@dataclass(frozen=True)
class PagerDutyEnv:
    """`PAGERDUTY_ROUTING_KEY` and `PAGERDUTY_API_URL` (docs/design.md §1.2)."""

    routing_key: str
    api_url: str = DEFAULT_API_URL

    @property
    def enqueue_url(self) -> str:
        base = self.api_url.rstrip("/")
        return base if base.endswith(ENQUEUE_PATH) else f"{base}{ENQUEUE_PATH}"

    @classmethod
    def from_environ(cls, env: Mapping[str, str]) -> PagerDutyEnv:
        """Read the PAGERDUTY_* variables (with `pagerduty` configured); every problem at once.

        Raises:
            ConfigError: one line per problem.
        """
        key = env.get("PAGERDUTY_ROUTING_KEY", "").strip()
        url = env.get("PAGERDUTY_API_URL", "").strip() or DEFAULT_API_URL
        problems = []
        if not key:
            problems.append(
                "PAGERDUTY_ROUTING_KEY: missing; pagerduty is configured, so it needs the "
                "integration key of an Events API v2 integration (32 characters)"
            )
        elif len(key) != ROUTING_KEY_LENGTH:
            problems.append(
                f"PAGERDUTY_ROUTING_KEY: {len(key)} characters (expected the 32-character "
                "integration key of an Events API v2 integration)"
            )
        if not url.startswith(("http://", "https://")):
            problems.append(
                f"PAGERDUTY_API_URL: {url[:60]!r} is not an http(s) URL "
                f"(expected a base URL like {DEFAULT_API_URL})"
            )
        if problems:
            raise errors.ConfigError(problems)
        return cls(key, url)
