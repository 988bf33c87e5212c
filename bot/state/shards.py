"""Documents kept one ConfigMap each (`<configmap>-<key>`), read through one watched copy, and
mirrored into the legacy shared ConfigMap (`<configmap>`) while it exists.

The release before the shards kept every key in the one legacy ConfigMap. During a rolling
upgrade both releases run and the Lease may move either way, so while the legacy ConfigMap
exists it stays the authority: a key it holds is read from it (an old replica may have written
it since the shard), every write goes to it first, with compare-and-set on its version, and then
to the shard; an old replica that takes the Lease back reads what we wrote. A shard write that
conflicts after the legacy took ours copies what the legacy holds then (a later writer's, or
ours) into the shard, so the shards are current when the legacy is deleted. Once it is gone,
only shards. A version names both: `<shard version>+<legacy version>` while mirroring.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence

from bot.core.models import Sleep
from bot.kube.ports import KubeWriter
from bot.state import names
from bot.state.configmap import Changes, ConfigMapDocument, Snapshot
from bot.state.retry import NEW, Raises, RetryPolicy, StateConflict, StateUnavailable
from bot.state.watched import WatchedConfigMaps

MIRRORED = "+"  # joins a shard's version and the legacy ConfigMap's
KeysOf = Callable[[str], Sequence[str]]  # the data keys a document's key owns in the legacy


class ShardedConfigMaps:
    """The documents `<configmap>-<key>` of `namespace` (and the legacy `<configmap>`), read
    from one watched copy of the ConfigMaps labelled ours while it is current."""

    def __init__(
        self,
        kube: KubeWriter,
        namespace: str,
        configmap: str,
        raises: Raises,
        *,
        keys_of: KeysOf,
        policy: RetryPolicy,
        sleep: Sleep = asyncio.sleep,
        log: logging.Logger,
    ) -> None:
        self.namespace, self.configmap = namespace, configmap
        self.watched = WatchedConfigMaps(
            kube,
            namespace,
            label_selector=names.OWNED_LABEL,
            field_selector=names.alert_documents_selector(configmap),
        )
        self._keys_of = keys_of
        self._log = log
        self._policy = policy
        self._kube, self._raises, self._sleep = kube, raises, sleep
        self.legacy = self._open(configmap)
        self._shards: dict[str, ConfigMapDocument] = {}

    def _open(self, name: str) -> ConfigMapDocument:
        return ConfigMapDocument(
            self._kube, self.namespace, name, self._raises, policy=self._policy,
            sleep=self._sleep, log=self._log, watched=self.watched,
        )  # fmt: skip

    def shard(self, key: str) -> ConfigMapDocument:
        found = self._shards.get(key)
        if found is None:
            found = self._shards[key] = self._open(names.document_name(self.configmap, key))
        return found

    async def read(self, key: str, *, fresh: bool = False) -> Snapshot:
        """The document `key` (`fresh`: GET, never the copy). Raises: unavailable."""
        legacy = await self.legacy.read(fresh=fresh)  # first: a mirrored write lands there first
        return self._joined(key, legacy, await self.shard(key).read(fresh=fresh))

    async def read_many(self, keys: Sequence[str]) -> list[Snapshot]:
        """Each of `keys`' documents, read at once (from the copy: no request at all, and no
        task each: with alerts grouped every check reads the whole fleet's)."""
        legacy = await self.legacy.read()
        if self.watched.current():
            shards = [self.shard(key).copied() for key in keys]
        else:
            shards = await asyncio.gather(*(self.shard(key).read() for key in keys))
        return [self._joined(k, legacy, s) for k, s in zip(keys, shards, strict=True)]

    def _joined(self, key: str, legacy: Snapshot, shard: Snapshot) -> Snapshot:
        if legacy.version == NEW:
            return shard
        data = dict(shard.data)
        data.update({k: legacy.data[k] for k in self._keys_of(key) if k in legacy.data})
        return Snapshot(data, f"{shard.version}{MIRRORED}{legacy.version}")

    async def write(self, key: str, changes: Changes, version: str) -> str:
        """Write `changes` to `key`'s document if it is still at `version`; the new version.

        Raises: conflict, unavailable (the legacy ConfigMap's included, while it exists).
        """
        shard_version, mirrored, legacy_version = version.partition(MIRRORED)
        if not mirrored:
            return await self.shard(key).write(changes, shard_version)
        legacy_now = await self.legacy.write(changes, legacy_version)
        shard_now = await self._follow(key, changes, shard_version)
        return f"{shard_now}{MIRRORED}{legacy_now}"

    async def _follow(self, key: str, changes: Changes, version: str) -> str:
        """The shard after the legacy ConfigMap took `changes`: written too, or, when someone
        wrote it meanwhile, given what the legacy holds now. A failure here loses nothing (the
        legacy holds it, and a read takes it from there): logged, and the version kept."""
        shard = self.shard(key)
        try:
            try:
                return await shard.write(changes, version)
            except StateConflict:
                return await self._copy_legacy(shard, changes) or version
        except StateUnavailable as e:
            self._log.warning("%s: %s; the legacy ConfigMap holds what was written", shard.name, e)
            return version

    async def _copy_legacy(self, shard: ConfigMapDocument, changes: Changes) -> str | None:
        """What the legacy ConfigMap holds now of `changes`' keys, into the shard (with its
        own compare-and-set: a later writer does the same, so the last copy is the latest).

        Raises: unavailable.
        """
        for _ in range(self._policy.tries):
            legacy, found = await self.legacy.read(fresh=True), await shard.read(fresh=True)
            wanted = {k: legacy.data.get(k) for k in changes}
            if legacy.version == NEW or _holds(found.data, wanted):
                return found.version
            try:
                return await shard.write(wanted, found.version)
            except StateConflict:
                continue
        return None

    def close(self) -> None:
        self.watched.close()


def _holds(data: Mapping[str, str], wanted: Mapping[str, str | None]) -> bool:
    return all(data.get(k) == v for k, v in wanted.items())
