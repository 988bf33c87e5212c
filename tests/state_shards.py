"""The ConfigMap alert store's shards in tests: their names, and waiting for the store's watched
copy to hold what the simulator holds (a test that writes the simulator behind the store's back
and reads at once would otherwise race the watch, as another replica's write does for a moment).
"""

from __future__ import annotations

from typing import Any

from waiting import wait_until

from bot.alerts.store import ConfigMapStore
from testbed.sim import Simulator

NAMESPACE = "kai-chatops"
LEGACY = "kai-chatops-state"  # the one ConfigMap of the release before the shards


def shard(cluster: str) -> tuple[str, str, str, str]:
    """The simulator's address of `cluster`'s alert state ConfigMap."""
    name = "kai-chatops-state--fleet" if cluster == "_fleet" else f"{LEGACY}-{cluster}"
    return ("v1", "ConfigMap", name, NAMESPACE)


LEGACY_CM = ("v1", "ConfigMap", LEGACY, NAMESPACE)


def _version(found: Any) -> str:
    return "" if found is None else str(found["metadata"]["resourceVersion"])


async def caught_up(store: ConfigMapStore, sim: Simulator, *clusters: str) -> None:
    """Wait until the store's copy holds what the simulator holds of the legacy ConfigMap and
    of `clusters`' shards (a copy that cannot be followed is not read: nothing to wait for)."""
    watched = store.documents.watched
    if not await watched.settled(5.0):  # listed once (a busy machine may not have yet)
        return
    names = [LEGACY, *(shard(c)[2] for c in clusters)]

    def same() -> bool:
        return all(
            _version(watched.get(name)) == _version(sim.get("v1", "ConfigMap", name, NAMESPACE))
            for name in names
        )

    await wait_until(same, 5, "the store's copy to catch up with the simulator")
