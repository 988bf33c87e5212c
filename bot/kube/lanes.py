"""The Kubernetes client's threads, shared by every cluster, in three lanes.

The official client blocks a thread per request, so a fleet needs a bound that does not grow with
the cluster count (`kubernetes.threads`). Half the threads serve commands, Confirm clicks and the
Lease; a quarter serve the scheduled per-cluster work (alert checks, timed-pause sweeps), which
marks itself with `scheduled()`; a quarter hold the watches that follow a change (a watch keeps
its thread until the change is done). Unreachable clusters whose checks hold their threads until
the time limit, or many changes followed at once, can then never keep an on-call engineer's
command waiting for a thread; a change followed while every watch thread is busy is polled.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar

_SCHEDULED: ContextVar[bool] = ContextVar("kube_scheduled", default=False)


@contextmanager
def scheduled() -> Iterator[None]:
    """Requests made inside (and in tasks started inside) run on the scheduled lane."""
    token = _SCHEDULED.set(True)
    try:
        yield
    finally:
        _SCHEDULED.reset(token)


class ClientThreads:
    """`threads` threads in all (at least 4): commands, scheduled work, watches."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.watch_slots = max(1, threads // 4)
        scheduled = max(1, threads // 4)
        prompt = max(1, threads - scheduled - self.watch_slots)
        self._prompt = ThreadPoolExecutor(prompt, thread_name_prefix="kube")
        self._scheduled = ThreadPoolExecutor(scheduled, thread_name_prefix="kube-scheduled")
        self._watches = ThreadPoolExecutor(self.watch_slots, thread_name_prefix="kube-watch")
        self._watching = 0

    def lane(self) -> ThreadPoolExecutor:
        """The lane of the request being made now."""
        return self._scheduled if _SCHEDULED.get() else self._prompt

    def take_watch_slot(self) -> ThreadPoolExecutor | None:
        """The watch lane with one of its threads reserved, or None when all are in use.

        Call from the event loop only; give the slot back with `release_watch_slot`.
        """
        if self._watching >= self.watch_slots:
            return None
        self._watching += 1
        return self._watches

    def release_watch_slot(self) -> None:
        self._watching -= 1

    def shutdown(self) -> None:
        """Stop every lane; queued requests are cancelled (idempotent)."""
        for pool in (self._prompt, self._scheduled, self._watches):
            pool.shutdown(wait=False, cancel_futures=True)
