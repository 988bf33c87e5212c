"""The Evict Events of one cluster, found as an informer finds them: one cluster-wide list
narrowed by the field selector `reason=Evict`, then a watch from the list's resourceVersion,
resumed from the last version seen; listed again after a 410 (the version is gone), after the
state could not be saved, and whenever this replica becomes the Lease holder again
(client-go tools/cache/reflector.go `ListAndWatch`). Never every namespace polled.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from datetime import datetime

from bot.alerts.store import StoreUnavailable
from bot.core import conditions as c
from bot.core import errors
from bot.kube import kinds
from bot.kube.ports import CollectionWatcher
from bot.notices.evictions import SELECTOR
from bot.notices.usecase import EvictionNotices

log = logging.getLogger(__name__)

WATCH_SECONDS = 55.0  # one watch request at most; the next resumes where it ended


class EvictionWatch:
    """One cluster's list-then-watch, and the version it resumes from ("" = list first)."""

    def __init__(self, notices: EvictionNotices) -> None:
        self.notices = notices
        self.version = ""

    def forget(self) -> None:
        """List again at the next pass (this replica no longer holds the Lease)."""
        self.version = ""

    async def run(
        self,
        kube: CollectionWatcher,
        clock: Callable[[], datetime],
        still_holder: Callable[[], bool],
        seconds: float = WATCH_SECONDS,
    ) -> bool:
        """One pass: list if needed, then watch for up to `seconds` (or until this replica
        stops holding the Lease); whether it went well (a 410 counts: the next pass lists at
        once). Never raises for the cluster or the store: logged, and the next pass resumes
        (or lists again)."""
        try:
            if not self.version:
                items, version = await kube.list_for_watch(kinds.EVENT, field_selector=SELECTOR)
                await self.notices.tell(kube, items, clock())
                self.version = version
            await self._watch(kube, clock, still_holder, seconds)
        except errors.KubeExpired as e:
            log.info("cluster %s: evictions: %s; listing again", kube.cluster, e)
            self.version = ""
        except errors.KubeError as e:
            log.warning("cluster %s: evictions cannot be watched now: %s", kube.cluster, e)
            return False
        except StoreUnavailable as e:
            log.error("cluster %s: evictions not recorded: %s; listing again", kube.cluster, e)
            self.version = ""
            return False
        return True

    async def _watch(
        self,
        kube: CollectionWatcher,
        clock: Callable[[], datetime],
        still_holder: Callable[[], bool],
        seconds: float,
    ) -> None:
        changes = kube.watch_objects(
            kinds.EVENT, field_selector=SELECTOR, resource_version=self.version, seconds=seconds
        )
        async with contextlib.aclosing(changes):  # ends the request, frees its watch thread
            async for kind, event in changes:
                if kind in ("ADDED", "MODIFIED"):
                    await self.notices.tell(kube, [event], clock())
                self.version = c.as_text(c.metadata(event).get("resourceVersion")) or self.version
                if not still_holder():
                    self.forget()
                    return
