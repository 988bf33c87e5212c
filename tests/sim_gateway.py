"""A Kubernetes gateway connected to a running simulator, for tests below the service level."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from bot.config.settings import ClusterSettings, KubernetesSettings
from bot.kube import gateway as kube
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator


def connect(
    sim: Simulator, tmp_path: Path, *, timeout: float = 2.0, retries: int = 0, **kw: Any
) -> KubeGateway:
    """The official client through our gateway, at the simulator's kubeconfig (context `sim`)."""
    kubeconfig = sim.write_kubeconfig(str(tmp_path / "kubeconfig"))
    cluster = ClusterSettings(name="sim", kubeconfig=kubeconfig, context="sim")
    settings = KubernetesSettings(timedelta(seconds=timeout), retries=retries)
    return kube.connect(cluster, settings, **kw)
