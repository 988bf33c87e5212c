"""A Kubernetes gateway connected to a running simulator, for tests below the service level."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from bot.config.settings import ClusterSettings, KubernetesSettings
from bot.core import errors
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


class AnswerLost:
    """The gateway, but the answer to the first patch is lost after the API server applied it."""

    def __init__(self, gateway: KubeGateway) -> None:
        self._gateway = gateway
        self.lost = 1

    async def patch_object(self, *args: Any, **kw: Any) -> Any:
        applied = await self._gateway.patch_object(*args, **kw)
        if self.lost:
            self.lost -= 1
            raise errors.KubeWriteUnknown("no answer within 2s; the write may have been applied")
        return applied

    def __getattr__(self, name: str) -> Any:
        return getattr(self._gateway, name)
