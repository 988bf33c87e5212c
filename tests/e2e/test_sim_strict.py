"""The simulator refuses and answers what a real kube-apiserver refuses and answers (issue 12 B).

Table tests on the store and the strategic merge, then the same rules over HTTP: tests that pass
against the simulator should pass against a cluster. kubectl's view is in test_sim_kubectl.py.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from sim_gateway import connect
from waiting import wait_until

from bot.core import errors
from bot.kube import kinds
from testbed.sim import ApiError, Simulator, Store
from testbed.sim.resources import CRD_TYPE
from testbed.sim.selectors import parse_selector
from testbed.sim.strategic import strategic_merge

NOW = datetime(2026, 8, 24, 8, 0, 0, tzinfo=UTC)


pytestmark = pytest.mark.sim(scenarios=["default"])


def crd(
    plural: str, kind: str, *, status: bool, selectable: tuple[str, ...] = ()
) -> dict[str, Any]:
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True}
    if status:
        version["subresources"] = {"status": {}}
    if selectable:
        version["selectableFields"] = [{"jsonPath": path} for path in selectable]
    names = {"kind": kind, "plural": plural, "singular": kind.lower()}
    spec = {"group": "example.com", "scope": "Namespaced", "names": names, "versions": [version]}
    return {"metadata": {"name": f"{plural}.example.com"}, "spec": spec}


@pytest.fixture
def store() -> Store:
    store = Store(clock=lambda: NOW, history=20)
    store.create(CRD_TYPE, None, crd("widgets", "Widget", status=True, selectable=(".spec.color",)))
    store.create(CRD_TYPE, None, crd("gadgets", "Gadget", status=False))
    return store


# --- B6: strategic merge patch ----------------------------------------------------------------

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "d", "finalizers": ["a"]},
    "spec": {
        "replicas": 1,
        "template": {
            "spec": {
                "containers": [
                    {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]},
                    {"name": "sidecar", "image": "proxy:1"},
                ],
                "tolerations": [{"key": "gpu"}],
            }
        },
    },
}


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list(obj["spec"]["template"]["spec"]["containers"])


@pytest.mark.parametrize(
    ("patch", "check"),
    [
        pytest.param(
            {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}},
            lambda d: (
                [(c["name"], c["image"]) for c in containers(d)]
                == [("app", "app:2"), ("sidecar", "proxy:1")]
            ),
            id="container-merged-by-name",
        ),
        pytest.param(
            {"spec": {"template": {"spec": {"containers": [{"name": "new", "image": "n:1"}]}}}},
            lambda d: [c["name"] for c in containers(d)] == ["app", "sidecar", "new"],
            id="unknown-name-appended",
        ),
        pytest.param(
            {
                "spec": {
                    "template": {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}
                }
            },
            lambda d: [c["name"] for c in containers(d)] == ["app"],
            id="patch-delete-removes-one",
        ),
        pytest.param(
            {
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [{"name": "app", "env": [{"name": "B", "value": "2"}]}]
                        }
                    }
                }
            },
            lambda d: [e["name"] for e in containers(d)[0]["env"]] == ["A", "B"],
            id="env-merged-by-name",
        ),
        pytest.param(
            {"spec": {"template": {"spec": {"tolerations": [{"key": "cpu"}]}}}},
            lambda d: d["spec"]["template"]["spec"]["tolerations"] == [{"key": "cpu"}],
            id="list-without-strategy-replaced",
        ),
        pytest.param(
            {"metadata": {"finalizers": ["b", "a"]}},
            lambda d: d["metadata"]["finalizers"] == ["a", "b"],
            id="finalizers-merged-as-a-set",
        ),
        pytest.param(
            {
                "spec": {
                    "template": {"spec": {"containers": [{"$patch": "replace"}, {"name": "x"}]}}
                }
            },
            lambda d: containers(d) == [{"name": "x"}],
            id="patch-replace-list",
        ),
        pytest.param(
            {"spec": {"replicas": None}},
            lambda d: "replicas" not in d["spec"],
            id="null-deletes",
        ),
    ],
)
def test_strategic_merge_patch_merges_lists_by_patch_merge_key(
    patch: dict[str, Any], check: Any
) -> None:
    assert check(strategic_merge(DEPLOYMENT, patch))


def test_strategic_merge_patch_without_the_merge_key_is_refused() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"image": "nameless:1"}]}}}}
    with pytest.raises(ApiError) as caught:
        strategic_merge(DEPLOYMENT, patch)
    assert caught.value.code == 400
    assert "does not contain declared merge key: name" in caught.value.message


# --- B7: paged lists are one snapshot; continue tokens expire with compaction ------------------


def make_widgets(store: Store, *names: str) -> None:
    rtype = store.resolve("example.com/v1", "widgets")
    for name in names:
        store.create(rtype, "team", {"metadata": {"name": name}, "spec": {"color": "red"}})


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("create", ["w1", "w2", "w3"]),
        ("delete", ["w1", "w2", "w3"]),
        ("modify", ["red", "red", "red"]),
    ],
    ids=["created-meanwhile-not-shown", "deleted-meanwhile-still-shown", "modified-shown-as-was"],
)
def test_paged_list_is_served_at_the_first_page_resource_version(
    store: Store, change: str, expected: list[str]
) -> None:
    rtype = store.resolve("example.com/v1", "widgets")
    make_widgets(store, "w1", "w2", "w3")
    first = store.list_objects(rtype, "team", limit=1)
    if change == "create":
        make_widgets(store, "w0", "w9")
    elif change == "delete":
        store.delete(rtype, "team", "w3")
    else:
        store.patch(rtype, "team", "w3", "merge", {"spec": {"color": "blue"}})
    rest = store.list_objects(rtype, "team", continue_token=first["metadata"]["continue"])
    items = first["items"] + rest["items"]
    shown = [i["metadata"]["name"] if change != "modify" else i["spec"]["color"] for i in items]
    assert shown == expected
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


def test_paged_list_continue_token_expires_with_compaction(store: Store) -> None:
    rtype = store.resolve("example.com/v1", "widgets")
    make_widgets(store, "w1", "w2")
    first = store.list_objects(rtype, "team", limit=1)
    for size in range(25):  # more writes than the kept history (20): the snapshot is compacted
        store.patch(rtype, "team", "w2", "merge", {"spec": {"size": size}})

    with pytest.raises(ApiError) as caught:
        store.list_objects(rtype, "team", continue_token=first["metadata"]["continue"])

    body = caught.value.status_body()
    assert (body["code"], body["reason"], body["kind"]) == (410, "Expired", "Status")
    assert body["message"].startswith("The provided continue parameter is too old")
    rest = store.list_objects(rtype, "team", continue_token=body["metadata"]["continue"])
    assert [i["metadata"]["name"] for i in rest["items"]] == ["w2"]  # the inconsistent remainder


# --- B9: generation and unconditional updates ------------------------------------------------


@pytest.mark.parametrize(
    ("api_version", "plural", "write", "generation"),
    [
        ("example.com/v1", "gadgets", {"status": {"health": "Degraded"}}, 2),
        ("example.com/v1", "gadgets", {"metadata": {"labels": {"a": "b"}}}, 1),
        ("example.com/v1", "widgets", {"status": {"health": "Degraded"}}, 1),
        ("example.com/v1", "widgets", {"spec": {"color": "blue"}}, 2),
        ("v1", "configmaps", {"data": {"k": "v2"}}, None),
        ("coordination.k8s.io/v1", "leases", {"spec": {"holderIdentity": "b"}}, None),
    ],
    ids=[
        "no-status-subresource-status-change-bumps",
        "metadata-never-bumps",
        "status-subresource-status-ignored",
        "spec-change-bumps",
        "configmap-carries-no-generation",
        "lease-carries-no-generation",
    ],
)
def test_crd_without_status_subresource_bumps_generation_configmaps_carry_none(
    store: Store, api_version: str, plural: str, write: dict[str, Any], generation: int | None
) -> None:
    rtype = store.resolve(api_version, plural)
    body = {"metadata": {"name": "x"}, "spec": {"color": "red"}, "data": {"k": "v"}}
    created = store.create(rtype, "team", body)
    assert created["metadata"].get("generation") == (None if generation is None else 1)
    patched = store.patch(rtype, "team", "x", "merge", write)
    assert patched["metadata"].get("generation") == generation


@pytest.mark.parametrize(
    ("api_version", "plural", "refused"),
    [("example.com/v1", "gadgets", True), ("v1", "configmaps", False)],
    ids=["custom-resource-refused", "configmap-allowed"],
)
def test_put_without_resource_version_refused_for_custom_resources(
    store: Store, api_version: str, plural: str, refused: bool
) -> None:
    rtype = store.resolve(api_version, plural)
    store.create(rtype, "team", {"metadata": {"name": "x"}, "spec": {}})
    body = {"metadata": {"name": "x"}, "spec": {"v": 2}}
    if not refused:
        store.replace(rtype, "team", "x", body)
        return
    with pytest.raises(ApiError) as caught:
        store.replace(rtype, "team", "x", body)
    assert (caught.value.code, caught.value.reason) == (422, "Invalid")
    assert caught.value.message == (
        'Gadget.example.com "x" is invalid: metadata.resourceVersion: Invalid value: 0x0: '
        "must be specified for an update"
    )


# --- B10: watch lists and bookmarks -------------------------------------------------------------


@pytest.mark.parametrize(
    ("send_initial", "since", "types"),
    [
        (True, "", ["ADDED", "ADDED", "BOOKMARK"]),
        (False, "", []),
        (None, "", ["ADDED", "ADDED"]),
    ],
    ids=["watch-list", "no-initial-events", "legacy-watch"],
)
def test_watch_with_send_initial_events_ends_with_an_initial_events_end_bookmark(
    store: Store, send_initial: bool | None, since: str, types: list[str]
) -> None:
    make_widgets(store, "w1", "w2")
    rtype = store.resolve("example.com/v1", "widgets")
    first, stop = store.watch(
        rtype, "team", parse_selector(), since, lambda *_: None, send_initial=send_initial
    )
    stop()
    assert [kind for kind, _ in first] == types
    if send_initial:
        mark = first[-1][1]
        assert mark["metadata"] == {
            "resourceVersion": store.resource_version,
            "annotations": {"k8s.io/initial-events-end": "true"},
        }


# --- over HTTP ---------------------------------------------------------------------------------


async def http(
    sim: Simulator, method: str, path: str, *, body: Any = None, content_type: str = ""
) -> tuple[int, Any]:
    headers = {"Content-Type": content_type} if content_type else {}
    data = json.dumps(body).encode() if body is not None else None
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, sim.url + path, data=data, headers=headers) as answer,
    ):
        return answer.status, json.loads(await answer.read() or b"null")


APPS = "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications"
SMP = "application/strategic-merge-patch+json"


async def test_strategic_merge_patch_on_a_custom_resource_is_415(sim: Simulator) -> None:
    patch = {"metadata": {"annotations": {"a": "b"}}}
    code, body = await http(sim, "PATCH", f"{APPS}/kai-scheduler", body=patch, content_type=SMP)
    assert (code, body["reason"]) == (415, "UnsupportedMediaType")
    assert body["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )


@pytest.mark.parametrize(
    ("selector", "code"),
    [
        ("metadata.name=kai-scheduler", 200),
        ("metadata.namespace=argocd", 200),
        ("spec.project=default", 400),
        ("status.sync.status=Synced", 400),
    ],
)
async def test_field_selectors_on_custom_resources_only_name_and_namespace(
    sim: Simulator, selector: str, code: int
) -> None:
    answered, body = await http(sim, "GET", f"{APPS}?fieldSelector={selector}")
    assert answered == code
    if code == 400:
        label = selector.partition("=")[0]
        assert body["message"] == f"field label not supported: {label}"
        assert body["reason"] == "BadRequest"


async def test_field_selector_on_a_crd_selectable_field_is_served(sim: Simulator) -> None:
    sim.apply(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            **crd("widgets", "Widget", status=True, selectable=(".spec.color",)),
        }
    )
    sim.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    for name, color in (("w1", "red"), ("w2", "blue")):
        sim.apply(
            {
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"name": name, "namespace": "team"},
                "spec": {"color": color},
            }
        )
    code, body = await http(
        sim, "GET", "/apis/example.com/v1/namespaces/team/widgets?fieldSelector=spec.color=blue"
    )
    assert code == 200 and [i["metadata"]["name"] for i in body["items"]] == ["w2"]


async def read_events(sim: Simulator, path: str) -> list[dict[str, Any]]:
    async with aiohttp.ClientSession() as session, session.get(sim.url + path) as answer:
        assert answer.status == 200, await answer.text()
        return [json.loads(line) async for line in answer.content if line.strip()]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
            ["ADDED", "BOOKMARK"],
        ),
        ("allowWatchBookmarks=false", ["ADDED"]),
    ],
    ids=["watch-list", "legacy-no-bookmarks"],
)
async def test_e2e_watch_send_initial_events_ends_with_bookmark_over_http(
    sim: Simulator, query: str, expected: list[str]
) -> None:
    path = f"{APPS}?watch=1&timeoutSeconds=1&{query}"
    events = await read_events(sim, path)
    assert [e["type"] for e in events][: len(expected)] == expected
    if "BOOKMARK" in expected:
        mark = events[1]["object"]
        assert mark["kind"] == "Application"
        assert mark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    else:
        assert "BOOKMARK" not in [e["type"] for e in events]


async def test_allow_watch_bookmarks_honoured_on_an_idle_watch() -> None:
    async with Simulator(scenarios=["argocd"], bookmark_every=0.2) as sim:
        with_marks, without = await asyncio.gather(
            read_events(sim, f"{APPS}?watch=1&timeoutSeconds=1&allowWatchBookmarks=true"),
            read_events(sim, f"{APPS}?watch=1&timeoutSeconds=1"),
        )
    assert "BOOKMARK" in [e["type"] for e in with_marks]
    assert "BOOKMARK" not in [e["type"] for e in without]
    rv = with_marks[0]["object"]["metadata"]["resourceVersion"]
    marks = [e for e in with_marks if e["type"] == "BOOKMARK"]
    assert marks[0]["object"]["metadata"] == {"resourceVersion": rv}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "sendInitialEvents=true",
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            "resourceVersionMatch=NotOlderThan",
            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
    ],
)
async def test_watch_options_the_api_server_forbids_are_422(
    sim: Simulator, query: str, message: str
) -> None:
    code, body = await http(sim, "GET", f"{APPS}?watch=1&{query}")
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["message"].startswith('ListOptions.meta.k8s.io "" is invalid: ')
    assert message in body["message"]


# --- B7 end to end: the gateway lists again when its snapshot expired --------------------------


async def test_e2e_gateway_restarts_a_paged_list_on_410(tmp_path: Path) -> None:
    async with Simulator(scenarios=["default"], history=30) as sim:
        await restart_on_410(sim, tmp_path)


async def restart_on_410(sim: Simulator, tmp_path: Path) -> None:
    sim.faults.add(status=None, verb="list", resource="scaledjobs", times=2, delay=0.4)
    gateway = connect(sim, tmp_path)
    listing = asyncio.create_task(gateway.list_objects(kinds.SCALED_JOB, "annia", page_size=1))

    await wait_until(
        lambda: [r for r in sim.requests if r.resource == "scaledjobs" and r.status == 200],
        5,
        "the first page",
    )
    for step in range(40):  # while the second page is on its way, compact the first's snapshot
        sim.patch(
            "keda.sh/v1alpha1",
            "ScaledJob",
            "annia-trainer",
            "annia",
            patch={"metadata": {"annotations": {"step": str(step)}}},
        )
    listed = await listing
    gateway.close()

    assert sorted(o["metadata"]["name"] for o in listed) == ["annia-trainer", "annia-worker"]
    statuses = [r.status for r in sim.requests if r.resource == "scaledjobs"]
    assert statuses[:3] == [200, 410, 200]
    trainer = next(o for o in listed if o["metadata"]["name"] == "annia-trainer")
    assert trainer["metadata"]["annotations"]["step"] == "39"  # read again, as it is now


async def test_a_410_that_keeps_coming_is_an_error_not_a_partial_list(
    sim: Simulator, tmp_path: Path
) -> None:
    sim.faults.add(status=410, verb="list", resource="scaledjobs", times=None)
    gateway = connect(sim, tmp_path)
    with pytest.raises(errors.KubeExpired):
        await gateway.list_objects(kinds.SCALED_JOB, "annia", page_size=1)
    gateway.close()


# --- a create names the version of its URL, or none -------------------------------------------

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kai-chatops/leases"


@pytest.mark.parametrize(
    ("api_version", "code"),
    [("coordination.k8s.io/v1", 201), (None, 201), ("coordination.k8s.io/v2", 400), ("v1", 400)],
    ids=["the URL's", "none: the URL's is taken", "another version", "another group"],
)
async def test_a_create_in_another_api_version_than_its_url_is_400(
    sim: Simulator, api_version: str | None, code: int
) -> None:
    lease: dict[str, Any] = {"kind": "Lease", "metadata": {"name": "probe"}, "spec": {}}
    if api_version is not None:
        lease["apiVersion"] = api_version
    answered, body = await http(sim, "POST", LEASES, body=lease)
    assert answered == code
    if code == 400:
        assert body["message"] == (
            f"the API version in the data ({api_version}) does not match the expected API "
            "version (coordination.k8s.io/v1)"
        )
    stored = sim.get("coordination.k8s.io/v1", "Lease", "probe", "kai-chatops")
    assert (stored is not None) is (code == 201)
