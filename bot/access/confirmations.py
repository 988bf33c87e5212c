"""Confirm/Cancel for changes: what was asked, sealed into the button, valid 5 minutes, used once.

Pure. The request travels inside the button's value, signed with HMAC-SHA256, so any replica can
check a click, and nobody can forge or edit one; the clicking user is authorised again when it is
used. That it is used once is remembered by `bot.access.once`, under `once_key`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot.core import errors

LIFETIME = timedelta(minutes=5)


@dataclass(frozen=True)
class AskedChange:
    """A change waiting for its Confirm click."""

    action: str  # e.g. "pause", "resume", "sync"
    params: Mapping[str, str]
    requested_by: str
    channel_id: str
    expires_at: datetime
    nonce: str = field(default_factory=lambda: secrets.token_hex(8))


def new_pending(
    action: str, params: Mapping[str, str], *, user_id: str, channel_id: str, now: datetime
) -> AskedChange:
    return AskedChange(action, dict(params), user_id, channel_id, now + LIFETIME)


def seal(pending: AskedChange, key: bytes) -> str:
    """The button value carrying `pending`, signed so it cannot be forged or altered."""
    body = {
        "a": pending.action,
        "p": dict(pending.params),
        "u": pending.requested_by,
        "c": pending.channel_id,
        "e": pending.expires_at.isoformat(),
        "n": pending.nonce,
    }
    payload = base64.urlsafe_b64encode(json.dumps(body, separators=(",", ":")).encode()).decode()
    return f"{payload}.{_sign(payload, key)}"


def unseal(value: str, key: bytes, now: datetime) -> AskedChange:
    """The pending change in a button value.

    Raises:
        UserError: the value was not made by us, or the confirmation has expired.
    """
    payload, _, signature = value.rpartition(".")
    if not payload or not hmac.compare_digest(signature, _sign(payload, key)):
        raise errors.UserError("This confirmation is not valid; nothing was changed.")
    body = json.loads(base64.urlsafe_b64decode(payload.encode()))
    pending = AskedChange(
        body["a"], body["p"], body["u"], body["c"], datetime.fromisoformat(body["e"]), body["n"]
    )
    if now >= pending.expires_at:
        raise errors.UserError(
            "This confirmation has expired (they last 5 minutes); nothing was changed. "
            "Run the command again."
        )
    return pending


def _sign(payload: str, key: bytes) -> str:
    return hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()[:32]


def derive_key(secret: str) -> bytes:
    """A key of its own for confirmations, derived from a Slack secret of the service."""
    return hmac.new(secret.encode(), b"kai-chatops confirmations", hashlib.sha256).digest()


def once_key(pending: AskedChange) -> str:
    """The key under which a confirmation's single use is remembered, until it expires."""
    return f"confirm-{pending.nonce}"
