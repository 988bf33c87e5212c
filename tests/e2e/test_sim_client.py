"""The official kubernetes client works unchanged against the served simulator.

The server runs on the test's event loop, so every sync client call goes through
`asyncio.to_thread`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import aiohttp
import pytest
import urllib3
from kubernetes import watch
from kubernetes.aio import client as aio_client
from kubernetes.aio import watch as aio_watch
from kubernetes.client import (
    ApiClient,
    ApiException,
    ApiregistrationV1Api,
    AppsV1Api,
    Configuration,
    CustomObjectsApi,
)
from waiting import wait_until

from testbed.sim import Simulator

KEDA = ("keda.sh", "v1alpha1")
KAI = ("kai.scheduler", "v1")


pytestmark = pytest.mark.sim(scenarios=["default"])


@pytest.fixture
def client(sim: Simulator) -> Iterator[ApiClient]:
    configuration = Configuration(host=sim.url)
    configuration.retries = 0  # surface every failure instead of urllib3 retrying it
    api_client = ApiClient(configuration)
    yield api_client
    api_client.close()


async def call(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return await asyncio.to_thread(func, *args, **kwargs)


async def test_reads_a_cluster_scoped_config_with_its_conditions(client: ApiClient) -> None:
    config = await call(
        CustomObjectsApi(client).get_cluster_custom_object, *KAI, "configs", "kai-config"
    )
    types = [c["type"] for c in config["status"]["conditions"]]
    assert types == ["Reconciling", "Deployed", "Available", "DependenciesFulfilled", "Ready"]


async def test_missing_object_raises_404_with_the_server_message(client: ApiClient) -> None:
    api = CustomObjectsApi(client)
    with pytest.raises(ApiException) as caught:
        await call(api.get_cluster_custom_object, *KAI, "configs", "nope")
    assert caught.value.status == 404
    assert json.loads(caught.value.body)["message"] == 'configs.kai.scheduler "nope" not found'


async def test_lists_scaledjobs_in_a_namespace_and_across_namespaces(client: ApiClient) -> None:
    api = CustomObjectsApi(client)
    in_annia = await call(api.list_namespaced_custom_object, *KEDA, "annia", "scaledjobs")
    everywhere = await call(api.list_cluster_custom_object, *KEDA, "scaledjobs")
    names = sorted(item["metadata"]["name"] for item in in_annia["items"])
    assert names == ["annia-trainer", "annia-worker"]
    assert len(everywhere["items"]) == 2 and everywhere["metadata"]["resourceVersion"]


async def test_merge_patch_pauses_and_null_resumes_a_scaledjob(
    client: ApiClient, sim: Simulator
) -> None:
    api = CustomObjectsApi(client)
    key = "autoscaling.keda.sh/paused"
    pause = {"metadata": {"annotations": {key: "true"}}}
    await call(
        api.patch_namespaced_custom_object, *KEDA, "annia", "scaledjobs", "annia-worker", pause
    )
    paused = sim.get("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia")
    assert paused is not None and paused["metadata"]["annotations"] == {key: "true"}
    resume = {"metadata": {"annotations": {key: None}}}
    await call(
        api.patch_namespaced_custom_object, *KEDA, "annia", "scaledjobs", "annia-worker", resume
    )
    resumed = sim.get("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia")
    assert resumed is not None and key not in resumed["metadata"].get("annotations", {})
    assert resumed["metadata"]["generation"] == 1


async def test_json_patch_with_escaped_key_is_applied(client: ApiClient, sim: Simulator) -> None:
    api = CustomObjectsApi(client)
    ops = [
        {"op": "add", "path": "/metadata/annotations", "value": {}},
        {"op": "add", "path": "/metadata/annotations/autoscaling.keda.sh~1paused", "value": "true"},
    ]
    await call(
        api.patch_namespaced_custom_object, *KEDA, "annia", "scaledjobs", "annia-trainer", ops,
        _content_type="application/json-patch+json",
    )  # fmt: skip
    trainer = sim.get("keda.sh/v1alpha1", "sj", "annia-trainer", "annia")
    assert trainer is not None
    assert trainer["metadata"]["annotations"] == {"autoscaling.keda.sh/paused": "true"}
    assert sim.requests[-1].content_type == "application/json-patch+json"


async def test_status_patch_changes_status_only(client: ApiClient) -> None:
    api = CustomObjectsApi(client)
    body = {"status": {"lastHandledReconcileAt": "token-1"}, "spec": {"suspend": True}}
    result = await call(
        api.patch_namespaced_custom_object_status,
        "helm.toolkit.fluxcd.io", "v2", "flux-system", "helmreleases", "keda", body,
    )  # fmt: skip
    assert result["status"]["lastHandledReconcileAt"] == "token-1"
    assert "suspend" not in result["spec"] and result["metadata"]["generation"] == 1


async def test_create_answers_201_with_the_object_and_delete_removes_it(
    client: ApiClient, sim: Simulator
) -> None:
    api = CustomObjectsApi(client)
    body = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledJob", "metadata": {"name": "tmp"}}
    created = await call(api.create_namespaced_custom_object, *KEDA, "annia", "scaledjobs", body)
    assert created["metadata"]["uid"] and sim.requests[-1].status == 201
    await call(api.delete_namespaced_custom_object, *KEDA, "annia", "scaledjobs", "tmp")
    assert sim.get("keda.sh/v1alpha1", "ScaledJob", "tmp", "annia") is None


async def test_deployments_listed_by_the_operator_label(client: ApiClient) -> None:
    selector = "app.kubernetes.io/managed-by=kai-operator"
    listed = await call(
        AppsV1Api(client).list_namespaced_deployment, "kai-scheduler", label_selector=selector
    )
    names = sorted(item.metadata.name for item in listed.items)
    assert names == [
        "admission",
        "binder",
        "kai-scheduler-default",
        "pod-grouper",
        "podgroup-controller",
        "queue-controller",
    ]
    assert all(item.status.available_replicas == 1 for item in listed.items)


async def test_reads_the_external_metrics_apiservice(client: ApiClient) -> None:
    apiservice = await call(
        ApiregistrationV1Api(client).read_api_service, "v1beta1.external.metrics.k8s.io"
    )
    available = [c for c in apiservice.status.conditions if c.type == "Available"]
    assert [(c.status, c.reason) for c in available] == [("True", "Passed")]
    assert apiservice.spec.service.name == "keda-operator-metrics-apiserver"


async def test_limit_and_continue_page_through_a_list(client: ApiClient) -> None:
    api = CustomObjectsApi(client)
    first = await call(api.list_cluster_custom_object, *KEDA, "scaledjobs", limit=1)
    token = first["metadata"]["continue"]
    second = await call(
        api.list_cluster_custom_object, *KEDA, "scaledjobs", limit=1, _continue=token
    )
    names = [first["items"][0]["metadata"]["name"], second["items"][0]["metadata"]["name"]]
    assert names == ["annia-trainer", "annia-worker"]
    assert "continue" not in second["metadata"]


async def test_watch_stream_sees_a_live_modification(client: ApiClient, sim: Simulator) -> None:
    api = CustomObjectsApi(client)
    seen: list[tuple[str, str]] = []
    watcher = watch.Watch()

    def consume() -> None:
        stream = watcher.stream(
            api.list_namespaced_custom_object, *KEDA, "annia", "scaledjobs", timeout_seconds=2
        )
        for event in stream:
            seen.append((event["type"], event["object"]["metadata"]["name"]))
            if event["type"] == "MODIFIED":
                watcher.stop()

    task = asyncio.create_task(asyncio.to_thread(consume))
    await wait_until(lambda: sim.store.watch_count == 1, 5, "the watch open")
    paused = {"metadata": {"annotations": {"autoscaling.keda.sh/paused": "true"}}}
    sim.patch("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia", patch=paused)
    await task
    assert ("MODIFIED", "annia-worker") in seen
    assert sorted(seen[:2]) == [("ADDED", "annia-trainer"), ("ADDED", "annia-worker")]


async def test_watch_from_a_listed_version_replays_later_changes_then_times_out(
    client: ApiClient, sim: Simulator
) -> None:
    api = CustomObjectsApi(client)
    listed = await call(api.list_namespaced_custom_object, *KEDA, "annia", "scaledjobs")
    sim.delete("keda.sh/v1alpha1", "ScaledJob", "annia-trainer", "annia")

    def consume() -> list[tuple[str, str]]:
        stream = watch.Watch().stream(
            api.list_namespaced_custom_object, *KEDA, "annia", "scaledjobs",
            resource_version=listed["metadata"]["resourceVersion"], timeout_seconds=1,
        )  # fmt: skip
        return [(e["type"], e["object"]["metadata"]["name"]) for e in stream]

    assert await call(consume) == [("DELETED", "annia-trainer")]


async def test_watch_from_a_compacted_version_is_410_gone(client: ApiClient) -> None:
    async with Simulator(scenarios=["keda"], history=2) as small:
        small_client = ApiClient(Configuration(host=small.url))
        api = CustomObjectsApi(small_client)

        def consume() -> None:
            stream = watch.Watch().stream(
                api.list_namespaced_custom_object, *KEDA, "annia", "scaledjobs",
                resource_version="1", timeout_seconds=1,
            )  # fmt: skip
            list(stream)

        with pytest.raises(ApiException) as caught:
            await call(consume)
        small_client.close()
    assert caught.value.status == 410


async def test_stale_resource_version_on_replace_is_409(client: ApiClient, sim: Simulator) -> None:
    api = CustomObjectsApi(client)
    stale = await call(
        api.get_namespaced_custom_object, *KEDA, "annia", "scaledjobs", "annia-worker"
    )
    sim.patch("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia", patch={"spec": {"x": 1}})
    with pytest.raises(ApiException) as caught:
        await call(
            api.replace_namespaced_custom_object,
            *KEDA,
            "annia",
            "scaledjobs",
            "annia-worker",
            stale,
        )
    assert caught.value.status == 409 and "the object has been modified" in caught.value.body


async def test_429_fault_carries_retry_after(client: ApiClient, sim: Simulator) -> None:
    sim.faults.add(429, resource="configs.kai.scheduler", retry_after=7)
    api = CustomObjectsApi(client)
    with pytest.raises(ApiException) as caught:
        await call(api.get_cluster_custom_object, *KAI, "configs", "kai-config")
    assert caught.value.status == 429 and caught.value.headers["Retry-After"] == "7"
    config = await call(api.get_cluster_custom_object, *KAI, "configs", "kai-config")
    assert config["metadata"]["name"] == "kai-config"


async def test_403_fault_reads_like_rbac(client: ApiClient, sim: Simulator) -> None:
    sim.faults.add(403, verb="get", resource="configs")
    with pytest.raises(ApiException) as caught:
        await call(
            CustomObjectsApi(client).get_cluster_custom_object, *KAI, "configs", "kai-config"
        )
    assert caught.value.status == 403
    assert json.loads(caught.value.body)["message"] == (
        'configs.kai.scheduler "kai-config" is forbidden: User '
        '"system:serviceaccount:kai-chatops:kai-chatops" cannot get resource "configs" '
        'in API group "kai.scheduler" at the cluster scope'
    )


async def test_delay_fault_trips_a_client_read_timeout(client: ApiClient, sim: Simulator) -> None:
    sim.faults.add(None, delay=1.0, resource="configs")
    api = CustomObjectsApi(client)
    with pytest.raises(urllib3.exceptions.MaxRetryError) as caught:
        await call(
            api.get_cluster_custom_object, *KAI, "configs", "kai-config", _request_timeout=0.2
        )
    assert isinstance(caught.value.reason, urllib3.exceptions.ReadTimeoutError)


async def test_api_down_refuses_connections_until_started_again(
    client: ApiClient, sim: Simulator
) -> None:
    api = CustomObjectsApi(client)
    url = sim.url
    await sim.stop()
    with pytest.raises(urllib3.exceptions.MaxRetryError):
        await call(api.get_cluster_custom_object, *KAI, "configs", "kai-config")
    await sim.start()
    assert sim.url == url
    config = await call(api.get_cluster_custom_object, *KAI, "configs", "kai-config")
    assert config["metadata"]["name"] == "kai-config"


async def test_refuse_all_drops_connections_without_an_answer(
    client: ApiClient, sim: Simulator
) -> None:
    sim.faults.refuse_all = True
    with pytest.raises(urllib3.exceptions.MaxRetryError):
        await call(CustomObjectsApi(client).get_cluster_custom_object, *KAI, "configs", "x")
    sim.faults.clear()
    config = await call(
        CustomObjectsApi(client).get_cluster_custom_object, *KAI, "configs", "kai-config"
    )
    assert config["metadata"]["name"] == "kai-config"


async def test_request_log_names_verb_resource_and_status(
    client: ApiClient, sim: Simulator
) -> None:
    api = CustomObjectsApi(client)
    sim.clear_requests()
    await call(api.get_cluster_custom_object, *KAI, "configs", "kai-config")
    await call(api.list_namespaced_custom_object, *KEDA, "annia", "scaledjobs")
    patch = {"metadata": {"labels": {"a": "b"}}}
    await call(
        api.patch_namespaced_custom_object, *KEDA, "annia", "scaledjobs", "annia-worker", patch
    )
    logged = [(r.verb, r.resource, r.namespace, r.name, r.status) for r in sim.requests]
    assert logged == [
        ("get", "configs", None, "kai-config", 200),
        ("list", "scaledjobs", "annia", None, 200),
        ("patch", "scaledjobs", "annia", "annia-worker", 200),
    ]
    assert sim.requests[-1].content_type == "application/merge-patch+json"


async def test_metadata_only_list_carries_metadata_but_no_spec(sim: Simulator) -> None:
    accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
    url = f"{sim.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    async with (
        aiohttp.ClientSession() as session,
        session.get(url, headers={"Accept": accept}) as got,
    ):
        listed = await got.json()
    assert listed["kind"] == "PartialObjectMetadataList"
    names = {item["metadata"]["name"] for item in listed["items"]}
    assert "configs.kai.scheduler" in names and "scaledjobs.keda.sh" in names
    assert all(set(item) == {"kind", "apiVersion", "metadata"} for item in listed["items"])


async def test_replace_with_the_current_version_succeeds(client: ApiClient) -> None:
    api = CustomObjectsApi(client)
    current = await call(
        api.get_namespaced_custom_object, *KEDA, "annia", "scaledjobs", "annia-worker"
    )
    current["spec"]["maxReplicaCount"] = 3
    replaced = await call(
        api.replace_namespaced_custom_object, *KEDA, "annia", "scaledjobs", "annia-worker", current
    )
    assert replaced["spec"]["maxReplicaCount"] == 3 and replaced["metadata"]["generation"] == 2


async def test_dry_run_patch_answers_the_result_but_stores_nothing(
    client: ApiClient, sim: Simulator
) -> None:
    api = CustomObjectsApi(client)
    patch = {"metadata": {"labels": {"tried": "yes"}}}
    answer = await call(
        api.patch_namespaced_custom_object, *KEDA, "annia", "scaledjobs", "annia-worker", patch,
        dry_run="All",
    )  # fmt: skip
    assert answer["metadata"]["labels"]["tried"] == "yes"
    stored = sim.get("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia")
    assert stored is not None and "tried" not in stored["metadata"]["labels"]


async def test_server_side_apply_is_refused_with_a_clear_415(client: ApiClient) -> None:
    api = CustomObjectsApi(client)
    with pytest.raises(ApiException) as caught:
        await call(
            api.patch_namespaced_custom_object, *KEDA, "annia", "scaledjobs", "annia-worker",
            {"metadata": {"labels": {"a": "b"}}},
            _content_type="application/apply-patch+yaml", field_manager="kai-chatops",
        )  # fmt: skip
    assert caught.value.status == 415
    assert "merge patch" in json.loads(caught.value.body)["message"]


async def test_asyncio_client_gets_and_watches_on_the_same_loop(sim: Simulator) -> None:
    async with aio_client.ApiClient(aio_client.Configuration(host=sim.url)) as api_client:
        api = aio_client.CustomObjectsApi(api_client)
        config = await api.get_cluster_custom_object(*KAI, "configs", "kai-config")
        watcher, seen = aio_watch.Watch(), []

        async def relabel_once_watched() -> None:
            await wait_until(lambda: sim.store.watch_count == 1, 5, "the watch open")
            labels = {"metadata": {"labels": {"seen": "yes"}}}
            sim.patch("keda.sh/v1alpha1", "sj", "annia-worker", "annia", patch=labels)

        relabel = asyncio.create_task(relabel_once_watched())
        list_scaledjobs = api.list_namespaced_custom_object
        async with watcher.stream(
            list_scaledjobs, *KEDA, "annia", "scaledjobs", timeout_seconds=2
        ) as stream:
            async for event in stream:
                seen.append(event["type"])
                if event["type"] == "MODIFIED":
                    watcher.stop()
        await relabel
    assert config["kind"] == "Config"
    assert seen == ["ADDED", "ADDED", "MODIFIED"]
