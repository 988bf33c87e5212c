"""The Kubernetes client's threads, shared by every cluster, in two lanes.

The official client blocks a thread per request, so a fleet needs a bound that does not grow with
the cluster count (`kubernetes.threads`). A quarter of the threads serve the scheduled
per-cluster work (alert checks, timed-pause sweeps), which marks itself with `scheduled()`; the
rest serve commands, Confirm clicks and the Lease. Unreachable clusters whose checks hold their
threads until the time limit can then never keep an on-call engineer's command waiting for a
thread. Watches hold none: they are read on the event loop (`bot.kube.streams`).
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
    """`threads` threads in all (at least 4): commands, and scheduled work."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        scheduled = max(1, threads // 4)
        prompt = max(1, threads - scheduled)
        self._prompt = ThreadPoolExecutor(prompt, thread_name_prefix="kube")
        self._scheduled = ThreadPoolExecutor(scheduled, thread_name_prefix="kube-scheduled")

    def lane(self) -> ThreadPoolExecutor:
        """The lane of the request being made now."""
        return self._scheduled if _SCHEDULED.get() else self._prompt

    def shutdown(self) -> None:
        """Stop every lane; queued requests are cancelled (idempotent)."""
        for pool in (self._prompt, self._scheduled):
            pool.shutdown(wait=False, cancel_futures=True)
