"""The Kubernetes gateway against the served simulator: raw objects, retries, timeouts, errors."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
import sim_gateway

from bot.config.settings import ClusterSettings, KubernetesSettings
from bot.core import errors
from bot.core.metrics import Metrics
from bot.kube import gateway as kube
from bot.kube import kinds
from bot.kube.gateway import KubeGateway
from bot.kube.identity import Impersonation
from testbed.sim import Simulator

APISERVICE = "v1beta1.external.metrics.k8s.io"


pytestmark = pytest.mark.sim(scenarios=["default"])


class SleepRecorder:
    """Stands in for asyncio.sleep so retry tests take no time and show each wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def waits() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def metrics() -> Metrics:
    return Metrics()


@pytest.fixture
def gateway(sim: Simulator, tmp_path: Path, waits: SleepRecorder, metrics: Metrics) -> KubeGateway:
    kubeconfig = sim.write_kubeconfig(str(tmp_path / "kubeconfig"))
    cluster = ClusterSettings(name="sim", kubeconfig=kubeconfig, context="sim")
    settings = KubernetesSettings(request_timeout=timedelta(seconds=1), retries=3)
    connected = kube.connect(cluster, settings, metrics, sleep=waits)
    yield connected
    connected.close()


async def test_get_returns_the_object_as_the_api_serves_it(gateway: KubeGateway) -> None:
    config = await gateway.get_object(kinds.KAI_CONFIG, "kai-config")
    assert config is not None
    assert config["kind"] == "Config"
    assert config["metadata"]["generation"] >= 1
    assert {c["type"] for c in config["status"]["conditions"]} >= {"Available", "Deployed"}


async def test_get_of_an_absent_object_is_none(gateway: KubeGateway) -> None:
    assert await gateway.get_object(kinds.KAI_CONFIG, "not-there") is None


async def test_list_honours_the_label_selector(gateway: KubeGateway) -> None:
    operands = await gateway.list_objects(
        kinds.DEPLOYMENT,
        "kai-scheduler",
        label_selector="app.kubernetes.io/managed-by=kai-operator",
    )
    names = {d["metadata"]["name"] for d in operands}
    assert "binder" in names
    assert "kai-operator" not in names


async def test_a_long_list_is_read_page_by_page(gateway: KubeGateway, sim: Simulator) -> None:
    for i in range(1100):
        sim.apply(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i}", "namespace": "annia"},
            }
        )
    ref = kinds.ResourceRef("", "v1", "configmaps", "ConfigMap", namespaced=True)
    sim.clear_requests()
    items = await gateway.list_objects(ref, "annia")
    assert len(items) == 1100
    assert len(sim.requests) == 3


async def test_server_errors_are_retried_with_backoff(
    gateway: KubeGateway, sim: Simulator, waits: SleepRecorder, metrics: Metrics
) -> None:
    sim.faults.add(503, resource="configs", times=2)
    assert await gateway.get_object(kinds.KAI_CONFIG, "kai-config") is not None
    assert waits.waits == [0.2, 0.5]
    retried = metrics.kube_requests.labels("sim", "get", "retried")._value.get()
    assert retried == 2


async def test_throttling_waits_as_long_as_retry_after_says(
    gateway: KubeGateway, sim: Simulator, waits: SleepRecorder
) -> None:
    sim.faults.add(429, resource="apiservices", retry_after=3)
    assert await gateway.get_object(kinds.APISERVICE, APISERVICE) is not None
    assert waits.waits == [3.0]


async def test_retries_are_bounded(gateway: KubeGateway, sim: Simulator) -> None:
    sim.faults.add(503, resource="configs", times=None)
    sim.clear_requests()
    with pytest.raises(errors.KubeUnavailable, match="answered 503"):
        await gateway.get_object(kinds.KAI_CONFIG, "kai-config")
    assert len(sim.requests) == 4


async def test_forbidden_fails_at_once_naming_the_missing_permission(
    gateway: KubeGateway, sim: Simulator
) -> None:
    sim.faults.add(403, resource="configs", times=None)
    sim.clear_requests()
    with pytest.raises(errors.KubeForbidden, match="grant verb 'get' on resource 'configs'"):
        await gateway.get_object(kinds.KAI_CONFIG, "kai-config")
    assert len(sim.requests) == 1


async def test_an_unreachable_api_server_is_reported_after_the_retries(
    gateway: KubeGateway, sim: Simulator, waits: SleepRecorder
) -> None:
    await sim.stop()
    with pytest.raises(errors.KubeUnavailable, match="cannot reach the API server"):
        await gateway.get_object(kinds.KAI_CONFIG, "kai-config")
    assert len(waits.waits) == 3


