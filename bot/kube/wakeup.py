"""Work that reads a cluster through watched copies, run again as soon as what it read changes.

The alert checks' loop, beside the copies it follows (`bot.kube.informer`): `run()` (the
interval's turn) runs the work through a `CachedKube`; a change in any copy it read wakes it
at once, and a moment the work names (a hold running out) brings the next. One run at a time:
changes during a run ask for one more after it (`WAKE_GAP` later, so a burst of changes costs
two runs, not one each).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime

from bot.kube.informer import CachedKube
from bot.kube.ports import KubeWriter

WAKE_GAP = 0.25  # seconds between a run and the one more that changes during it asked for
HOLD_MARGIN = 0.05  # seconds past the moment a run named: the run that sees it pass
# One run over the copies: when the next run is due on its own (None: at the next change).
Work = Callable[[CachedKube], Awaitable[datetime | None]]


class WakeOnChange:
    """`work` over a `CachedKube` of `kube()`, made at the first run (on the running loop)."""

    def __init__(
        self, kube: Callable[[], KubeWriter], work: Work, clock: Callable[[], datetime]
    ) -> None:
        self.kube = kube
        self.work = work
        self.clock = clock
        self.reads: CachedKube | None = None
        self.runs = 0
        self._lock = asyncio.Lock()
        self._again = False
        self._closed = False
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    def wake(self) -> None:
        """Run as soon as the run under way (if any) is done; never once closed (a change, or
        a takeover's wake, that comes after the service stopped)."""
        if self._closed:
            return
        if self._lock.locked():
            self._again = True
        elif self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self.run())

    async def run(self) -> None:
        """Run the work now, and once more for each burst of changes it saw meanwhile."""
        next_look = None
        async with self._lock:
            self._again = True
            while self._again:
                self._again = False
                self.runs += 1
                if self.reads is None:
                    self.reads = CachedKube(self.kube(), self.wake)
                next_look = await self.work(self.reads)
                self.reads.settle()
                if self._again:
                    await asyncio.sleep(WAKE_GAP)
        self._look_at(next_look)

    def _look_at(self, moment: datetime | None) -> None:
        """Run again at `moment`; replaces the time asked before."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if moment is not None:
            delay = (moment - self.clock()).total_seconds() + HOLD_MARGIN
            self._timer = asyncio.get_running_loop().call_later(max(0.0, delay), self.wake)

    async def forget(self) -> None:
        """Follow nothing until the next run (which lists again): the copies are let go."""
        async with self._lock:
            reads, self.reads = self.reads, None
            if reads is not None:
                await reads.close()

    async def close(self) -> None:
        """Stop: no timer, no run under way, no copies followed, no wake from now on."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self.reads is not None:
            await self.reads.close()
