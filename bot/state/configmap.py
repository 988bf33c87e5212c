"""A ConfigMap as one stored document: read it, and write it with compare-and-set.

A write is a merge patch carrying the `resourceVersion` read, so the API server refuses it (409)
when someone wrote in between; a first write creates the ConfigMap, labelled as ours. Retries
follow the store's `RetryPolicy` (`bot.state.retry`). Given a watched copy (`bot.state.watched`),
a read is answered from it while it is current, and what a write returns goes into it at once;
a read after a conflict, and the look for a write whose answer was lost, always GET. Only
through the `bot.kube` ports.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from bot.core import errors
from bot.core.models import RawObject, Sleep
from bot.kube.kinds import CONFIG_MAP, owned_config_map
from bot.kube.ports import KubeWriter
from bot.state.retry import NEW, REDO_CONFLICTS, Raises, RetryPolicy, StateUnavailable
from bot.state.watched import WatchedConfigMaps

_default_log = logging.getLogger(__name__)  # what a store that gives no logger warns in
T = TypeVar("T")
# How long a read waits for the watched copy's first list before it GETs: about what a GET of a
# busy API server may take (`kubernetes.request_timeout`, 5 s in the examples).
FIRST_LIST = 5.0
Changes = Mapping[str, str | None]  # keys to write; None drops a key (merge-patch semantics)


@dataclass(frozen=True)
class Snapshot:
    """A ConfigMap's data and the version a write names; `NEW` (and no data) when it is missing."""

    data: Mapping[str, str]
    version: str


class ConfigMapDocument:
    """The ConfigMap `namespace/name`, read and written as one document.

    `raises` says what it raises: unavailable (the API server refused or could not be reached)
    and conflict (written since it was read), and names it in them and in logs. `log` is the
    store's own logger, so its warnings stay where its operators look.
    """

    def __init__(
        self,
        kube: KubeWriter,
        namespace: str,
        name: str,
        raises: Raises,
        *,
        policy: RetryPolicy = REDO_CONFLICTS,
        sleep: Sleep = asyncio.sleep,
        log: logging.Logger = _default_log,
        watched: WatchedConfigMaps | None = None,
    ) -> None:
        self._kube = kube
        self.namespace, self.name, self.raises = namespace, name, raises
        self.policy = policy
        self._sleep = sleep
        self._log = log
        self._watched = watched
        self._copied: tuple[RawObject | None, Snapshot] = (None, Snapshot({}, NEW))

    async def read(self, *, fresh: bool = False) -> Snapshot:
        """From the watched copy while it is current, unless `fresh`; else a GET.

        Raises: unavailable.
        """
        if not fresh and self._watched is not None and await self._watched.settled(FIRST_LIST):
            return self.copied()
        try:
            found = await self._kube.get_object(CONFIG_MAP, self.name, self.namespace)
        except errors.KubeError as e:
            raise self._unavailable(e) from e
        self._seen(found)
        return _snapshot(found)

    def copied(self) -> Snapshot:
        """The document as the watched copy holds it; only while the copy is current. The
        snapshot of an object read before is the one made then: a fleet's states, read at
        every check with alerts grouped, are not copied again while they do not change."""
        assert self._watched is not None
        found = self._watched.get(self.name)
        if found is not self._copied[0]:
            self._copied = (found, _snapshot(found))
        return self._copied[1]

    async def write(self, changes: Changes, version: str) -> str:
        """Write `changes` if the ConfigMap is still at `version` (`NEW`: create it); returns the
        new version. A try that got a 5xx or no answer may have been applied: it is sent again
        after each pause of the policy, and counts as done once the ConfigMap is found to hold
        exactly `changes`.

        Raises: conflict, unavailable.
        """
        try:
            return await self.policy.resend(
                lambda: self._send(changes, version),
                sleep=self._sleep,
                warn=self._warn,
                landed=lambda: self._landed(changes),
            )
        except errors.KubeUnavailable as e:
            raise self._unavailable(e) from e

    async def change(
        self, step: Callable[[Mapping[str, str]], tuple[Changes, T]], *, gave_up: str
    ) -> T:
        """Read, let `step(data)` say what to change (nothing: no write) and what to answer,
        write; all again on a conflict, as often as the policy says.

        Raises: unavailable (with `gave_up` when it kept conflicting).
        """

        tries = 0

        async def attempt() -> T:
            nonlocal tries
            tries += 1
            found = await self.read(fresh=tries > 1)  # after a conflict, never the copy
            changes, answer = step(found.data)
            if changes:
                await self.write(changes, found.version)
            return answer

        return await self.policy.redo_on_conflict(attempt, lambda: self.raises.unavailable(gave_up))

    async def _send(self, changes: Changes, version: str) -> str:
        try:
            if version == NEW:
                created = await self._create(changes)
                self._seen(created)
                return _version(created)
            patch = {"metadata": {"resourceVersion": version}, "data": dict(changes)}
            patched = await self._kube.patch_object(CONFIG_MAP, self.name, self.namespace, patch)
            self._seen(patched)
        except (errors.KubeConflict, errors.KubeNotFound) as e:  # 404: deleted since it was read
            raise self.raises.conflict(f"{self.raises.what} changed meanwhile: {e}") from e
        except errors.KubeUnavailable:
            raise  # the policy sends it again
        except errors.KubeError as e:
            raise self._unavailable(e) from e
        return _version(patched)

    async def _create(self, changes: Changes) -> RawObject:
        data = {key: value for key, value in changes.items() if value is not None}
        body = owned_config_map(self.name, self.namespace, data)
        try:
            return await self._kube.create_object(CONFIG_MAP, self.namespace, body)
        except errors.KubeNotFound as e:  # not a race: the namespace itself is missing
            raise self._unavailable(f"namespace {self.namespace}: {e}") from e

    async def _landed(self, changes: Changes) -> str | None:
        """The version holding exactly `changes` (so a write of ours was applied), else None."""
        found = await self.read(fresh=True)
        if found.version == NEW or any(found.data.get(k) != v for k, v in changes.items()):
            return None
        return found.version

    def _seen(self, found: RawObject | None) -> None:
        """The ConfigMap as the API server just answered: read from the copy from now on."""
        if self._watched is not None:
            self._watched.put(self.name, found)

    def _unavailable(self, detail: object) -> StateUnavailable:
        return self.raises.unavailable(f"{self.raises.what}: {detail}")

    def _warn(self, error: Exception, pause: float) -> None:
        self._log.warning("%s: %s; writing again in %.1fs", self.raises.what, error, pause)


def _snapshot(found: RawObject | None) -> Snapshot:
    if found is None:
        return Snapshot({}, NEW)
    data = found.get("data") or {}
    return Snapshot({str(k): str(v) for k, v in data.items()}, _version(found))


def _version(found: RawObject) -> str:
    return str(found["metadata"]["resourceVersion"])
