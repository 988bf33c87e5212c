"""Where alert state lives between checks, restarts and replicas: a SQLite file or a ConfigMap.

One JSON document per cluster (`bot.alerts.document.dump_cluster`), kept within its byte budget
(`bot.alerts.budget`) at every save, with a version: a save names
the version it read and raises `StoreConflict` when someone saved since (another replica
answering `/kai ack`, say), so the caller reloads and redoes its step (`update`). A document
that cannot be decoded loads as empty state with its `Damage`; the next save keeps the damaged
text aside, beside the document (a table row, a ConfigMap key). A document read again unchanged
is not decoded again (`Decoded`). The storage itself (versions, compare-and-set, retries) is
`bot.state`'s.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol, TypeVar

from bot.alerts import backlog, budget, pages
from bot.alerts.document import DamagedState, load_cluster
from bot.alerts.model import ClusterAlerts
from bot.config.settings import Settings
from bot.core.metrics import Metrics
from bot.core.models import Sleep
from bot.kube.ports import KubeWriter
from bot.state import retry
from bot.state.configmap import Snapshot
from bot.state.retry import (
    REDO_CONFLICTS,
    Raises,
    RetryPolicy,
    StateConflict,
    StateUnavailable,
)
from bot.state.shards import ShardedConfigMaps
from bot.state.sqlite import Aside, VersionedTable

log = logging.getLogger(__name__)

NEW = retry.NEW  # the version of a document never saved
WRITE_BACKOFFS = (0.5, 1.0, 2.0)  # seconds between tries of a guarded write that got a 5xx
T = TypeVar("T")


class StoreConflict(StateConflict):
    """The document changed since it was read; reload and try again."""


class StoreUnavailable(StateUnavailable):
    """The state could not be read or written (disk, database or API server)."""


@dataclass(frozen=True)
class Damage:
    """A stored document that could not be decoded: its text, why, and where a save keeps it."""

    text: str
    reason: str
    kept_at: str


@dataclass(frozen=True)
class Stored:
    """A cluster's alert state and the version to name when saving it back; `damage` when the
    stored document was unreadable (then `state` is empty)."""

    state: ClusterAlerts
    version: str
    damage: Damage | None = None


class AlertStore(Protocol):
    """Load and save one cluster's alert state, with optimistic concurrency."""

    async def load(self, cluster: str) -> Stored: ...

    async def load_many(self, clusters: Sequence[str]) -> list[Stored]:
        """What `load` gives for each of `clusters`, in that order, read at once (a fleet's
        states, asked at every check when alerts are grouped across clusters)."""
        ...

    async def save(self, state: ClusterAlerts, version: str, *, aside: Damage | None = None) -> str:
        """Write `state` if the stored version is still `version` (and keep `aside`'s text
        beside it); returns the new version."""
        ...

    def close(self) -> None: ...


Repair = Callable[[ClusterAlerts, Damage], ClusterAlerts]


async def update(
    store: AlertStore,
    cluster: str,
    change: Callable[[ClusterAlerts], tuple[ClusterAlerts, T]],
    *,
    repair: Repair | None = None,
) -> T:
    """Load, change, save (only when something changed); redo the change on a conflict.

    A damaged document is replaced by `repair(empty state, damage)` (which says so), changed,
    and saved with the damaged text kept aside.

    Raises:
        StoreUnavailable: the store failed, or kept conflicting.
        UserError: the change refused (a command on an unknown alert, say).
    """

    async def attempt() -> T:
        stored = await store.load(cluster)
        base = stored.state
        if stored.damage is not None and repair is not None:
            base = repair(base, stored.damage)
        state, result = change(base)
        if state != stored.state or stored.damage is not None:
            await store.save(state, stored.version, aside=stored.damage)
        return result

    def gave_up() -> StoreUnavailable:
        return StoreUnavailable(f"alert state of {cluster} kept changing under us; try again")

    return await REDO_CONFLICTS.redo_on_conflict(attempt, gave_up)


class Decoded:
    """What each cluster's document last decoded to, kept with the document's text: a check
    at rest reads its document back unchanged, and decoding it again would cost more than the
    whole rest of the check (a fleet's, with alerts grouped, is read at every check). The text
    is compared, not the version: equal text is equal state whatever wrote it (a table made
    anew counts its versions from 1 again). States are immutable, so every load may share one.
    """

    def __init__(self) -> None:
        self._last: dict[str, tuple[str, Stored]] = {}

    def stored(self, cluster: str, text: str, version: str, kept_at: str) -> Stored:
        """The state `text` holds (`_parsed`), decoded only when the text changed."""
        last = self._last.get(cluster)
        if last is not None and last[0] == text:
            if last[1].version == version:
                return last[1]
            stored = Stored(last[1].state, version)
        else:
            stored = _parsed(cluster, text, version, kept_at)
            if stored.damage is not None:  # decoded (and said) again at every load
                return stored
        self._last[cluster] = (text, stored)
        return stored


