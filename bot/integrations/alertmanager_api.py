"""Alertmanager's API v2, for silences made and ended from Slack (docs/alertmanager.md).

`POST /api/v2/silences` with a `postableSilence` (equality matchers `name`, `value`,
`isRegex: false`, `isEqual: true`; `startsAt`, `endsAt`, `createdBy`, `comment`; `id` to replace
one) answers `{"silenceID": ...}`; `DELETE /api/v2/silence/{silenceID}` expires one (404: not
found). Both as api/v2/openapi.yaml of github.com/prometheus/alertmanager v0.35.0 defines them.
An Alertmanager that does not answer, or refuses, is a `UserError` whose words say so: the
person who pressed Silence reads it, and nothing is recorded as silenced.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import aiohttp

from bot.alerts.model import AlertState
from bot.core import errors
from bot.core.redaction import redact

TIMEOUT = aiohttp.ClientTimeout(total=10)
_ANSWER_CHARS = 200  # of Alertmanager's own words in a refusal


def matchers(alert: AlertState) -> list[dict[str, Any]]:
    """The group's common labels (`name=value`) as equality matchers."""
    pairs = (label.partition("=") for label in alert.labels)
    return [{"name": n, "value": v, "isRegex": False, "isEqual": True} for n, _, v in pairs]


def silence_body(
    alert: AlertState, user: str, until: datetime, reason: str, now: datetime
) -> dict[str, Any]:
    """The `postableSilence` for `alert`'s group, by `user`, from `now` to `until`."""
    comment = reason or "Silenced from Slack"
    body: dict[str, Any] = {
        "matchers": matchers(alert),
        "startsAt": now.isoformat(),
        "endsAt": until.isoformat(),
        "createdBy": user,
        "comment": f"{comment} (kai-chatops alert {alert.alert_id})",
    }
    if alert.silence_id:
        body["id"] = alert.silence_id  # a new silence replaces the one made before
    return body


class AlertmanagerSilences:
    """`bot.alerts.usecase_external.ExternalSilences` over Alertmanager's API v2 at `url`."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    async def silence(
        self, alert: AlertState, user: str, until: datetime, reason: str, now: datetime
    ) -> str:
        if not alert.labels:
            raise errors.UserError(
                "This Alertmanager group has no label common to its alerts: a silence of it "
                "would match every alert. Silence it in Alertmanager instead."
            )
        body = silence_body(alert, user, until, reason, now)
        status, text = await self._call("POST", "/api/v2/silences", body, "nothing was silenced")
        if status == 404 and "id" in body:  # the one made before is gone: make a new one
            del body["id"]
            status, text = await self._call(
                "POST", "/api/v2/silences", body, "nothing was silenced"
            )
        if status == 200:
            try:
                return str(json.loads(text)["silenceID"])
            except (ValueError, KeyError, TypeError):
                pass
        raise self._refused(status, text, "nothing was silenced")

    async def expire(self, silence_id: str) -> None:
        path = f"/api/v2/silence/{silence_id}"
        status, text = await self._call("DELETE", path, None, "the silence is still in force")
        if status not in (200, 404):  # 404: expired or deleted already
            raise self._refused(status, text, "the silence is still in force")

    async def _call(
        self, method: str, path: str, body: dict[str, Any] | None, outcome: str
    ) -> tuple[int, str]:
        try:
            async with (
                aiohttp.ClientSession(timeout=TIMEOUT) as session,
                session.request(method, self.url + path, json=body) as answer,
            ):
                return answer.status, await answer.text()
        except (aiohttp.ClientError, TimeoutError, OSError) as e:
            reason = type(e).__name__ if isinstance(e, TimeoutError) else str(e) or type(e).__name__
            raise errors.UserError(
                f"Alertmanager at {self.url} did not answer ({redact(reason)}): {outcome}. "
                "Try again once it is back."
            ) from None

    def _refused(self, status: int, text: str, outcome: str) -> errors.UserError:
        said = " ".join(redact(text).split())[:_ANSWER_CHARS]
        return errors.UserError(
            f"Alertmanager at {self.url} refused ({status}: {said}): {outcome}."
        )
