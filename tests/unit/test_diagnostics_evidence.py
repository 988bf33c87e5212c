"""The evidence a diagnosis shows beside its pods (docs/design.md §2 "Diagnose"): log lines cut to a
readable length, label selectors matched as the API server matches them, EndpointSlice readiness
as the EndpointSlice API defines it, and which subject an alert's first thread reply diagnoses.

Pure tables over objects shaped as the API server returns them.
"""

from __future__ import annotations

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
        pytest.param(selectors.service_selector({}), False, id="empty-service-selector"),
        pytest.param({}, False, id="no-selector"),
        pytest.param({"matchLabels": {}, "matchExpressions": []}, False, id="empty-lists"),
        pytest.param(selectors.service_selector({"app": LABELS["app"]}), True, id="service"),
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
        ],
    }

    assert selectors.selector_text(selector) == (
        "app=x,tier=metrics,zone in (a,b),env notin (dev),gpu,!legacy"
    )
    assert selectors.selector_text({}) == ""


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
