"""The bot's own state ConfigMaps of one namespace, followed by one list-then-watch: reads at rest
cost no API request.

One copy (`bot.kube.copies.Copy`, over the one route `bot.kube.listwatch`) of the ConfigMaps the
selectors pick, followed from the first read on. While it is current a read is answered from
memory; the first reads wait for its first list (`settled`); while it is not current (its list
failed, its watch broken, forbidden) the reader GETs, as before.
What a write returns, and what a GET read, is put in at once, so a replica reads its own writes
before the watch brings them. The copy may lag the server by a moment: what is planned from it
is written with compare-and-set, and a conflict is read again with a GET, never from here.
"""

from __future__ import annotations

import asyncio
import contextlib

from bot.core.models import RawObject
from bot.kube.copies import Copy
from bot.kube.kinds import CONFIG_MAP
from bot.kube.ports import CollectionFollower, KubeReader


class WatchedConfigMaps:
    """The ConfigMaps of `namespace` that `label_selector` and `field_selector` pick, as last
    listed and watched. Starts following on the first `current()`; `close()` stops."""

    def __init__(
        self,
        kube: KubeReader,
        namespace: str,
        *,
        label_selector: str,
        field_selector: str | None = None,
    ) -> None:
        self.namespace = namespace
        self._follows = kube if isinstance(kube, CollectionFollower) else None
        self._selectors = label_selector, field_selector
        self._copy: Copy | None = None
        self._task: asyncio.Task[None] | None = None

    def current(self) -> bool:
        """Whether the copy holds what the API server holds (as of a moment ago); starts
        following on the first ask. A gateway that cannot list-then-watch is never current."""
        if self._follows is None:
            return False
        if self._copy is None:
            key = (CONFIG_MAP, self.namespace, False)
            self._copy = Copy(self._follows, key, lambda: None)
            self._copy.packed = False  # each state as it was made: read a thousand times
            # narrowed, on the one route (`bot.kube.listwatch`)
            self._copy.listing.label_selector, self._copy.listing.field_selector = self._selectors
            self._task = asyncio.get_running_loop().create_task(self._copy.run())
        return self._copy.current

    async def settled(self, wait: float) -> bool:
        """`current()`, once the copy's first list has been answered or has failed, waiting
        for it up to `wait` seconds: at a start every cluster's state is read at once, and one
        list of the namespace serves them all where a GET each would crowd the API server
        (a thousand clusters on one busy server made it drop the watches the checks need)."""
        if self.current() or self._copy is None:
            return self.current()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._copy.tried.wait(), wait)
        return self.current()

    def get(self, name: str) -> RawObject | None:
        """The ConfigMap `name` as copied (None: there is none). Only when `current()`."""
        assert self._copy is not None
        return self._copy.get((self.namespace, name))

    def put(self, name: str, found: RawObject | None) -> None:
        """What a write returned, or a GET read (None: not found): read from here on."""
        if self._copy is None or not self._copy.current:
            return
        self._copy.put((self.namespace, name), found)

    def close(self) -> None:
        """Stop following (the watch's connection ends with its task)."""
        task, self._copy, self._task = self._task, None, None
        if task is not None and not task.done():
            with contextlib.suppress(RuntimeError):  # its loop closed already: it ended with it
                task.cancel()
