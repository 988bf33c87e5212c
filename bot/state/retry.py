"""The one retry policy of stored state, its errors, and the version of a document never written.

Which errors retry: a conflict (someone wrote since we read) redoes the whole read-change-write,
`tries` times in all; a write that got a 5xx or no answer (`KubeUnavailable`) is sent again after
each pause in `backoffs`; anything else is final. Pure: no clock, the caller gives `sleep`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from bot.core import errors
from bot.core.models import Sleep

NEW = ""  # the version of a document never written: its first write creates it
CONFLICT_TRIES = 5  # a read-change-write redone after a conflict, at most this many times in all
T = TypeVar("T")


class StateConflict(errors.BotError):
    """The document changed since it was read; read again and redo the change."""


class StateUnavailable(errors.BotError):
    """The state could not be read or written (disk, database or API server)."""


@dataclass(frozen=True)
class Raises:
    """The errors a store raises (its own subclasses, which its callers catch), and the words
    that name it in their messages (`request memory ConfigMap: the API server answered 503`)."""

    what: str
    unavailable: type[StateUnavailable] = StateUnavailable
    conflict: type[StateConflict] = StateConflict


@dataclass(frozen=True)
class RetryPolicy:
    """How often a conflicting change is redone, and the pauses before a write is sent again.

    No `backoffs` for what answers a request while Slack waits (the replay memory, the journal):
    a failed write fails at once, and the caller decides (fail closed, or log and go on).
    """

    tries: int = CONFLICT_TRIES
    backoffs: tuple[float, ...] = ()

    async def redo_on_conflict(
        self, attempt: Callable[[], Awaitable[T]], gave_up: Callable[[], Exception]
    ) -> T:
        """`attempt()` (read, change, write), again after each `StateConflict`, `tries` in all.

        Raises:
            gave_up(): it still conflicted the last time.
        """
        for _ in range(self.tries):
            try:
                return await attempt()
            except StateConflict:
                continue
        raise gave_up()

    async def resend(
        self,
        send: Callable[[], Awaitable[T]],
        *,
        sleep: Sleep,
        warn: Callable[[Exception, float], None],
        landed: Callable[[], Awaitable[T | None]],
    ) -> T:
        """`send()`, sent again after each pause while it fails with `KubeUnavailable`.

        A failed try may have been applied all the same (the answer was lost), so a
        `StateConflict` on a later try asks `landed()` whether the state already holds what we
        wrote: its answer is then the result, else the conflict stands.

        Raises:
            KubeUnavailable: the last try failed too (`warn` was told of every earlier one).
            StateConflict: someone else wrote since the version `send` names.
        """
        for sent_before, pause in enumerate(self.backoffs):
            try:
                return await _sent(send, landed, resent=sent_before > 0)
            except errors.KubeUnavailable as e:
                warn(e, pause)
                await sleep(pause)
        return await _sent(send, landed, resent=bool(self.backoffs))


REDO_CONFLICTS = RetryPolicy()  # conflicts are redone; a write that fails fails at once


async def _sent(
    send: Callable[[], Awaitable[T]], landed: Callable[[], Awaitable[T | None]], *, resent: bool
) -> T:
    """One try of `send`; a conflict on a resent write is ours if `landed()` says it is."""
    try:
        return await send()
    except StateConflict:
        found = await landed() if resent else None
        if found is None:
            raise
        return found  # an earlier try of ours was applied
