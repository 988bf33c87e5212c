"""The project's error tree; the only exceptions other modules raise on purpose.

BotError
├── UserError          expected; shown to the user as a short message, no traceback
│   ├── BadCommand     malformed command (carries the usage text)
│   ├── NotAllowed     the user may not do this
│   └── ObjectMissing  the object a command names does not exist (carries which, for a hint)
├── ConfigError        invalid configuration (one problem per line)
└── KubeError          the cluster said no or could not be reached
    ├── KubeNotFound
    ├── KubeForbidden  RBAC: names the verb and resource that are missing
    ├── KubeConflict   stale resourceVersion
    ├── KubeInvalid    400/422: the request itself was wrong
    └── KubeUnavailable  connection refused, timeout, 429/5xx after retries
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from bot.core.rich import Rich


class BotError(Exception):
    """Base of every error this project raises on purpose."""


class UserError(BotError):
    """Something the user can fix; the message is shown as it is. A message that mentions
    someone is a `Rich` (kept as `rich`, shown with live mentions; `str()` reads `@ID`)."""

    def __init__(self, message: str | Rich = "") -> None:
        super().__init__(str(message))
        self.rich = message if isinstance(message, Rich) else None


class BadCommand(UserError):
    """A command that does not parse; `usage` is the help for that subcommand."""

    def __init__(self, message: str, usage: str = "") -> None:
        super().__init__(message)
        self.usage = usage


class NotAllowed(UserError):
    """The user is not allowed to do what was asked."""


class ObjectMissing(UserError):
    """The object a command names does not exist; `kind`, `namespace`, `name` say which, so the
    reply can point at objects of that name in other kinds or namespaces."""

    def __init__(self, message: str, kind: str, namespace: str, name: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.namespace = namespace
        self.name = name


class ConfigError(BotError):
    """An invalid configuration file: `problems` holds one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class KubeError(BotError):
    """The Kubernetes API refused the call or could not be reached.

    `details`: what the audit line of the action adds (the identity a write was sent as).
    """

    temporary = False
    details: Mapping[str, str] = MappingProxyType({})


class KubeNotFound(KubeError):
    """The object (or its resource type) does not exist."""


class KubeForbidden(KubeError):
    """RBAC forbids the call; the message names the missing verb and resource."""


class KubeConflict(KubeError):
    """The object changed since it was read (stale resourceVersion)."""


class KubeInvalid(KubeError):
    """The API server rejected the request as malformed (400, 422)."""


class KubeExpired(KubeError):
    """410 Expired: a list's continue token (or a watch's resourceVersion) was compacted away."""


class KubeUnavailable(KubeError):
    """The API server could not be reached or kept failing (connection, timeout, 429, 5xx)."""

    temporary = True


class KubeWriteUnknown(KubeUnavailable):
    """A write whose answer never came (a timeout, a 5xx): it may or may not have been applied."""
