"""Who may do what: pure decisions over `access` settings and resolved user-group members.

Entries in `access.operators` / `access.viewers` are user IDs (`U…`, `W…`), user-group IDs (`S…`)
or handles (`@oncall`); the caller resolves groups to their members (Slack API, cached) and passes
them in. Changes need an operator; looking needs a viewer (everyone, unless a list is set).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timedelta

from bot.config.settings import AccessSettings
from bot.core import errors
from bot.core.durations import format_duration
from bot.core.rich import Rich, rich_join, rich_text
from bot.slack.blocks import escape, mention

Members = Mapping[str, frozenset[str]]


def is_group_entry(entry: str) -> bool:
    """A user-group handle or ID, as opposed to a user ID."""
    return entry.startswith("@") or entry.startswith("S")


def group_entries(entries: Iterable[str]) -> list[str]:
    """The entries that need resolving to members."""
    return [e for e in entries if is_group_entry(e)]


def is_listed(user_id: str, entries: Iterable[str], members: Members) -> bool:
    """Whether the user is named directly or belongs to one of the listed groups."""
    return any(entry == user_id or user_id in members.get(entry, frozenset()) for entry in entries)


def is_operator(user_id: str, access: AccessSettings, members: Members) -> bool:
    return is_listed(user_id, access.operators, members)


def is_viewer(user_id: str, access: AccessSettings, members: Members) -> bool:
    """Operators may always look; with no viewers list, everyone may."""
    if access.viewers is None or is_operator(user_id, access, members):
        return True
    return is_listed(user_id, access.viewers, members)


def require_operator(user_id: str, action: str, access: AccessSettings, members: Members) -> None:
    """Raises NotAllowed (with who may instead) unless the user is an operator."""
    if not is_operator(user_id, access, members):
        who = rich_join(", ", (_display(e) for e in access.operators))
        raise errors.NotAllowed(
            rich_text(
                f"You are not allowed to {escape(action)}: only operators may (",
                who or "nobody (access.operators is empty)",
                ").",
            )
        )


def require_viewer(user_id: str, action: str, access: AccessSettings, members: Members) -> None:
    """Raises NotAllowed unless the user may look."""
    if not is_viewer(user_id, access, members):
        raise errors.NotAllowed(f"You are not allowed to {action}: ask an operator to add you.")


def check_silence(duration: timedelta, longest: timedelta) -> None:
    """Raises UserError for a silence longer than `alerts.max_silence` allows."""
    if duration > longest:
        raise errors.UserError(
            f"Silences last at most {format_duration(longest)} here (alerts.max_silence); "
            f"{format_duration(duration)} is longer. Nothing was changed."
        )


def _display(entry: str) -> Rich:
    """A user or group ID as the bot's own mention; a `@handle` as written."""
    return mention(entry)