async def test_a_hung_api_server_times_out(sim: Simulator, tmp_path: Path) -> None:
    sim.faults.add(None, resource="configs", delay=3.0, times=None)
    impatient = sim_gateway.connect(sim, tmp_path, timeout=0.3, retries=0)
    with pytest.raises(errors.KubeUnavailable, match="no answer within the timeout"):
        await impatient.get_object(kinds.KAI_CONFIG, "kai-config")
    impatient.close()


async def test_a_slow_call_does_not_block_other_calls(gateway: KubeGateway, sim: Simulator) -> None:
    sim.faults.add(None, resource="apiservices", delay=0.8)
    slow = asyncio.create_task(gateway.get_object(kinds.APISERVICE, APISERVICE))
    config = await gateway.get_object(kinds.KAI_CONFIG, "kai-config")
    assert config is not None
    assert not slow.done()
    assert await slow is not None


async def test_merge_patch_null_removes_an_annotation(gateway: KubeGateway) -> None:
    ref = kinds.SCALED_JOB
    await gateway.patch_object(
        ref, "annia-worker", "annia", {"metadata": {"annotations": {"a": "1"}}}
    )
    patched = await gateway.patch_object(
        ref, "annia-worker", "annia", {"metadata": {"annotations": {"a": None}}}
    )
    assert "a" not in (patched["metadata"].get("annotations") or {})


async def test_a_stale_resource_version_is_a_conflict(gateway: KubeGateway) -> None:
    body = {"metadata": {"resourceVersion": "1", "annotations": {"a": "1"}}}
    with pytest.raises(errors.KubeConflict):
        await gateway.patch_object(kinds.SCALED_JOB, "annia-worker", "annia", body)


async def test_a_write_that_may_have_been_applied_is_not_retried(
    gateway: KubeGateway, sim: Simulator, waits: SleepRecorder
) -> None:
    sim.faults.add(503, resource="scaledjobs", verb="patch", times=None)
    sim.clear_requests()
    body = {"metadata": {"annotations": {"a": "1"}}}
    with pytest.raises(errors.KubeUnavailable, match="may or may not have been applied"):
        await gateway.patch_object(kinds.SCALED_JOB, "annia-worker", "annia", body)
    assert [r.verb for r in sim.requests] == ["patch"]
    assert waits.waits == []


async def test_a_throttled_write_is_retried_after_retry_after(
    gateway: KubeGateway, sim: Simulator, waits: SleepRecorder
) -> None:
    sim.faults.add(429, resource="scaledjobs", verb="patch", retry_after=2)
    body = {"metadata": {"annotations": {"a": "1"}}}
    patched = await gateway.patch_object(kinds.SCALED_JOB, "annia-worker", "annia", body)
    assert patched["metadata"]["annotations"]["a"] == "1"
    assert waits.waits == [2.0]


async def test_a_write_to_an_api_server_that_refuses_connections_is_retried(
    gateway: KubeGateway, sim: Simulator, waits: SleepRecorder
) -> None:
    await sim.stop()
    with pytest.raises(errors.KubeUnavailable, match="cannot reach the API server"):
        await gateway.patch_object(kinds.SCALED_JOB, "annia-worker", "annia", {"metadata": {}})
    assert len(waits.waits) == 3


async def test_an_api_server_without_a_version_endpoint_still_counts_as_reachable(
    gateway: KubeGateway, sim: Simulator
) -> None:
    sim.faults.add(404, path_contains="/version", times=None)
    assert await gateway.server_version() == "unknown"


@pytest.mark.parametrize(
    ("user", "groups"),
    [("alice@example.com", ("slack:チーム",)), ("jörg@example.com", ()), ("a\r\nb", ())],
    ids=["a group beyond Latin-1", "a user beyond ASCII", "CR LF"],
)
async def test_a_patch_as_a_person_no_header_can_carry_is_refused_and_never_sent(
    gateway: KubeGateway, sim: Simulator, user: str, groups: tuple[str, ...]
) -> None:
    # Issue 36, finding 3: http.client raised UnicodeEncodeError (or ValueError), uncaught.
    sim.clear_requests()
    person = Impersonation(user, groups, "U0ALICE")
    body = {"metadata": {"annotations": {"a": "1"}}}

    with pytest.raises(errors.NotAllowed, match="cannot be sent in an HTTP header"):
        await gateway.patch_object(
            kinds.SCALED_JOB, "annia-worker", "annia", body, acting_as=person
        )

    assert sim.requests == []
