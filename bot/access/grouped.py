"""Claims that arrive while the shared memory is being written go together in its next write.

Fifty commands at once are fifty claims: one SQLite commit (an fsync) each, or fifty
read-and-patch rounds on one ConfigMap, all but one of which lose to a conflict and read again
(five tries each, then the claim is given up). Grouped, they are one write for the first claim
and one for all that came while it was under way, each answered as if claimed in turn.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from bot.access.once import BatchStore, Claim, open_store
from bot.config.settings import Settings
from bot.kube.ports import KubeWriter


class GroupedClaims:
    """An `OnceStore` over a `BatchStore`: at most one write at a time, each with every claim
    that was waiting for it."""

    def __init__(self, store: BatchStore) -> None:
        self.store = store
        self._waiting: list[tuple[Claim, asyncio.Future[bool]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def claim(self, key: str, until: datetime, now: datetime) -> bool:
        """Raises: OnceUnavailable (the write this claim was in failed)."""
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.append((Claim(key, until, now), answer))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_while_waiting())
        return await answer

    async def _write_while_waiting(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            try:
                won = await self.store.claim_all([claim for claim, _ in batch])
            except Exception as e:  # every claim of the batch hears why, none is lost
                for _, answer in batch:
                    if not answer.done():
                        answer.set_exception(e)
                continue
            for (_, answer), first in zip(batch, won, strict=True):
                if not answer.done():  # its caller may have given up waiting
                    answer.set_result(first)

    def close(self) -> None:
        self.store.close()


def open_once(settings: Settings, kube: KubeWriter) -> GroupedClaims:
    """The service's memory of used requests and Confirms (`state.backend`), claims grouped."""
    return GroupedClaims(open_store(settings, kube))
