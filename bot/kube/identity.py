"""Whose identity a write is sent as (`access.impersonate`): a value, pure.

A change a person asked for can be sent with Kubernetes' impersonation headers, so the
cluster's RBAC decides and its audit log names the person. The headers are those of
k8s.io/apiserver pkg/endpoints/filters/impersonation (`Impersonate-User`, one
`Impersonate-Group` line per group, `Impersonate-Extra-<key>` with the key percent-encoded), as
client-go's transport (k8s.io/client-go transport/round_trippers.go `impersonatingRoundTripper`)
sends them.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from urllib.parse import quote

# The extra attribute every impersonated write carries: the Slack user it was made for. The
# admission policy (deploy/base/admission-policy.yaml) fences requests that carry it just as it
# fences the bot's own, since an impersonated request's user is the person, not the bot.
SLACK_USER_EXTRA = "kai-chatops/slack-user"
# The group prefix of Slack user groups, and the user prefix of `access.impersonate: id`.
SLACK_PREFIX = "slack:"


@dataclass(frozen=True)
class Impersonation:
    """The Kubernetes user and groups a write is sent as, on behalf of one Slack user."""

    user: str
    groups: tuple[str, ...]
    slack_user: str

    def headers(self) -> list[tuple[str, str]]:
        """The request headers, in order; a header name may repeat (one line per group)."""
        lines = [("Impersonate-User", self.user)]
        lines += [("Impersonate-Group", group) for group in self.groups]
        key = quote(SLACK_USER_EXTRA, safe="")
        return [*lines, (f"Impersonate-Extra-{key}", self.slack_user)]

    def unsendable(self) -> tuple[str, str] | None:
        """The first header (name, value) whose value no HTTP header carries as Kubernetes
        reads it (`is_sendable`), or None: such a change is refused, never sent."""
        for name, value in self.headers():
            if not is_sendable(value):
                return name, value
        return None

    def audit_details(self, impersonator: str) -> dict[str, str]:
        """The audit line's account of a change sent as this person: the Kubernetes user and
        groups, and who sent it (the bot's own Kubernetes identity, when it can tell)."""
        return {
            "kubernetes_user": self.user,
            "kubernetes_groups": ",".join(self.groups),
            "impersonated_by": impersonator or "kai-chatops (its own credentials)",
        }

    def describe(self) -> str:
        """`alice@example.com (groups slack:oncall, slack:gpu)`, for messages and the log."""
        if not self.groups:
            return f"{self.user} (no groups)"
        return f"{self.user} (groups {', '.join(self.groups)})"


def is_sendable(value: str) -> bool:
    """Whether `value` goes in an impersonation header byte for byte as the API server reads
    it: printable ASCII, not empty, no space at either end. A control character, CR or LF is
    refused by every HTTP client (Python's http.client raises; Go's net/http, which client-go
    sends through, fails the request); a letter beyond ASCII is sent as Latin-1 by Python's
    (and beyond Latin-1 not at all: UnicodeEncodeError) but as UTF-8 by client-go
    (transport/round_trippers.go `impersonatingRoundTripper` sets it as it is), and the API
    server takes the bytes as they come, so the name would differ from the one RBAC binds;
    HTTP strips spaces at the ends."""
    return bool(value) and value.isascii() and value.isprintable() and value == value.strip()


def token_subject(bearer: str) -> str:
    """Whom a bearer token authenticates as, when it says so itself: the `sub` claim of a
    ServiceAccount token (a JWT: `system:serviceaccount:NAMESPACE:NAME`); "" for any other
    token. Read, never verified: it only names the bot in its own audit line."""
    parts = bearer.split(".")  # the scheme word, if any, rides in the header part, unread
    if len(parts) != 3:
        return ""
    try:
        payload = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        claims = json.loads(payload)
    except (binascii.Error, ValueError):
        return ""
    subject = claims.get("sub") if isinstance(claims, dict) else None
    return subject if isinstance(subject, str) else ""
