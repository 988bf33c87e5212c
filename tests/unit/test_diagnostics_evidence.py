"""The evidence a diagnosis shows beside its pods (docs/design.md §2 "Diagnose"): log lines cut to a
readable length, label selectors matched as the API server matches them, EndpointSlice readiness
as the EndpointSlice API defines it, and which subject an alert's first thread reply diagnoses.

Pure tables over objects shaped as the API server returns them.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.diagnostics import evidence, selectors, subjects
from bot.diagnostics.subjects import DeploymentSubject, KaiSubject, KedaSubject

CUT = evidence.MAX_LOG_LINE  # 240


@pytest.mark.parametrize(
    ("length", "shown"),
    [
        pytest.param(CUT - 1, CUT - 1, id="one-short-kept"),
        pytest.param(CUT, CUT, id="exactly-240-kept-whole"),
        pytest.param(CUT + 1, CUT, id="one-over-cut-to-240"),
        pytest.param(5000, CUT, id="long-cut-to-240"),
    ],
)
def test_a_log_line_is_kept_up_to_240_characters_and_a_longer_one_ends_in_an_ellipsis(
    length: int, shown: int
) -> None:
    line = "x" * (length - 1) + "y"  # the last character tells a cut line from a whole one

    (tail,) = evidence.log_tail(line)

    assert len(tail) == shown
    if length <= CUT:
        assert tail == line
    else:
        assert tail == "x" * (CUT - 1) + "…"


def test_the_log_tail_drops_blank_lines_and_trailing_spaces_and_keeps_the_last_ones() -> None:
    text = "first  \n   \n\nsecond\t\nthird\n"

    assert evidence.log_tail(text) == ("first", "second", "third")
    assert evidence.log_tail(text, limit=2) == ("second", "third")


LABELS = {"app": "keda-operator-metrics-apiserver", "tier": "metrics"}


@pytest.mark.parametrize(
    ("selector", "matched"),
    [
        # A Service with no selector (its EndpointSlices managed by hand) selects no Deployment;
        # matching every one would diagnose a Deployment that serves nothing behind it.
        pytest.param({"service": {}}, False, id="empty-service-selector"),
        pytest.param({}, False, id="no-selector"),
        pytest.param({"matchLabels": {}, "matchExpressions": []}, False, id="empty-lists"),
        pytest.param({"service": {"app": LABELS["app"]}}, True, id="service"),
        pytest.param({"matchLabels": {"app": "other"}}, False, id="other-value"),
        pytest.param({"matchLabels": {"app": LABELS["app"], "x": "y"}}, False, id="label-absent"),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["metrics", "a"]}]},
            True,
            id="in",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]},
            False,
            id="in-other",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
            False,
            id="in-absent",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["web"]}]},
            True,
            id="notin",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["metrics"]}]},
            False,
            id="notin-listed",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]},
            True,
            id="notin-absent",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, True, id="exists"
        ),
        pytest.param(
            {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}, False, id="exists-not"
        ),
        pytest.param(
            {"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]},
            True,
            id="does-not-exist",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]},
            False,
            id="does-not-exist-there",
        ),
        pytest.param(
            {
                "matchLabels": {"app": LABELS["app"]},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}],
            },
            False,
            id="labels-and-a-failing-expression",
        ),
    ],
)
def test_a_selector_matches_labels_as_the_api_server_does_and_an_empty_one_matches_nothing(
    selector: dict[str, Any], matched: bool
) -> None:
    if "service" in selector:  # a Service's plain `spec.selector`
        selector = selectors.service_selector(selector["service"])

    assert selectors.matches(selector, LABELS) is matched


def test_a_selector_becomes_the_label_selector_text_the_api_server_filters_by() -> None:
    selector = {
        "matchLabels": {"tier": "metrics", "app": "x"},
        "matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["a", "b"]},
            {"key": "env", "operator": "NotIn", "values": ["dev"]},
            {"key": "gpu", "operator": "Exists"},
            {"key": "legacy", "operator": "DoesNotExist"},
            {"key": "odd", "operator": "Unknown", "values": ["z"]},
            {"operator": "Exists"},  # no key: nothing to filter by
            {"key": "bare"},  # no operator
        ],
    }

    assert selectors.selector_text(selector) == (
        "app=x,tier=metrics,zone in (a,b),env notin (dev),gpu,!legacy"
    )
    assert selectors.selector_text({}) == ""
    assert selectors.selector_text(selectors.service_selector({"app": "x"})) == "app=x"


def endpoint(address: str, pod: str, conditions: dict[str, Any] | None) -> dict[str, Any]:
    found: dict[str, Any] = {"addresses": [address], "targetRef": {"kind": "Pod", "name": pod}}
    if conditions is not None:
        found["conditions"] = conditions
    return found


def test_an_endpoint_without_a_ready_condition_counts_as_ready() -> None:
    # k8s.io/api discovery/v1/types.go, EndpointConditions.Ready: "ready indicates that this
    # endpoint is ready to receive traffic [...]. A nil value should be interpreted as "true"."
    slices = [
        {
            "endpoints": [
                endpoint("10.0.0.1", "a", None),  # no conditions at all
                endpoint("10.0.0.2", "b", {}),  # conditions without ready
                endpoint("10.0.0.3", "c", {"ready": None}),  # ready: null
                endpoint("10.0.0.4", "d", {"ready": True}),
                endpoint("10.0.0.5", "e", {"ready": False, "serving": True}),
            ]
        },
        {"endpoints": [{"addresses": ["10.0.0.6"], "conditions": {"ready": False}}]},
        {"endpoints": None},
    ]

    found = evidence.read_endpoints("keda/keda-operator-metrics-apiserver", slices)

    assert found.service == "keda/keda-operator-metrics-apiserver"
    assert found.ready == ("10.0.0.1 (a)", "10.0.0.2 (b)", "10.0.0.3 (c)", "10.0.0.4 (d)")
    assert found.not_ready == ("10.0.0.5 (e)", "10.0.0.6")
    assert found.slices == 3


def test_a_service_without_endpointslices_has_none_ready_and_no_slice() -> None:
    found = evidence.read_endpoints("keda/x", [])

    assert (found.ready, found.not_ready, found.slices) == ((), (), 0)


@pytest.mark.parametrize(
    ("kind", "obj", "message", "subject"),
    [
        pytest.param(
            "SchedulingShard",
            "default",
            "Deployment [kai-scheduler-default] is not available",
            KaiSubject("kai-system", ("kai-scheduler-default",)),
            id="shard",
        ),
        pytest.param(
            "Config",
            "kai-config",
            "Deployment [binder] is not available\nDeployment [binder] is not available\n"
            "Deployment [queue-controller] is not available",
            KaiSubject("kai-system", ("binder", "queue-controller")),
            id="config-names-each-once",
        ),
        pytest.param(
            "APIService", "", "", KedaSubject("v1beta1.external.metrics.k8s.io"), id="apiservice"
        ),
        pytest.param(
            "APIService", "v1.custom", "", KedaSubject("v1.custom"), id="apiservice-named"
        ),
        pytest.param(
            "Deployment",
            "kai-system/binder",
            "",
            DeploymentSubject("kai-system", "binder"),
            id="deployment",
        ),
        pytest.param("Deployment", "binder", "", None, id="deployment-without-namespace"),
        pytest.param("Cluster", "sim", "unreachable", None, id="nothing-to-look-at"),
    ],
)
def test_each_alert_kind_is_diagnosed_on_the_subject_it_points_at(
    kind: str, obj: str, message: str, subject: object
) -> None:
    # A shard alert's first thread reply is the KAI diagnosis, with the shard's scheduler named.
    found = subjects.subject_for_alert(
        kind,
        obj,
        message,
        kai_namespace="kai-system",
        apiservice="v1beta1.external.metrics.k8s.io",
    )

    assert found == subject
    if found is not None:
        assert found.describe() in ("kai", "keda", obj)


NOW = datetime(2026, 8, 7, 10, 0, tzinfo=UTC)


def at(minutes_ago: int) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(
    ("event", "minutes_ago"),
    [
        pytest.param({"lastTimestamp": at(1), "eventTime": at(9)}, 1, id="last-timestamp"),
        pytest.param({"series": {"lastObservedTime": at(2)}, "eventTime": at(9)}, 2, id="series"),
        pytest.param({"eventTime": at(3), "firstTimestamp": at(9)}, 3, id="event-time"),
        pytest.param({"firstTimestamp": at(4)}, 4, id="first-timestamp"),
        pytest.param({"metadata": {"creationTimestamp": at(5)}}, 5, id="created"),
        pytest.param({}, None, id="never"),
    ],
)
def test_an_event_happened_last_when_its_newest_timestamp_says(
    event: dict[str, Any], minutes_ago: int | None
) -> None:
    when = evidence.event_time(event)

    assert when == (None if minutes_ago is None else NOW - timedelta(minutes=minutes_ago))


def test_warnings_of_both_event_apis_are_read_with_their_counts_newest_first() -> None:
    events = [
        # core/v1 Event: involvedObject, message, count
        {"type": "Warning", "involvedObject": {"kind": "Pod", "name": "a"}, "reason": "BackOff",
         "message": " restarting ", "count": 4, "lastTimestamp": at(5)},
        # events.k8s.io/v1 Event: regarding, note, series.count
        {"type": "Warning", "regarding": {"kind": "Pod", "name": "a"}, "reason": "Failed",
         "note": "token=abc123def456", "series": {"count": 7, "lastObservedTime": at(1)}},
        {"type": "Warning", "regarding": {"kind": "Pod", "name": "a"}, "reason": "Once",
         "note": "x"},
        {"type": "Warning", "involvedObject": {"kind": "Pod", "name": "b"}, "reason": "Other",
         "message": "not ours", "lastTimestamp": at(1)},
        {"type": "Warning", "involvedObject": {"kind": "Node", "name": "a"}, "reason": "Kind",
         "message": "another kind, same name", "lastTimestamp": at(1)},
    ]  # fmt: skip

    lines = evidence.recent_warnings(events, {("Pod", "a")}, NOW)

    assert [(e.reason, e.message, e.count, e.kind, e.name) for e in lines] == [
        ("Once", "x", 1, "Pod", "a"),  # no time: as if now
        ("Failed", "token=[redacted]", 7, "Pod", "a"),
        ("BackOff", "restarting", 4, "Pod", "a"),
    ]
    ago = [None, timedelta(minutes=1), timedelta(minutes=5)]
    assert [e.last_seen for e in lines] == [None if x is None else NOW - x for x in ago]


def test_warnings_are_those_of_the_window_up_to_the_limit() -> None:
    events = [
        {"type": "Warning", "involvedObject": {"kind": "Pod", "name": "a"}, "reason": f"R{i}",
         "message": "m", "lastTimestamp": at(i)}
        for i in (0, 10, 30, 60, 61)
    ]  # fmt: skip

    within = evidence.recent_warnings(events, {("Pod", "a")}, NOW)
    short = evidence.recent_warnings(
        events, {("Pod", "a")}, NOW, window=timedelta(minutes=10), limit=1
    )

    assert [e.reason for e in within] == ["R0", "R10", "R30", "R60"]
    assert [e.reason for e in short] == ["R0"]