class Budgeted:
    """Each document as saved: within its byte budget (`bot.alerts.budget`, shedding what gives
    way and owing the notice that says so), reaching it logged and counted, and the largest
    document this replica saved shown beside the budget (`metrics`); every effect newly owed
    is stamped with the save's time (`bot.alerts.backlog`)."""

    def __init__(
        self,
        metrics: Metrics | None = None,
        *,
        limit: int = budget.BUDGET,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.limit = limit
        self._metrics = metrics
        self._clock = clock
        self._sizes: dict[str, int] = {}
        if metrics is not None:
            metrics.state_budget.set(limit)

    def text(self, state: ClusterAlerts) -> str:
        """The JSON document to save for `state`."""
        now = self._clock()
        fitted = budget.fit(backlog.stamped(state, now), now, self.limit)
        if fitted.gave_way:
            log.warning(
                "alert state of %s reached its budget of %d bytes: %d notice threads and %d "
                "closed incidents gave way",
                state.cluster, self.limit, len(fitted.threads), len(fitted.closed),
            )  # fmt: skip
        self._sizes[state.cluster] = len(fitted.text)
        if self._metrics is not None:
            if fitted.gave_way:
                self._metrics.state_budget_reached.labels(document=state.cluster).inc()
            self._metrics.state_largest_document.set(max(self._sizes.values()))
        return fitted.text


class SqliteStore:
    """The embedded default: one row per cluster in the file at `state.path`.

    The file (and its directory) is created on first use, so a service that never checks a
    cluster never touches the disk. Several stores may share a file (replicas on one volume).
    """

    def __init__(self, path: str, *, budget: Budgeted | None = None) -> None:
        self.path = path
        raises = Raises("alert state", StoreUnavailable, StoreConflict)
        self._table = VersionedTable(path, table="alert_state", key="cluster", raises=raises)
        self._decoded = Decoded()
        self._budget = budget or Budgeted()

    async def load(self, cluster: str) -> Stored:
        """Raises: StoreUnavailable."""
        return self._stored(cluster, await self._table.read(cluster))

    async def load_many(self, clusters: Sequence[str]) -> list[Stored]:
        """Raises: StoreUnavailable."""
        found = await self._table.read_many(clusters)
        return [self._stored(cluster, found.get(cluster)) for cluster in clusters]

    def _stored(self, cluster: str, found: tuple[str, str] | None) -> Stored:
        body, version = found or ("", NEW)  # never saved: the empty state
        where = f"table {self._table.aside_table} of {self.path}"
        return self._decoded.stored(cluster, body, version, where)

    async def save(self, state: ClusterAlerts, version: str, *, aside: Damage | None = None) -> str:
        """Raises: StoreConflict, StoreUnavailable."""
        kept = None if aside is None else Aside(aside.text, aside.reason)
        text = self._budget.text(state)
        return await self._table.write(state.cluster, text, version, aside=kept)

    def close(self) -> None:
        self._table.close()


class ConfigMapStore:
    """State in one ConfigMap per cluster (`<name>-<cluster>`, key `<cluster>.json`; the fleet
    incidents' `<name>--fleet`), for replicas in a cluster (`bot.state.shards`).

    Loads at rest are answered from one watched copy of our ConfigMaps: no API request. A save
    names the `resourceVersion` read (409 → StoreConflict, and that cluster's next load GETs). A
    save that got a 5xx or no answer may have been applied: it is sent again, and counts as done
    when the document is found to hold exactly ours (`bot.state.configmap`). While the legacy
    shared ConfigMap `<name>` of the release before exists, it is read first and written first.
    A damaged document is kept under `<cluster>.damaged.json` beside it.
    """

    def __init__(
        self,
        kube: KubeWriter,
        *,
        namespace: str,
        name: str,
        sleep: Sleep = asyncio.sleep,
        backoffs: Sequence[float] = WRITE_BACKOFFS,
        budget: Budgeted | None = None,
    ) -> None:
        self.namespace = namespace
        self.name = name
        raises = Raises("alert state ConfigMap", StoreUnavailable, StoreConflict)
        policy = RetryPolicy(backoffs=tuple(backoffs))
        self.documents = ShardedConfigMaps(
            kube, namespace, name, raises,
            keys_of=lambda cluster: (_data_key(cluster), _damaged_key(cluster)),
            policy=policy, sleep=sleep, log=log,
        )  # fmt: skip
        self._decoded = Decoded()
        self._budget = budget or Budgeted()
        self._conflicted: set[str] = set()  # read these again with a GET, never the copy
        self._loaded: dict[str, tuple[Snapshot, Stored]] = {}  # the last load of each

    async def load(self, cluster: str) -> Stored:
        """Raises: StoreUnavailable (the API server refused or could not be reached)."""
        fresh = cluster in self._conflicted
        found = await self.documents.read(cluster, fresh=fresh)
        self._conflicted.discard(cluster)
        return self._stored(cluster, found)

    async def load_many(self, clusters: Sequence[str]) -> list[Stored]:
        """Read at once: from the watched copy, no request. Raises: StoreUnavailable."""
        if self._conflicted.intersection(clusters):
            return [await self.load(cluster) for cluster in clusters]
        found = await self.documents.read_many(clusters)
        return [self._stored(c, f) for c, f in zip(clusters, found, strict=True)]

    def _stored(self, cluster: str, found: Snapshot) -> Stored:
        """The state `found` holds; the one made before when it is the same snapshot (the
        copy's document unchanged)."""
        last = self._loaded.get(cluster)
        if last is not None and last[0] is found:
            return last[1]
        document = self.documents.shard(cluster).name
        where = f"key {_damaged_key(cluster)} of ConfigMap {self.namespace}/{document}"
        text = found.data.get(_data_key(cluster), "")
        stored = self._decoded.stored(cluster, text, found.version, where)
        if stored.damage is None:  # a damaged one is said again at every load
            self._loaded[cluster] = (found, stored)
        return stored

    async def save(self, state: ClusterAlerts, version: str, *, aside: Damage | None = None) -> str:
        """Raises: StoreConflict, StoreUnavailable."""
        data: dict[str, str | None] = {_data_key(state.cluster): self._budget.text(state)}
        if aside is not None:
            data[_damaged_key(state.cluster)] = aside.text
        try:
            return await self.documents.write(state.cluster, data, version)
        except StoreConflict:
            self._conflicted.add(state.cluster)
            raise

    def close(self) -> None:
        """Stop following the ConfigMaps (the Kubernetes gateway belongs to the service)."""
        self.documents.close()


def open_store(
    settings: Settings,
    kube: KubeWriter,
    metrics: Metrics | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> AlertStore:
    """The store `state.backend` names; `kube` is the first cluster's gateway (for configmap),
    `metrics` where the budget is counted, `clock` the service's (what owes Slack is stamped
    with it, and the budget's notices judged by it).

    Raises:
        ConfigError: the configmap backend without a gateway that can write objects.
    """
    state = settings.state
    budget = Budgeted(metrics, clock=clock)
    store: AlertStore
    if state.backend == "sqlite":
        store = SqliteStore(state.path, budget=budget)
    else:
        store = ConfigMapStore(kube, namespace=state.namespace, name=state.configmap, budget=budget)
    if settings.pagerduty is None:
        return store
    return PagingStore(store, settings.pagerduty.severities)


class PagingStore:
    """A store whose every save also owes PagerDuty what the saved incidents have come to owe
    (`bot.alerts.pages.owe_pages`): whatever changed an incident (a check, a command, a fleet
    step, a replica), the events are owed in the same compare-and-set as the change."""

    def __init__(self, inner: AlertStore, severities: Collection[str]) -> None:
        self._inner = inner
        self._severities = frozenset(severities)

    async def load(self, cluster: str) -> Stored:
        return await self._inner.load(cluster)

    async def load_many(self, clusters: Sequence[str]) -> list[Stored]:
        return await self._inner.load_many(clusters)

    async def save(self, state: ClusterAlerts, version: str, *, aside: Damage | None = None) -> str:
        owing = pages.owe_pages(state, self._severities)
        return await self._inner.save(owing, version, aside=aside)

    def close(self) -> None:
        self._inner.close()


def _data_key(cluster: str) -> str:
    return f"{cluster}.json"


def _damaged_key(cluster: str) -> str:
    return f"{cluster}.damaged.json"


def _parsed(cluster: str, text: str, version: str, kept_at: str) -> Stored:
    """The stored document, or empty state with the damage that a save keeps at `kept_at`."""
    try:
        return Stored(load_cluster(cluster, text), version)
    except DamagedState as e:
        log.error("alert state of %s is unreadable (%s); starting from empty state", cluster, e)
        return Stored(ClusterAlerts(cluster), version, Damage(text, str(e), kept_at))
