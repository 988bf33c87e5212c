"""`pods/log` as kube-apiserver and the kubelet answer it, read through our gateway.

Text, not JSON; `container`, `previous`, `tailLines`; and the refusals with their upstream words
(kubernetes `pkg/registry/core/pod/strategy.go` LogLocation, `pkg/kubelet/kubelet_pods.go`
validateContainerLogStatus): no previous instance is a 400, so is a container never started.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from bot.core import errors
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator, breakage

NS = "keda"
POD = "keda-operator-metrics-apiserver-7b9f6c5d48-p4x9z"
CONTAINER = "keda-operator-metrics-apiserver"
PODGROUP_API = "scheduling.run.ai/v2alpha2"


pytestmark = pytest.mark.sim(scenarios=["default"])


async def test_a_log_is_plain_text_cut_to_the_tail_asked_for(sim: Simulator) -> None:
    sim.write_log(NS, POD, CONTAINER, [f"line {i}" for i in range(30)])
    url = f"{sim.url}/api/v1/namespaces/{NS}/pods/{POD}/log?tailLines=3&container={CONTAINER}"

    async with aiohttp.ClientSession() as session, session.get(url) as response:
        assert response.status == 200
        assert response.content_type == "text/plain"
        assert await response.text() == "line 27\nline 28\nline 29\n"


async def test_the_previous_instance_of_a_restarted_container_has_its_own_log(
    sim: Simulator, gateway: KubeGateway
) -> None:
    breakage.metrics_apiserver_crashloop(sim)

    previous = await gateway.read_pod_log(NS, POD, container=CONTAINER, previous=True, tail_lines=1)
    current = await gateway.read_pod_log(
        NS, POD, container=CONTAINER, previous=False, tail_lines=20
    )

    assert previous == "fatal error: runtime: out of memory\n"
    assert "out of memory" not in current and current


async def test_previous_of_a_container_that_never_restarted_is_a_bad_request(
    gateway: KubeGateway,
) -> None:
    with pytest.raises(errors.KubeInvalid, match=r'previous terminated container "keda-operator'):
        await gateway.read_pod_log(NS, POD, container=CONTAINER, previous=True, tail_lines=20)


@pytest.mark.parametrize(
    ("query", "said"),
    [
        pytest.param("container=nope", f"container nope is not valid for pod {POD}", id="unknown"),
        pytest.param("tailLines=x", "tailLines", id="tail-not-a-number"),
    ],
)
async def test_a_wrong_container_or_tail_is_refused(sim: Simulator, query: str, said: str) -> None:
    body = await _get(sim, f"/api/v1/namespaces/{NS}/pods/{POD}/log?{query}")

    assert body["code"] == 400 and said in body["message"]


async def test_a_pod_with_several_containers_needs_one_named(sim: Simulator) -> None:
    two = sim.get("v1", "Pod", POD, NS)
    assert two is not None
    two["metadata"] = {"name": "two", "namespace": NS}
    two["spec"]["containers"] = [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]
    sim.apply(two)

    body = await _get(sim, f"/api/v1/namespaces/{NS}/pods/two/log")

    assert body["message"] == "a container name must be specified for pod two, choose one of: [a b]"


async def test_a_container_waiting_on_its_image_has_no_log_yet(
    sim: Simulator, gateway: KubeGateway
) -> None:
    waiting = {"waiting": {"reason": "ImagePullBackOff"}}
    pod = sim.get("v1", "Pod", POD, NS)
    assert pod is not None
    pod["status"]["containerStatuses"][0]["state"] = waiting
    sim.apply(pod)

    with pytest.raises(errors.KubeInvalid, match="waiting to start: trying and failing to pull"):
        await gateway.read_pod_log(NS, POD, container=CONTAINER, previous=False, tail_lines=5)


async def test_the_log_of_an_unknown_pod_is_not_found_and_other_verbs_are_refused(
    sim: Simulator,
) -> None:
    path = f"/api/v1/namespaces/{NS}/pods/nope/log"
    assert (await _get(sim, path))["code"] == 404
    url = f"{sim.url}/api/v1/namespaces/{NS}/pods/{POD}/log"
    async with aiohttp.ClientSession() as session, session.post(url) as response:
        assert response.status == 405


async def test_discovery_lists_pods_log_as_a_get_only_subresource(sim: Simulator) -> None:
    listing = await _get(sim, "/api/v1")

    entry = next(r for r in listing["resources"] if r["name"] == "pods/log")
    assert entry["verbs"] == ["get"]


async def _get(sim: Simulator, path: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session, session.get(f"{sim.url}{path}") as response:
        body: dict[str, Any] = await response.json()
        return body


async def test_heal_undoes_the_crashloop_and_the_quota_breakage(sim: Simulator) -> None:
    def state() -> tuple[list[str], Any, str]:
        groups = sim.store.list_objects(sim.store.resolve(PODGROUP_API, "podgroups"), "annia")
        pod = sim.get("v1", "Pod", POD, NS)
        assert pod is not None
        names = sorted(g["metadata"]["name"] for g in groups["items"])
        return names, pod["status"], sim.logs.text(NS, POD, CONTAINER, True)

    before = state()
    breakage.metrics_apiserver_crashloop(sim)
    breakage.gpu_quota_exhausted(sim)
    assert state() != before

    breakage.heal(sim)

    assert state() == before
