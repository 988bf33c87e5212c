"""A fleet of clusters in one service: one bounded set of threads, in two lanes (issue 15)."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from waiting import wait_until

from bot.config.settings import ClusterSettings, KubernetesSettings
from bot.core import errors
from bot.kube import gateway as kube
from bot.kube import kinds, threads
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator

pytestmark = pytest.mark.sim(scenarios=["default"])


def fleet(sim: Simulator, tmp_path: Path, size: int, threads: int) -> dict[str, KubeGateway]:
    """`size` clusters, each a context of one kubeconfig on the simulator."""
    names = [f"gpu-{i:03}" for i in range(size)]
    kubeconfig = sim.write_kubeconfig(
        str(tmp_path / "kubeconfig"), names[0], more_contexts=names[1:]
    )
    clusters = [ClusterSettings(n, kubeconfig, n) for n in names]
    settings = KubernetesSettings(timedelta(seconds=5), retries=0, threads=threads)
    return kube.connect_all(clusters, settings)


def client_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("kube")]


async def test_forty_clusters_read_at_once_use_no_more_threads_than_configured(
    sim: Simulator, tmp_path: Path
) -> None:
    gateways = fleet(sim, tmp_path, size=40, threads=6)
    before = set(client_threads())
    try:
        answers = await asyncio.gather(
            *(g.get_object(kinds.KAI_CONFIG, "kai-config") for g in gateways.values())
        )
        grown = set(client_threads()) - before
    finally:
        next(iter(gateways.values())).close()
    assert [a["metadata"]["name"] for a in answers if a] == ["kai-config"] * 40
    assert 0 < len(grown) <= 6


async def test_a_command_does_not_wait_for_threads_held_by_scheduled_checks(
    sim: Simulator, tmp_path: Path
) -> None:
    gateways = fleet(sim, tmp_path, size=3, threads=4)  # three command threads, one scheduled
    hung = sim.faults.add(None, resource="configs", delay=0.5, times=2)
    slow, other, asked = gateways.values()
    try:
        with threads.scheduled():
            checks = [
                asyncio.create_task(g.get_object(kinds.KAI_CONFIG, "kai-config"))
                for g in (slow, other)
            ]
        await wait_until(lambda: hung.hits >= 1, 5, "a scheduled check holds its thread")
        answer = await asyncio.wait_for(asyncio.shield(asked.server_version()), timeout=0.4)
        checks_pending = not all(c.done() for c in checks)
        await asyncio.gather(*checks)
    finally:
        slow.close()
    assert answer
    assert checks_pending


async def test_a_missing_context_in_a_shared_kubeconfig_names_its_cluster(
    sim: Simulator, tmp_path: Path
) -> None:
    kubeconfig = sim.write_kubeconfig(str(tmp_path / "kubeconfig"), "a", more_contexts=["b"])
    clusters = [ClusterSettings(n, kubeconfig, n) for n in ("a", "b", "c")]
    with pytest.raises(errors.ConfigError) as raised:
        kube.connect_all(clusters, KubernetesSettings())
    assert raised.value.problems[0].startswith(f"clusters[c]: cannot load kubeconfig {kubeconfig}")


def test_each_context_loads_as_the_clients_own_load_kube_config_loads_it(tmp_path: Path) -> None:
    """The fleet's kubeconfigs are read once and narrowed per context (`bot.kube.kubeconfig`);
    each context still ends up configured exactly as `kubernetes.config.load_kube_config` does
    it: a KUBECONFIG list where the first file naming an entry wins and the last
    current-context wins, tokens, and certificate paths relative to the file they came from."""
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    first, second = tmp_path / "one", tmp_path / "two"
    for where in (first, second):
        where.mkdir()
        (where / "ca.crt").write_text(f"CA of {where.name}\n")
    (first / "config").write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
        "clusters:\n"
        "- {name: a, cluster: {server: 'https://a.example:6443', certificate-authority: ca.crt}}\n"
        "- {name: shared, cluster: {server: 'https://first.example'}}\n"
        "users:\n- {name: a, user: {token: token-a}}\n"
        "contexts:\n- {name: a, context: {cluster: a, user: a, namespace: team-a}}\n"
        "- {name: s, context: {cluster: shared, user: a}}\n"
    )
    (second / "config").write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: b\n"
        "clusters:\n"
        "- {name: b, cluster: {server: 'https://b.example', certificate-authority: ca.crt}}\n"
        "- {name: shared, cluster: {server: 'https://second.example'}}\n"
        "users:\n- {name: b, user: {token: token-b}}\n"
        "contexts:\n- {name: b, context: {cluster: b, user: b}}\n"
    )
    paths = f"{first / 'config'}:{second / 'config'}"
    contexts = ["a", "b", "s", None]
    ours = kube.connect_all(
        [ClusterSettings(f"c{i}", paths, c) for i, c in enumerate(contexts)],
        KubernetesSettings(),
    )
    try:
        for i, context in enumerate(contexts):
            theirs = k8s_client.Configuration()
            k8s_config.load_kube_config(paths, context, client_configuration=theirs)
            mine = ours[f"c{i}"]._api.configuration
            for field in ("host", "ssl_ca_cert", "api_key", "verify_ssl", "cert_file"):
                assert getattr(mine, field) == getattr(theirs, field), (context, field)
        assert ours["c3"]._api.configuration.host == "https://b.example"  # the last current-context
        assert ours["c2"]._api.configuration.host == "https://first.example"  # the first wins
        ca = Path(ours["c1"]._api.configuration.ssl_ca_cert).read_text()
        assert ca == "CA of two\n"
    finally:
        next(iter(ours.values())).close()
