"""The Evict Events of one cluster, found as an informer finds them (`bot.kube.listwatch`, the
one list-then-watch route): one cluster-wide list narrowed by the field selector `reason=Evict`,
then a watch from the list's resourceVersion, resumed from the last version seen; listed again
after a 410 (the version is gone), after the state could not be saved, and whenever this
replica becomes the Lease holder again (client-go tools/cache/reflector.go `ListAndWatch`).
Never every namespace polled. What is told is `bot.notices.usecase`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from bot.alerts.store import StoreUnavailable
from bot.core import errors
from bot.core.models import RawObject
from bot.kube import kinds
from bot.kube.listwatch import ListThenWatch
from bot.kube.ports import CollectionFollower
from bot.notices.evictions import SELECTOR
from bot.notices.usecase import EvictionNotices

log = logging.getLogger(__name__)

WATCH_SECONDS = 55.0  # one watch request at most; the next resumes where it ended
PAGE_SIZE = 500  # a busy cluster's Evict Events are listed in pages of one snapshot


class EvictionWatch:
    """One cluster's list-then-watch of its Evict Events, each listed or added (or counted
    up) one told; where it resumes from is its `ListThenWatch`'s version ("" = list first)."""

    def __init__(
        self, notices: EvictionNotices, kube: CollectionFollower, clock: Callable[[], datetime]
    ) -> None:
        self.notices = notices
        self.kube = kube
        self.clock = clock
        self.events = ListThenWatch(
            kube, kinds.EVENT, listed=self._tell, changed=self._changed,
            field_selector=SELECTOR, page_size=PAGE_SIZE,
        )  # fmt: skip

    def forget(self) -> None:
        """List again at the next pass (this replica no longer holds the Lease)."""
        self.events.forget()

    async def run(self, still_holder: Callable[[], bool], seconds: float = WATCH_SECONDS) -> bool:
        """One pass: list if needed, then watch for up to `seconds` (or until this replica
        stops holding the Lease); whether it went well (a 410 counts: the next pass lists at
        once). Never raises for the cluster or the store: logged, and the next pass resumes
        (or lists again)."""
        cluster = self.kube.cluster
        try:
            if not self.events.version:
                await self.events.list()
            await self.events.watch(seconds, stop=lambda: not still_holder())
        except errors.KubeExpired as e:
            log.info("cluster %s: evictions: %s; listing again", cluster, e)
        except errors.KubeError as e:
            log.warning("cluster %s: evictions cannot be watched now: %s", cluster, e)
            return False
        except StoreUnavailable as e:  # the ListThenWatch forgot its version: listed again
            log.error("cluster %s: evictions not recorded: %s; listing again", cluster, e)
            return False
        if not still_holder():
            self.forget()
        return True

    async def _tell(self, events: list[RawObject]) -> None:
        await self.notices.tell(self.kube, events, self.clock())

    async def _changed(self, kind: str, event: RawObject) -> None:
        if kind in ("ADDED", "MODIFIED"):
            await self._tell([event])
