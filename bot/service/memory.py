"""Giving the memory the service freed back to the system (glibc's malloc; elsewhere nothing).

A replica that takes a fleet lists every collection of every cluster within seconds and keeps
only a slim copy of each; what it freed stays in its heap. glibc returns memory to the system
only from the top of an arena, and gives each thread its own arena (up to eight per core):
the Kubernetes client's threads each kept their share. Measured on bench/fleet_ha.py's holder
of 200 clusters after a fleet-wide failure, `malloc_trim` (called from gdb) took its RSS from
312 to 240 MB at once. So the service allows two arenas (asked before any thread starts) and
trims the heap once a `TRIM_EVERY`: a walk over the free lists, a few milliseconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from datetime import timedelta
from functools import cache
from typing import Any

log = logging.getLogger(__name__)

TRIM_EVERY = timedelta(minutes=1)
ARENAS = 2  # the event loop's and one for every worker thread: they allocate little
M_ARENA_MAX = -8  # glibc malloc.h: mallopt's parameter for the number of arenas


@cache
def _glibc() -> Any | None:
    """glibc, when the process runs on it (musl and macOS have no `malloc_trim`)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Allow glibc only `arenas` arenas; whether it took the setting. Call it before any thread
    starts: an arena made already stays."""
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(M_ARENA_MAX, arenas))


def return_freed() -> bool:
    """Hand the heap's free pages back to the system; whether any were."""
    libc = _glibc()
    return libc is not None and bool(libc.malloc_trim(0))


async def trim_heap(_deps: object) -> None:
    """The timed job: `return_freed` (a no-op off glibc)."""
    if return_freed():
        log.debug("freed memory handed back to the system")
