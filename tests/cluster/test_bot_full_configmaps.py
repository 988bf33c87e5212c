"""A ConfigMap holds at most 1 MiB on a real API server (the simulator did not enforce it until
the differential tests caught it): what the bot does when its request memory or its alert state
reaches the limit. It must keep working (docs/design.md §2 "Safety" and "Delivery"): reads run,
a change whose replay cannot be ruled out is refused with "try again".
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from conftest import BOT_CONTEXT
from controlplane import BOT_NAMESPACE, ControlPlane
from seeding import Seeder, find
from waiting import wait_until

from bot.alerts.store import ConfigMapStore
from bot.service import jobs_alerts
from testbed.stack import ALERT_CHANNEL, CLUSTER, ServiceStack, running_service

MEMORY = "kai-chatops-state-once"
STATE = "kai-chatops-state"
LIMIT = 1024 * 1024
REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
# 2100-01-01, padded to 1 kB: live entries, few enough keys that the whole object stays within
# what etcd takes in one request (2 MiB; 87 000 small entries would not).
FAR = "4102444800.".ljust(1024, "0")


def nearly_full(name: str, key_prefix: str, value: str) -> dict[str, Any]:
    """A ConfigMap of the bot's, so full that no entry of the bot's fits in the 1 MiB the server
    allows (it counts the values, not the keys: kube-apiserver's ConfigMap validation)."""
    data: dict[str, str] = {}
    size, index = 0, 0
    while size + len(value) <= LIMIT:
        data[f"{key_prefix}{index:06d}"] = value
        size += len(value)
        index += 1
    filler = LIMIT - size
    # The last entry takes what is left: a longer expiry (still readable and live) in the
    # request memory, more text elsewhere.
    expiry = value[0].isdigit()
    if filler >= (len(value) if expiry else 1):
        data[f"{key_prefix}{index:06d}"] = value.ljust(filler, "0") if expiry else "x" * filler
    metadata = {"name": name, "namespace": BOT_NAMESPACE}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


@pytest.fixture
async def in_cluster(
    control_plane: ControlPlane,
    controllers: object,
    scenario: list[dict[str, Any]],
    tmp_path: Path,
) -> AsyncIterator[ServiceStack]:
    admin = Seeder(control_plane.admin())
    for name in (MEMORY, STATE, f"{STATE}-{CLUSTER}", f"{STATE}-other-cluster"):
        admin.remove(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": BOT_NAMESPACE},
            }
        )
    overrides = {
        "state": {"path": str(tmp_path / "s.sqlite"), "backend": "configmap"},
        "alerts": {"hold": "0s", "interval": "1h"},
    }
    async with running_service(
        tmp_path,
        str(control_plane.bot_kubeconfig),
        context=BOT_CONTEXT,
        config_overrides=overrides,
    ) as served:
        yield served


async def test_with_the_request_memory_full_a_read_still_answers(
    in_cluster: ServiceStack, control_plane: ControlPlane
) -> None:
    Seeder(control_plane.admin()).replace(nearly_full(MEMORY, "slack-", FAR))
    reply = await in_cluster.command("health")
    assert reply.text.startswith("KAI health on sim: Healthy")


async def test_with_the_request_memory_full_a_change_is_refused_with_try_again(
    in_cluster: ServiceStack, control_plane: ControlPlane
) -> None:
    """The memory cannot take another entry: whether a replay of the request already ran on
    another replica cannot be ruled out, so a change does not run (issue 22: replays fail
    closed); the user is told to try again, nothing is patched, and the bot goes on."""
    admin = Seeder(control_plane.admin())
    admin.replace(nearly_full(MEMORY, "slack-", FAR))

    def requested() -> object:
        release = admin.read("helm.toolkit.fluxcd.io/v2", "HelmRelease", "keda", "flux-system")
        return (release["metadata"].get("annotations") or {}).get(REQUESTED_AT)

    before = requested()
    reply = await in_cluster.command("reconcile hr flux-system/keda")
    assert "Try again in a moment" in reply.text, reply.text
    assert requested() == before
    health = await in_cluster.command("health")
    assert health.text.startswith("KAI health on sim: Healthy")


