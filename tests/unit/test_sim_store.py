"""The simulator's object store keeps the API-server semantics the bot relies on (no HTTP)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from testbed.sim import ApiError, Store
from testbed.sim.resources import CRD_TYPE, ResourceType
from testbed.sim.selectors import parse_selector

NOW = datetime(2026, 8, 24, 8, 0, 0, tzinfo=UTC)


def crd(plural: str, kind: str, group: str, *, status: bool = True, scope: str = "Namespaced"):
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True}
    if status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower()},
            "versions": [version],
        },
    }


@pytest.fixture
def store() -> Store:
    store = Store(clock=lambda: NOW, history=50)
    store.create(CRD_TYPE, None, crd("widgets", "Widget", "example.com"))
    store.create(CRD_TYPE, None, crd("gadgets", "Gadget", "example.com", status=False))
    return store


def widgets(store: Store) -> ResourceType:
    return store.resolve("example.com/v1", "Widget")


def make(store: Store, name: str, labels: dict[str, str] | None = None, ns: str = "team"):
    body = {"metadata": {"name": name, "labels": labels or {}}, "spec": {"size": 1}}
    return store.create(widgets(store), ns, body)


def test_create_stamps_uid_time_generation_and_resource_version(store: Store) -> None:
    created = make(store, "w1")
    meta = created["metadata"]
    assert meta["uid"] and meta["creationTimestamp"] == "2026-08-24T08:00:00Z"
    assert meta["generation"] == 1
    assert meta["resourceVersion"] == store.resource_version
    assert created["apiVersion"] == "example.com/v1" and created["kind"] == "Widget"


def test_create_of_a_taken_name_is_already_exists(store: Store) -> None:
    make(store, "w1")
    with pytest.raises(ApiError) as caught:
        make(store, "w1")
    assert (caught.value.code, caught.value.reason) == (409, "AlreadyExists")
    assert caught.value.message == 'widgets.example.com "w1" already exists'


def test_missing_object_is_not_found_with_the_api_server_wording(store: Store) -> None:
    with pytest.raises(ApiError) as caught:
        store.get(widgets(store), "team", "nope")
    assert caught.value.code == 404
    assert caught.value.status_body()["message"] == 'widgets.example.com "nope" not found'


def test_spec_change_bumps_generation_but_metadata_and_status_do_not(store: Store) -> None:
    rtype = widgets(store)
    make(store, "w1")
    store.patch(rtype, "team", "w1", "merge", {"metadata": {"annotations": {"a": "b"}}})
    status = {"status": {"phase": "Ready"}}
    after_status = store.patch(rtype, "team", "w1", "merge", status, mode="status")
    assert after_status["metadata"]["generation"] == 1
    after_spec = store.patch(rtype, "team", "w1", "merge", {"spec": {"size": 2}})
    assert after_spec["metadata"]["generation"] == 2


def test_every_write_gets_a_newer_resource_version_and_a_no_op_keeps_it(store: Store) -> None:
    rtype = widgets(store)
    first = make(store, "w1")["metadata"]["resourceVersion"]
    second = store.patch(rtype, "team", "w1", "merge", {"spec": {"size": 5}})
    assert int(second["metadata"]["resourceVersion"]) > int(first)
    same = store.patch(rtype, "team", "w1", "merge", {"spec": {"size": 5}})
    assert same["metadata"]["resourceVersion"] == second["metadata"]["resourceVersion"]


@pytest.mark.parametrize("write", ["replace", "merge-patch"], ids=["put", "merge patch"])
def test_stale_resource_version_is_a_conflict(store: Store, write: str) -> None:
    rtype = widgets(store)
    stale = make(store, "w1")
    store.patch(rtype, "team", "w1", "merge", {"spec": {"size": 3}})
    with pytest.raises(ApiError) as caught:
        if write == "replace":
            store.replace(rtype, "team", "w1", stale)
        else:
            body = {"metadata": {"resourceVersion": stale["metadata"]["resourceVersion"]}}
            store.patch(rtype, "team", "w1", "merge", body)
    assert (caught.value.code, caught.value.reason) == (409, "Conflict")
    assert caught.value.message == (
        'Operation cannot be fulfilled on widgets.example.com "w1": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )


def test_main_resource_ignores_status_and_status_subresource_ignores_the_rest(
    store: Store,
) -> None:
    rtype = widgets(store)
    make(store, "w1")
    main = store.patch(rtype, "team", "w1", "merge", {"status": {"phase": "Hacked"}})
    assert "status" not in main
    body = {"spec": {"size": 9}, "metadata": {"labels": {"x": "y"}}, "status": {"phase": "Ok"}}
    result = store.patch(rtype, "team", "w1", "merge", body, mode="status")
    assert result["status"] == {"phase": "Ok"}
    # The labels the status write ignored stay as they were: none (an empty map is not kept).
    assert result["spec"] == {"size": 1} and "labels" not in result["metadata"]


def test_without_status_subresource_status_goes_through_the_main_resource_and_bumps_generation(
    store: Store,
) -> None:
    rtype = store.resolve("example.com/v1", "gadgets")
    body = {"metadata": {"name": "g"}, "spec": {}, "status": {"health": "Healthy"}}
    created = store.create(rtype, "team", body)
    assert created["status"] == {"health": "Healthy"}
    patched = store.patch(rtype, "team", "g", "merge", {"status": {"health": "Degraded"}})
    assert patched["status"] == {"health": "Degraded"}
    assert patched["metadata"]["generation"] == 2


def test_merge_patch_null_deletes_an_annotation(store: Store) -> None:
    rtype = widgets(store)
    make(store, "w1")
    annotations = {"keda/paused": "true", "keep": "me"}
    store.patch(rtype, "team", "w1", "merge", {"metadata": {"annotations": annotations}})
    patch = {"metadata": {"annotations": {"keda/paused": None}}}
    result = store.patch(rtype, "team", "w1", "merge", patch)
    assert result["metadata"]["annotations"] == {"keep": "me"}


def test_json_patch_understands_escaped_slashes(store: Store) -> None:
    rtype = widgets(store)
    make(store, "w1")
    ops = [
        {"op": "add", "path": "/metadata/annotations", "value": {}},
        {"op": "add", "path": "/metadata/annotations/keda.sh~1paused", "value": "true"},
        {"op": "replace", "path": "/spec/size", "value": 4},
    ]
    result = store.patch(rtype, "team", "w1", "json", ops)
    assert result["metadata"]["annotations"] == {"keda.sh/paused": "true"}
    assert result["spec"]["size"] == 4


def test_json_patch_failing_test_is_invalid_and_changes_nothing(store: Store) -> None:
    rtype = widgets(store)
    before = make(store, "w1")
    ops = [
        {"op": "replace", "path": "/spec/size", "value": 7},
        {"op": "test", "path": "/spec/size", "value": 1},
    ]
    with pytest.raises(ApiError) as caught:
        store.patch(rtype, "team", "w1", "json", ops)
    assert (caught.value.code, caught.value.reason) == (422, "Invalid")
    assert store.get(rtype, "team", "w1") == before


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", ["a", "b"]),
        ("app==web", ["a", "b"]),
        ("app!=web", ["c", "d"]),
        ("tier in (front, back)", ["a", "c"]),
        ("tier notin (front)", ["b", "c", "d"]),
        ("tier", ["a", "c"]),
        ("!tier", ["b", "d"]),
        ("app=web,tier=front", ["a"]),
        ("", ["a", "b", "c", "d"]),
    ],
    ids=[
        "equals",
        "double-equals",
        "not-equals",
        "in",
        "notin",
        "exists",
        "not-exists",
        "and",
        "none",
    ],
)
def test_label_selectors_pick_the_matching_objects(
    store: Store, selector: str, expected: list[str]
) -> None:
    make(store, "a", {"app": "web", "tier": "front"})
    make(store, "b", {"app": "web"})
    make(store, "c", {"app": "db", "tier": "back"})
    make(store, "d")
    listed = store.list_objects(widgets(store), selector=parse_selector(selector))
    assert [item["metadata"]["name"] for item in listed["items"]] == expected


def test_field_selectors_filter_on_name_and_namespace(store: Store) -> None:
    make(store, "a")
    make(store, "a", ns="other")
    make(store, "b", ns="other")
    by_name = parse_selector(field_selector="metadata.name=a,metadata.namespace!=team")
    listed = store.list_objects(widgets(store), selector=by_name)
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]] == [
        ("other", "a")
    ]


def test_malformed_selector_is_a_bad_request() -> None:
    with pytest.raises(ApiError) as caught:
        parse_selector("app in (a")
    assert caught.value.code == 400


def test_limit_and_continue_page_through_everything(store: Store) -> None:
    for name in ["e", "d", "c", "b", "a"]:
        make(store, name)
    rtype, seen, token = widgets(store), [], ""
    first = store.list_objects(rtype, "team", limit=2)
    assert first["metadata"]["remainingItemCount"] == 3
    while True:
        page = store.list_objects(rtype, "team", limit=2, continue_token=token)
        seen += [item["metadata"]["name"] for item in page["items"]]
        token = page["metadata"].get("continue", "")
        if not token:
            break
    assert seen == ["a", "b", "c", "d", "e"]


def test_creating_a_crd_serves_its_type_and_deleting_it_removes_objects(store: Store) -> None:
    make(store, "w1")
    assert store.find_type("example.com", "v1", "widgets") is not None
    store.delete(CRD_TYPE, None, "widgets.example.com")
    assert store.find_type("example.com", "v1", "widgets") is None
    store.create(CRD_TYPE, None, crd("widgets", "Widget", "example.com"))
    assert store.list_objects(widgets(store))["items"] == []


def test_finalizers_hold_a_delete_until_they_are_removed(store: Store) -> None:
    rtype = widgets(store)
    body = {"metadata": {"name": "w1", "finalizers": ["example.com/cleanup"]}, "spec": {}}
    store.create(rtype, "team", body)
    marked = store.delete(rtype, "team", "w1")
    assert marked["metadata"]["deletionTimestamp"] == "2026-08-24T08:00:00Z"
    store.patch(rtype, "team", "w1", "merge", {"metadata": {"finalizers": None}})
    with pytest.raises(ApiError):
        store.get(rtype, "team", "w1")


def test_dry_run_answers_without_storing(store: Store) -> None:
    rtype = widgets(store)
    before = store.resource_version
    answer = store.create(rtype, "team", {"metadata": {"name": "w1"}}, dry_run=True)
    assert answer["metadata"]["name"] == "w1"
    assert store.resource_version == before
    assert store.list_objects(rtype)["items"] == []


def test_watch_replays_history_after_a_resource_version_and_expires_old_ones() -> None:
    store = Store(clock=lambda: NOW, history=3)
    store.create(CRD_TYPE, None, crd("widgets", "Widget", "example.com"))
    rtype = widgets(store)
    start = store.resource_version
    for name in ["a", "b", "c", "d"]:
        store.create(rtype, "team", {"metadata": {"name": name}})
    with pytest.raises(ApiError) as caught:
        store.watch(rtype, None, parse_selector(), start, lambda kind, obj: None)
    assert (caught.value.code, caught.value.reason) == (410, "Expired")
    recent = str(int(store.resource_version) - 2)
    replayed, stop = store.watch(rtype, None, parse_selector(), recent, lambda kind, obj: None)
    stop()
    assert [(kind, obj["metadata"]["name"]) for kind, obj in replayed] == [
        ("ADDED", "c"),
        ("ADDED", "d"),
    ]


def test_watch_with_a_selector_sees_an_object_leave_as_deleted(store: Store) -> None:
    rtype = widgets(store)
    make(store, "w1", {"app": "web"})
    events: list[tuple[str, str]] = []
    initial, stop = store.watch(
        rtype,
        "team",
        parse_selector("app=web"),
        "0",
        lambda k, o: events.append((k, o["metadata"]["name"])),
    )
    store.patch(rtype, "team", "w1", "merge", {"metadata": {"labels": {"app": "db"}}})
    stop()
    store.patch(rtype, "team", "w1", "merge", {"metadata": {"labels": {"app": "web"}}})
    assert [kind for kind, _ in initial] == ["ADDED"]
    assert events == [("DELETED", "w1")]
