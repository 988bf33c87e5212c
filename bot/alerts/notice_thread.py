"""A notice told outside any alert, in a channel of its own, with the replies under it.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from bot.alerts.model import Owed


@dataclass(frozen=True)
class NoticeThread:
    """A notice outside any alert, in a channel of its own, and the replies under it, keyed by
    what it tells (a KAI Evict Event: `<cluster>/evict/<uid>`), so each is told once across
    restarts and replicas. Its messages are delivered and converged like an incident's root
    and replies (`incident` is its key): the root is `<key>:0`, the replies `<key>:<n>`.
    `count` is how many occurrences were told, `last` when the latest happened (a thread is
    forgotten a while after it, once it owes nothing)."""

    key: str
    channel: str
    count: int
    last: datetime
    outbox: tuple[Owed, ...] = ()
    owed_count: int = 0
    root_ts: str = ""
    root_anchor: str = ""
    delivered: Mapping[str, str] = field(default_factory=dict)  # reply effect ID -> ts

    @property
    def incident(self) -> str:
        return self.key

    @property
    def root_channel(self) -> str:
        return self.channel
