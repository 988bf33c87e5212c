"""Leader election over a `coordination.k8s.io/v1` Lease: only the holder runs the checks.

As client-go's leader election does, expiry is judged by when *this* replica last saw the
record change, not by the holder's `renewTime`, so clocks need not agree. Every write carries
the `resourceVersion` it read, so two replicas cannot both take a free Lease. The holder counts
itself leader only for two thirds of the lease after its last renewal, so it stops before
another replica may take over. All of that is timed on a monotonic clock (`time.monotonic`),
never the wall clock: a wall-clock step on one replica must not make two leaders. The wall
time the caller passes (`deps.clock`) is only written into the Lease for people to read.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.config.settings import LeaseSettings
from bot.core import errors
from bot.kube.kinds import LEASE
from bot.kube.ports import KubeWriter

log = logging.getLogger(__name__)


def default_identity() -> str:
    """`<hostname>-<pid>-<random>`: unique per process (and per service within a process)."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


@dataclass
class _Seen:
    record: tuple[str, str]  # (holderIdentity, renewTime) as last read
    at: float  # when this replica first saw that record (monotonic seconds)


class LeaderLease:
    """This replica's side of the Lease: `renew(now)` periodically, `is_leader()` before work."""

    def __init__(
        self,
        kube: KubeWriter,
        settings: LeaseSettings,
        *,
        identity: str | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._kube = kube
        self.namespace = settings.namespace
        self.name = settings.name
        self.duration = settings.duration
        self.identity = identity or default_identity()
        self._monotonic = monotonic
        self._renewed_at: float | None = None  # monotonic seconds of the last renewal
        self._seen: _Seen | None = None
        self._busy = asyncio.Lock()  # one renewal at a time, or this replica races itself
        # The last renewal's Kubernetes error (None after a renewal that got an answer): while
        # it stands nobody may be running the checks, which must not go unnoticed.
        self.last_error: errors.KubeError | None = None
        self.terms = 0  # how many times this replica became the holder: a new term, a new look
        self.transitions = 0  # the Lease's leaseTransitions as last read or written

    @property
    def renew_every(self) -> timedelta:
        """How often to call `renew`: four tries within one lease."""
        return self.duration / 4

    def is_leader(self) -> bool:
        """Whether this replica holds the Lease and renewed it recently enough to act on it."""
        return self.acting_left() > 0

    @property
    def last_holder(self) -> str:
        """The holder as this replica last knew it: itself after its last successful renewal
        (a renewal that failed for want of the API server leaves that as it was), else the
        holder it last read ("" if none, or never read)."""
        if self._renewed_at is not None:
            return self.identity
        return self._seen.record[0] if self._seen is not None else ""

    def acting_left(self) -> float:
        """Seconds this replica may still act on its last renewal (0: it may not act): two
        thirds of the lease, so it stops before another replica may take over."""
        if self._renewed_at is None:
            return 0.0
        acting = self.duration.total_seconds() * 2 / 3
        return max(0.0, self._renewed_at + acting - self._monotonic())

    async def renew(self, now: datetime) -> bool:
        """Take the Lease if it is free or expired, renew it if ours; returns `is_leader()`.
        `now` (wall time) is only written into the Lease.

        Kubernetes errors are logged, not raised: leadership then lapses by itself.
        """
        async with self._busy:
            started = self._monotonic()  # the renewal counts from before the request was sent
            was_leader = self.is_leader()
            try:
                self._renewed_at = started if await self._try(now) else None
                self.terms += 0 if was_leader or not self.is_leader() else 1
                self.last_error = None
            except errors.KubeError as e:
                log.warning("lease %s/%s: cannot renew: %s", self.namespace, self.name, e)
                self.last_error = e
        return self.is_leader()

    async def release(self, now: datetime) -> None:
        """Give the Lease up on a clean stop, so another replica takes over at once."""
        async with self._busy:
            if self._renewed_at is not None:
                self._renewed_at = None
                await self._give_up(now)

    async def _give_up(self, now: datetime) -> None:
        try:
            lease = await self._kube.get_object(LEASE, self.name, self.namespace)
            if lease is None or _spec(lease).get("holderIdentity") != self.identity:
                return
            spec = {"holderIdentity": None, "renewTime": _micro_time(now)}
            await self._patch(lease, spec)
        except errors.KubeError as e:
            log.warning("lease %s/%s: cannot release: %s", self.namespace, self.name, e)

    async def _try(self, now: datetime) -> bool:
        lease = await self._kube.get_object(LEASE, self.name, self.namespace)
        if lease is None:
            return await self._create(now)
        spec = _spec(lease)
        self.transitions = _count(spec.get("leaseTransitions"))
        holder = str(spec.get("holderIdentity") or "")
        record = (holder, str(spec.get("renewTime") or ""))
        if self._seen is None or self._seen.record != record:
            self._seen = _Seen(record, self._monotonic())  # after the read: the later, the safer
        if holder == self.identity:
            return await self._patch(lease, self._fields(now))
        expiry = self._seen.at + _lease_duration(spec, self.duration).total_seconds()
        if holder and self._monotonic() < expiry:
            return False
        transitions = self.transitions + 1
        taken = self._fields(now) | {"acquireTime": _micro_time(now)}
        if await self._patch(lease, taken | {"leaseTransitions": transitions}):
            self.transitions = transitions
            log.info("lease %s/%s: taken over from %r", self.namespace, self.name, holder or None)
            return True
        return False

    async def _create(self, now: datetime) -> bool:
        spec = self._fields(now) | {"acquireTime": _micro_time(now), "leaseTransitions": 0}
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": spec,
        }
        try:
            await self._kube.create_object(LEASE, self.namespace, body)
        except errors.KubeConflict:
            return False  # another replica created it first
        log.info("lease %s/%s: created, held by %s", self.namespace, self.name, self.identity)
        return True

    async def _patch(self, lease: Any, spec: dict[str, Any]) -> bool:
        """Write `spec` only if nobody wrote the Lease since we read it."""
        version = lease["metadata"]["resourceVersion"]
        body = {"metadata": {"resourceVersion": version}, "spec": spec}
        try:
            await self._kube.patch_object(LEASE, self.name, self.namespace, body)
        except errors.KubeConflict:
            return False
        return True

    def _fields(self, now: datetime) -> dict[str, Any]:
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, int(self.duration.total_seconds())),
            "renewTime": _micro_time(now),
        }


def _spec(lease: Any) -> dict[str, Any]:
    spec = lease.get("spec") if isinstance(lease, dict) else None
    return spec if isinstance(spec, dict) else {}


def _count(value: Any) -> int:
    """A non-negative count as the Lease holds it (0 when missing or not a count)."""
    is_count = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if is_count else 0


def _lease_duration(spec: dict[str, Any], default: timedelta) -> timedelta:
    """The holder's own lease duration, as it wrote it."""
    seconds = spec.get("leaseDurationSeconds")
    if isinstance(seconds, int) and not isinstance(seconds, bool) and seconds > 0:
        return timedelta(seconds=seconds)
    return default


def _micro_time(at: datetime) -> str:
    """A Kubernetes MicroTime: RFC 3339 UTC with microseconds."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
