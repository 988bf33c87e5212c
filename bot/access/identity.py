"""Whom a person's change is sent as in Kubernetes (`access.impersonate`).

`none`: the bot's own identity (no impersonation). `email`: `Impersonate-User` is the address
Slack's `users.info` gives (`user.profile.email`, only with the `users:read.email` scope).
`id`: `slack:<user ID>`. Either way `Impersonate-Group` is `slack:<handle>` for each Slack user
group the person is in. A value no HTTP header carries as Kubernetes reads it (beyond ASCII, a
control character, CR or LF: `bot.kube.identity.is_sendable`) refuses the change, naming it.
The operator check before a change stays the bot's own; this only decides the identity the
cluster's RBAC then judges. A person whose identity cannot be told is
refused: a change never falls back to the bot's own rights.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, Protocol

from bot.core import errors
from bot.kube.identity import SLACK_PREFIX, Impersonation
from bot.slack.gateway import Email, SlackUnavailable

Mode = Literal["none", "email", "id"]
REFUSED = "nothing was changed"


class People(Protocol):
    """What Slack tells about a member (`bot.slack.gateway.SlackGateway`)."""

    async def email_of(self, user_id: str) -> Email: ...

    async def handles_of(self, user_id: str) -> tuple[str, ...]: ...


def impersonation(
    mode: Mode, user_id: str, email: Email | None, handles: Iterable[str]
) -> Impersonation | None:
    """The identity for `mode` (None for `none`), from what Slack said; pure.

    Raises:
        NotAllowed: `email` mode and no address (the scope is missing, or the profile has none).
    """
    if mode == "none":
        return None
    groups = tuple(f"{SLACK_PREFIX}{handle}" for handle in sorted(set(handles)))
    if mode == "id":
        return _sendable(Impersonation(f"{SLACK_PREFIX}{user_id}", groups, user_id))
    if email is None or email.scope_missing:
        raise errors.NotAllowed(
            "Changes here are made as you in Kubernetes, by your email (access.impersonate: "
            "email), but this Slack app may not read emails: it lacks the users:read.email "
            f"scope. Add it to the app and reinstall it; {REFUSED}."
        )
    if not email.address:
        raise errors.NotAllowed(
            "Changes here are made as you in Kubernetes, by your email (access.impersonate: "
            "email), but Slack has no email for your account (a bot or a guest without "
            f"one?); {REFUSED}."
        )
    return _sendable(Impersonation(email.address, groups, user_id))


def _sendable(person: Impersonation) -> Impersonation:
    """`person`, unless a value of theirs cannot be sent in an HTTP header.

    Raises:
        NotAllowed: naming the user group or address, and why.
    """
    found = person.unsendable()
    if found is None:
        return person
    header, value = found
    if header == "Impersonate-Group":
        what = f"your Slack user group {value.removeprefix(SLACK_PREFIX)!r}"
        sent_as, fix = "a Kubernetes group", "A workspace admin can rename its handle"
    else:
        what = f"your Kubernetes user {value!r}"
        sent_as, fix = "a Kubernetes user", "Your email in Slack needs changing"
    raise errors.NotAllowed(
        f"Changes here are made as you in Kubernetes (access.impersonate), but {what} cannot "
        f"be sent as {sent_as}: an impersonation header carries printable ASCII only, with no "
        f"space at either end. {fix}; {REFUSED}."
    )


async def resolve(mode: Mode, user_id: str, people: People) -> Impersonation | None:
    """The identity of `user_id`'s change, asking Slack (cached there) what `mode` needs.

    Raises:
        NotAllowed: as `impersonation`.
        UserError: Slack could not be asked; nothing is sent as the bot instead.
    """
    if mode == "none":
        return None
    try:
        email = await people.email_of(user_id) if mode == "email" else None
        handles = await people.handles_of(user_id)
    except SlackUnavailable as e:
        raise errors.UserError(
            f"Cannot tell who you are in Kubernetes right now ({e}); {REFUSED}. Try again "
            "in a moment."
        ) from e
    return impersonation(mode, user_id, email, handles)