async def test_with_the_alert_state_full_the_channel_is_told_in_the_servers_words(
    in_cluster: ServiceStack, control_plane: ControlPlane, scenario: list[dict[str, Any]]
) -> None:
    """The legacy shared ConfigMap of the release before the shards is full (another
    cluster's document fills it): while it exists every save is mirrored into it first, so it
    keeps the old 1 MiB limit and this cluster's alert cannot be saved (the server's 422, too
    long). Not silent: the channel is told that alerting for the cluster is held up and why,
    and no page goes out that could not be carried to its end (docs/alerts.md "Persistence":
    delete the legacy ConfigMap once every replica runs the new release)."""
    admin = Seeder(control_plane.admin())
    legacy = nearly_full(STATE, "other-cluster-", "x" * 4096)
    legacy["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "kai-chatops"}
    admin.replace(legacy)
    store = in_cluster.service.deps.alert_store
    assert isinstance(store, ConfigMapStore)
    copy = store.documents.watched  # the store reads through its copy: let it see the legacy

    def seen() -> bool:
        return copy.current() and copy.get(STATE) is not None

    await wait_until(seen, 10, "the legacy ConfigMap in the store's copy")
    config = find(scenario, "Config", "kai-config")
    for condition in config["status"]["conditions"]:
        if condition["type"] == "DependenciesFulfilled":
            condition.update(status="False", reason="dependencies_missing", message="broken")
    admin.write_status(config, config["status"])
    await jobs_alerts.keep_lease(in_cluster.service.deps)  # only the Lease's holder checks
    for _ in range(4):
        await jobs_alerts.check_cluster(in_cluster.service.deps, CLUSTER)
    posted = [m.text for m in in_cluster.slack.root_messages(ALERT_CHANNEL)]
    [notice] = posted
    assert notice.startswith(
        ":warning: kai-chatops cannot keep its alert state for cluster sim, so it posts no "
        "alerts for it until this is fixed"
    )
    assert "Too long: may not be more than 1048576 bytes" in notice
    state = admin.read("v1", "ConfigMap", STATE, BOT_NAMESPACE)
    assert f"{CLUSTER}.json" not in state["data"]  # the write was refused: the limit was reached


async def test_another_clusters_full_configmap_no_longer_stops_a_page(
    in_cluster: ServiceStack, control_plane: ControlPlane, scenario: list[dict[str, Any]]
) -> None:
    """One ConfigMap per cluster: another cluster's document filling its own leaves this
    cluster's page and its diagnosis stored and posted (issue 34: ~15 busy clusters stopped
    all paging when they shared one ConfigMap)."""
    admin = Seeder(control_plane.admin())
    neighbour = nearly_full(f"{STATE}-other-cluster", "other-cluster-", "x" * 4096)
    neighbour["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "kai-chatops"}
    admin.replace(neighbour)
    config = find(scenario, "Config", "kai-config")
    for condition in config["status"]["conditions"]:
        if condition["type"] == "DependenciesFulfilled":
            condition.update(status="False", reason="dependencies_missing", message="broken")
    admin.write_status(config, config["status"])
    await jobs_alerts.keep_lease(in_cluster.service.deps)
    for _ in range(2):
        await jobs_alerts.check_cluster(in_cluster.service.deps, CLUSTER)
    [root] = in_cluster.slack.root_messages(ALERT_CHANNEL)
    assert root.text.startswith(f"[CRITICAL] {CLUSTER}: Config kai-config"), root.text
    thread = in_cluster.slack.thread(ALERT_CHANNEL, root.ts)
    assert thread and thread[0].text.startswith(f"Diagnosis of kai on {CLUSTER}")
    state = admin.read("v1", "ConfigMap", f"{STATE}-{CLUSTER}", BOT_NAMESPACE)
    assert f"{CLUSTER}.json" in state["data"]
