"""`/kai health` and the KAI pages against KAI Scheduler v0.12.0's own operator (the upstream tier,
upstream/kai.py): a real install reported Healthy; `DependenciesFulfilled` False written by the
operator itself when `kai-config` enables Prometheus without Prometheus' operator, paged with its
message as the operator wrote it; `kai-config` deleted paged critical. Signed Slack requests in,
the service reading the real API server with its own ServiceAccount token, the reply out.

Each test leaves the install as it found it (healthy again, as the operator says).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from alert_stack import HOLD, check, roots, words
from clocks import Clock
from upstream import kai
from upstream.cluster import Upstream
from upstream.service import serving

from testbed.slackemu import PostedMessage
from testbed.stack import ALERT_CHANNEL, CLUSTER, ServiceStack

# The API server stamps objects with the real time; the checks measure them by the clock.
pytestmark = pytest.mark.clock_from_now


@pytest.fixture
async def stack(upstream: Upstream, tmp_path: Path, clock: Clock) -> AsyncIterator[ServiceStack]:
    async with serving(upstream, tmp_path, clock) as served:
        yield served


async def page(stack: ServiceStack, clock: Clock, subject: str) -> PostedMessage:
    """Run the alert check until `hold` has passed; the one root naming `subject`."""
    await check(stack.service)
    clock.advance(HOLD)
    await check(stack.service)
    found = [r for r in roots(stack) if subject in r.text]
    assert len(found) == 1, [r.text for r in roots(stack)]
    return found[0]


def set_prometheus(upstream: Upstream, enabled: bool) -> None:
    upstream.seeder.patch(*kai.CONFIG, None, {"spec": {"prometheus": {"enabled": enabled}}})


async def test_a_real_healthy_install_is_healthy_in_every_part(
    stack: ServiceStack, upstream: Upstream
) -> None:
    reply = await stack.command("health")
    assert reply.text.startswith(f"KAI health on {CLUSTER}: Healthy"), reply.text
    assert "Config kai-config: Healthy" in reply.text
    assert "SchedulingShard default: Healthy" in reply.text
    assert "Deployment kai-scheduler/kai-operator: Healthy" in reply.text
    assert "KAI CRDs: Healthy: all 6 present" in reply.text
    assert "APIService v1beta1.external.metrics.k8s.io: Healthy" in reply.text
    for operand in kai.OPERANDS:
        assert operand in reply.text  # each operand the operator built, found and available


async def test_prometheus_without_its_operator_is_paged_in_the_operators_own_words(
    stack: ServiceStack, upstream: Upstream, clock: Clock
) -> None:
    set_prometheus(upstream, True)
    try:
        config = kai.wait_dependencies(upstream.plane, "False")
        written = kai.conditions_of(config)["DependenciesFulfilled"]
        # KAI's words (pkg/operator/operands/deployable/deployable.go HasMissingDependencies).
        assert written["message"].strip() == "KAI-prometheus is missing prometheus operator"
        reply = await stack.command("health")
        assert reply.text.startswith(f"KAI health on {CLUSTER}: Degraded"), reply.text
        generation = config["metadata"]["generation"]
        assert (
            f"Config kai-config: Degraded: DependenciesFulfilled is False at generation "
            f"{generation}" in reply.text
        )
        assert "KAI-prometheus is missing prometheus operator" in reply.text

        root = await page(stack, clock, "Config kai-config")
        assert root.text.startswith(f"[CRITICAL] {CLUSTER}: Config kai-config")
        assert "KAI-prometheus is missing prometheus operator" in words(root)
    finally:
        set_prometheus(upstream, False)
        # KAI v0.12's operator keeps `Deployed` False ("KAI-prometheus: not deployed") after
        # Prometheus is turned off again, until it restarts: its Prometheus operand keeps the
        # desired state of the last reconcile that wanted one (pkg/operator/operands/prometheus/
        # prometheus.go `DesiredState` returns early without clearing `lastDesiredState`; the
        # same through v0.17). A user restarts the operator; so does this test.
        operator = upstream.process("kai-operator")
        operator.stop()
        operator.start()
        kai.wait_healthy(upstream.plane)


async def test_a_deleted_kai_config_is_missing_and_paged_critical(
    stack: ServiceStack, upstream: Upstream, clock: Clock
) -> None:
    upstream.seeder.remove(
        {"apiVersion": kai.CONFIG[0], "kind": kai.CONFIG[1], "metadata": {"name": kai.CONFIG[2]}}
    )
    try:
        reply = await stack.command("health")
        assert reply.text.startswith(f"KAI health on {CLUSTER}: Missing"), reply.text
        assert "kai-config" in reply.text
        root = await page(stack, clock, "kai-config")
        assert root.text.startswith(f"[CRITICAL] {CLUSTER}:"), root.text
        [diagnosis, *_] = stack.slack.thread(ALERT_CHANNEL, root.ts)
        assert diagnosis.text.startswith("Diagnosis of ")
    finally:
        upstream.plane.apply(kai.kai_config())
        kai.wait_healthy(upstream.plane)
