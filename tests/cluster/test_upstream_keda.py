"""KEDA v2.21.0's own operator and metrics adapter (the upstream tier, upstream/keda.py) answering
the bot: a pause and a resume of a real ScaledJob, KEDA's `Paused` condition following each; the
external-metrics APIService that the real aggregator marks unavailable when the adapter stops,
paged with a diagnosis naming the adapter's pods.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from alert_stack import HOLD, check, roots, words
from clocks import Clock
from controlplane import poll
from upstream import keda
from upstream.cluster import Upstream
from upstream.service import serving

from testbed.stack import ALERT_CHANNEL, CLUSTER, OPERATOR, ServiceStack

pytestmark = pytest.mark.clock_from_now
KEDA = "keda.sh/v1alpha1"
PAUSED = "autoscaling.keda.sh/paused"
NAMESPACE = "annia"


@pytest.fixture
async def stack(upstream: Upstream, tmp_path: Path, clock: Clock) -> AsyncIterator[ServiceStack]:
    async with serving(upstream, tmp_path, clock) as served:
        yield served


@pytest.fixture
def scaled_job(upstream: Upstream, request: pytest.FixtureRequest) -> Iterator[str]:
    """A ScaledJob of this test's own in `annia`, Ready as KEDA says; deleted afterwards."""
    name = f"upstream-{request.node.name[5:30].replace('_', '-').strip('-')}"
    body = keda.scaled_job(name, NAMESPACE)
    upstream.seeder.replace(body)
    wait_condition(upstream, name, "Ready", "True")
    try:
        yield name
    finally:
        upstream.seeder.remove(body)


def scaled_job_now(upstream: Upstream, name: str) -> dict[str, Any]:
    found: dict[str, Any] = upstream.seeder.read(KEDA, "ScaledJob", name, NAMESPACE)
    return found


def condition(obj: Mapping[str, Any], type_: str) -> dict[str, Any]:
    items = (obj.get("status") or {}).get("conditions") or []
    return next((dict(c) for c in items if c["type"] == type_), {})


def wait_condition(upstream: Upstream, name: str, type_: str, status: str) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        upstream.plane.check_alive()
        got = condition(scaled_job_now(upstream, name), type_)
        return got if got.get("status") == status else None

    return poll(f"ScaledJob {name} {type_}={status}, as KEDA says", reached, 60)


def keda_events(upstream: Upstream, name: str) -> list[dict[str, Any]]:
    """The Events KEDA's operator recorded about the ScaledJob `name`, oldest first (through
    client-go's events.k8s.io recorder: `reportingController` keda-operator, `eventTime`)."""
    listed = upstream.seeder.dynamic.resources.get(api_version="v1", kind="Event").get(
        namespace=NAMESPACE, field_selector=f"involvedObject.name={name}"
    )
    events = [e for e in listed.to_dict()["items"] if e.get("reportingComponent") == keda.OPERATOR]
    return sorted(events, key=lambda e: str(e.get("eventTime") or e.get("firstTimestamp")))


async def confirm(stack: ServiceStack, text: str) -> str:
    reply = await stack.command(text)
    assert reply.message is not None, reply.text
    answer = await stack.click("Confirm", reply.message)
    assert answer.message is not None
    return str(answer.message["text"])


async def test_a_pause_and_a_resume_are_followed_by_kedas_own_paused_condition(
    stack: ServiceStack, upstream: Upstream, scaled_job: str
) -> None:
    paused = await confirm(stack, f"pause {NAMESPACE}/{scaled_job} for 1h upstream check")
    assert f"ScaledJob {NAMESPACE}/{scaled_job} on {CLUSTER} is paused" in paused
    assert "KEDA acknowledged it (its Paused condition is True)" in paused
    obj = scaled_job_now(upstream, scaled_job)
    assert obj["metadata"]["annotations"][PAUSED] == "true"
    assert obj["metadata"]["annotations"]["kai-chatops/paused-by"] == OPERATOR
    assert condition(obj, "Paused") == {
        "type": "Paused",
        "status": "True",
        "reason": "ScaledJobPaused",
        "message": "ScaledJob is paused",
    }

    resumed = await confirm(stack, f"resume {NAMESPACE}/{scaled_job}")
    assert "resumed" in resumed.lower()
    assert "KEDA acknowledged it (its Paused condition is False)" in resumed, resumed
    obj = scaled_job_now(upstream, scaled_job)
    assert PAUSED not in (obj["metadata"].get("annotations") or {})
    # KEDA's own record of both transitions. Its Paused condition may read True again
    # afterwards: the scale loop it restarts writes the conditions of the copy it read before
    # the unpause was written (kedacore/keda#5251; pkg/scaling/scale_handler.go checkScalers
    # then handleResult), which is why the bot reads a pause from the annotation.
    reasons = [e["reason"] for e in keda_events(upstream, scaled_job)]
    assert reasons.index("ScaledJobPaused") < reasons.index("ScaledJobUnpaused"), reasons
    assert stack.slack.violations == []


async def test_the_aggregator_marks_the_api_unavailable_when_the_adapter_stops_and_it_pages(
    stack: ServiceStack, upstream: Upstream, clock: Clock
) -> None:
    upstream.process("keda-adapter").stop()
    try:
        # The aggregator would find out at its next look, within 30 s: make it look now.
        upstream.nudge_aggregator()
        verdict = upstream.wait_apiservice("False")
        reply = await stack.command("health")
        assert f"APIService {keda.APISERVICE}: Degraded" in reply.text, reply.text
        assert verdict["reason"] in reply.text

        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)
        [root] = [r for r in roots(stack) if keda.APISERVICE in r.text]
        assert root.text.startswith(f"[CRITICAL] {CLUSTER}: APIService {keda.APISERVICE}")
        [diagnosis, *_] = stack.slack.thread(ALERT_CHANNEL, root.ts)
        shown = words(diagnosis)
        pods = upstream.seeder.dynamic.resources.get(api_version="v1", kind="Pod").get(
            namespace=keda.NAMESPACE, label_selector=f"app={keda.ADAPTER}"
        )
        names = [p.metadata.name for p in pods.items]
        assert names and all(name in shown for name in names), shown
        assert f"Service {keda.NAMESPACE}/{keda.ADAPTER}" in shown
    finally:
        upstream.start_keda_adapter()
        upstream.nudge_aggregator()
        upstream.wait_apiservice("True")
