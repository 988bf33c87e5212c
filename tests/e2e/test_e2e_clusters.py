"""Several clusters: `--cluster NAME` reads the one it names, and alerts say which cluster."""

from __future__ import annotations

from pathlib import Path

from bot.service import jobs_alerts
from testbed.sim import Simulator, breakage
from testbed.stack import ALERT_CHANNEL, running_stack


async def test_commands_and_alerts_follow_the_cluster_they_name(tmp_path: Path) -> None:
    async with Simulator(scenarios=["default"]) as lab:
        lab_kubeconfig = lab.write_kubeconfig(str(tmp_path / "lab-kubeconfig"))
        two = {
            "clusters": [
                {"name": "sim", "kubeconfig": str(tmp_path / "kubeconfig"), "context": "sim"},
                {"name": "lab", "kubeconfig": lab_kubeconfig, "context": "sim"},
            ],
            "alerts": {"interval": "30s", "hold": "0s", "repeat": "4h"},
        }
        async with running_stack(tmp_path, config_overrides=two) as stack:
            breakage.dependencies_missing(lab)
            default = await stack.command("health")
            named = await stack.command("health --cluster lab")
            listing = await stack.command("scaledjobs --cluster lab")
            deps = stack.service.deps
            for cluster in ("sim", "lab"):
                await jobs_alerts.check_cluster(deps, cluster)
            roots = stack.slack.root_messages(ALERT_CHANNEL)
    assert default.text.startswith("KAI health on sim: Healthy")
    assert named.text.startswith("KAI health on lab: Degraded")
    assert "on lab" in listing.text
    assert len(roots) == 1
    assert "lab" in roots[0].text and "DependenciesFulfilled" in roots[0].text
