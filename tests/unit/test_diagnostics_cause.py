"""Under a firing alert the diagnosis explains the alert's cause first (docs/design.md §2
"Diagnose"): the failing condition in its words, what it names, and never "Healthy" as the
whole answer. Pure: `bot.diagnostics.cause.explain` over built diagnoses, then the rendering.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.core.models import Health
from bot.diagnostics import render
from bot.diagnostics.cause import HEALTHY_UNDER_ALERT, AlertFacts, explain
from bot.diagnostics.model import Component, ContainerState, Diagnosis, Endpoints, PodState

NOW = datetime(2026, 8, 7, 10, 0, tzinfo=UTC)
OPERATOR = Component("Deployment kai-scheduler/kai-operator", Health.HEALTHY, "available")
DEPENDENCIES = AlertFacts(
    "Config",
    "kai-config",
    "DependenciesFulfilled",
    "dependencies_missing",
    "\nKAI-prometheus is missing prometheus operator",
)


def kai(*components: Component, operands: tuple[str, ...] | None = None) -> Diagnosis:
    return Diagnosis("sim", "kai", NOW, components, operands=operands)


def shown(diagnosis: Diagnosis) -> str:
    """The fallback text and every block's text, as a reader sees them."""
    message = render.diagnosis_message(diagnosis)
    parts = [str(message["text"])]
    for block in message["blocks"]:
        if isinstance(block.get("text"), dict):
            parts.append(block["text"]["text"])
        parts += [e["text"] for e in block.get("elements") or [] if "text" in e]
    return "\n".join(parts)


def test_healthy_components_under_a_dependencies_alert_are_not_the_answer() -> None:
    text = shown(explain(kai(OPERATOR), DEPENDENCIES))
    assert text.startswith("Diagnosis of kai on sim: Degraded")
    why = text.index(
        "Why it fired: Config kai-config DependenciesFulfilled is False (dependencies_missing),"
        " saying:\n  KAI-prometheus is missing prometheus operator"
    )
    assert why < text.index("Deployment kai-scheduler/kai-operator: Healthy")
    assert HEALTHY_UNDER_ALERT in text
    assert "*Why it fired:*" in text  # the blocks say it too, before the components


def test_without_an_alert_a_healthy_diagnosis_stays_healthy_and_says_no_cause() -> None:
    text = shown(kai(OPERATOR))
    assert text.startswith("Diagnosis of kai on sim: Healthy")
    assert "Why it fired" not in text and HEALTHY_UNDER_ALERT not in text


def test_an_operand_a_message_names_is_shown_with_its_state_and_no_healthy_line() -> None:
    binder = Component("Deployment kai-scheduler/binder", Health.DEGRADED, "0/1 available")
    said = "Binder: Deployment [binder] is not available\nAdmission: Deployment [admission] is not"
    alert = AlertFacts(
        "SchedulingShard", "default", "DependenciesFulfilled", message=f"{said} available"
    )
    cause = explain(kai(OPERATOR, binder), alert).cause
    assert cause is not None
    assert cause.names == (
        "Binder: Deployment [binder] is not available; Deployment kai-scheduler/binder: "
        "Degraded — 0/1 available",
        "Admission: Deployment [admission] is not available; Deployment admission was not "
        "looked at",
    )
    assert HEALTHY_UNDER_ALERT not in shown(explain(kai(OPERATOR, binder), alert))


def metrics_server(ready: tuple[str, ...], *, restarts: int = 0) -> Component:
    container = ContainerState("server", False, bool(ready), restarts, "running")
    pod = PodState("metrics-1", "Running", (container,))
    endpoints = Endpoints("keda/metrics", ready, ("10.0.0.9",) if not ready else (), 1)
    return Component(
        "Deployment keda/metrics",
        Health.HEALTHY,
        "available",
        pods=(pod,),
        endpoints=endpoints,
    )


APISERVICE = AlertFacts(
    "APIService",
    "v1beta1.external.metrics.k8s.io",
    "Available",
    "MissingEndpoints",
    "endpointslices for service/metrics have no addresses",
)


@pytest.mark.parametrize(
    ("ready", "says"),
    [
        (("10.0.0.7",), "Its spec.service, Service keda/metrics: 1 ready address(es) (10.0.0.7)"),
        ((), "Service keda/metrics: 0 ready address(es) (none) in 1 EndpointSlice(s), 1 not"),
    ],
    ids=["one-ready", "none-ready"],
)
def test_an_apiservice_cause_names_its_service_its_ready_addresses_and_its_pods(
    ready: tuple[str, ...], says: str
) -> None:
    diagnosis = Diagnosis("sim", "keda", NOW, (metrics_server(ready),))
    text = shown(explain(diagnosis, APISERVICE))
    assert (
        "Why it fired: APIService v1beta1.external.metrics.k8s.io Available is not True"
        " (MissingEndpoints): endpointslices for service/metrics have no addresses"
    ) in text
    assert says in text
    assert "Its pods (Deployment keda/metrics): metrics-1 Running" in text
    assert text.startswith("Diagnosis of keda on sim: Degraded")


def test_a_missing_apiservice_is_the_cause_and_the_verdict() -> None:
    alert = AlertFacts("APIService", "v1beta1.external.metrics.k8s.io", "Missing", "NotFound")
    text = shown(explain(Diagnosis("sim", "keda", NOW), alert))
    assert text.startswith("Diagnosis of keda on sim: Missing")
    assert "Why it fired: APIService v1beta1.external.metrics.k8s.io does not exist (NotFound)" in (
        text
    )
    assert "nothing serves external metrics" in text


@pytest.mark.parametrize(
    ("operands", "says"),
    [
        (
            ("kai-scheduler/binder",),
            "garbage-collected by Kubernetes; still there: kai-scheduler/b",
        ),
        ((), "What went with it: every operand Deployment it owned; none is left."),
        (None, "What goes with it: the operands it owned (Kubernetes garbage-collects them)."),
    ],
    ids=["operands-still-there", "all-gone", "not-listed"],
)
def test_a_deleted_kai_config_says_it_is_gone_and_what_went_with_it(
    operands: tuple[str, ...] | None, says: str
) -> None:
    alert = AlertFacts("Config", "kai-config", "Missing", "NotFound", "the operator collects")
    text = shown(explain(kai(OPERATOR, operands=operands), alert))
    assert text.startswith("Diagnosis of kai on sim: Missing")
    assert (
        "Why it fired: Config kai-config does not exist (NotFound): the operator collects" in text
    )
    assert says in text
    assert HEALTHY_UNDER_ALERT in text


def test_a_secret_in_the_condition_message_is_redacted() -> None:
    alert = AlertFacts(
        "Config", "kai-config", "DependenciesFulfilled", "", "token xoxb-1234567890ab"
    )
    text = shown(explain(kai(OPERATOR), alert))
    assert "xoxb-1234567890ab" not in text


@pytest.mark.parametrize(
    ("alert", "line", "health"),
    [
        pytest.param(
            AlertFacts("SchedulingShard", "default", "Progressing", "Progressing", "stale"),
            "SchedulingShard default stays Progressing (Progressing)",
            Health.PROGRESSING,
            id="progressing",
        ),
        pytest.param(
            AlertFacts("Config", "kai-config", "Missing"),
            "Config kai-config does not exist",
            Health.MISSING,
            id="missing-without-reason",
        ),
        pytest.param(
            AlertFacts("APIService", "v1.x", "Available", "", "a\n  b"),
            "APIService v1.x Available is not True: a b",
            Health.DEGRADED,
            id="no-reason-message-on-one-line",
        ),
    ],
)
def test_the_condition_line_and_its_weight_for_each_kind_of_condition(
    alert: AlertFacts, line: str, health: Health
) -> None:
    cause = explain(kai(), alert).cause

    assert cause is not None
    assert (cause.condition.removesuffix(", saying:"), cause.health) == (line, health)


def test_a_kai_message_without_lines_says_nothing_more() -> None:
    alert = AlertFacts("SchedulingShard", "default", "Progressing", "Progressing", "")

    cause = explain(kai(OPERATOR), alert).cause

    assert cause is not None and cause.names == ()
    assert cause.condition == "SchedulingShard default stays Progressing (Progressing)"


def test_an_apiservice_cause_without_endpoints_names_what_is_missing_else_the_notes() -> None:
    alert = AlertFacts("APIService", "v1beta1.external.metrics.k8s.io", "Available", "R", "m")
    gone = Component("Service keda/metrics", Health.MISSING, "Service keda/metrics was not found")
    noted = Diagnosis("sim", "keda", NOW, (OPERATOR,), ("APIService x has no spec.service",))

    missing = explain(Diagnosis("sim", "keda", NOW, (OPERATOR, gone)), alert).cause
    local = explain(noted, alert).cause

    assert missing is not None and missing.names == ("Service keda/metrics was not found",)
    assert local is not None and local.names == ("APIService x has no spec.service",)


def test_a_long_list_of_addresses_names_five_and_counts_the_rest() -> None:
    alert = AlertFacts("APIService", "v1beta1.external.metrics.k8s.io", "Available", "R", "m")
    ready = tuple(f"10.0.0.{i}" for i in range(7))
    five = Endpoints("keda/metrics", ready[:5], (), 1)

    def names(endpoints: Endpoints) -> tuple[str, ...]:
        behind = Component("Pods of Service keda/metrics", Health.HEALTHY, "ok", (), (), (), None,
                           endpoints)  # fmt: skip
        cause = explain(Diagnosis("sim", "keda", NOW, (behind,)), alert).cause
        assert cause is not None
        return cause.names

    assert names(Endpoints("keda/metrics", ready, ("10.0.1.1",), 2))[0] == (
        "Its spec.service, Service keda/metrics: 7 ready address(es) (10.0.0.0, 10.0.0.1, "
        "10.0.0.2, 10.0.0.3, 10.0.0.4 and 2 more) in 2 EndpointSlice(s), 1 not ready (10.0.1.1)"
    )
    assert names(five)[0].endswith(
        "(10.0.0.0, 10.0.0.1, 10.0.0.2, 10.0.0.3, 10.0.0.4) in 1 EndpointSlice(s)"
    )
    assert names(Endpoints("keda/metrics", (), (), 0))[0] == (
        "Its spec.service, Service keda/metrics: 0 ready address(es) (none) in 0 EndpointSlice(s)"
    )
    assert names(five)[1] == "Its pods (Pods of Service keda/metrics): none"
    assert names(Endpoints("keda/metrics", ready[:6], (), 1))[0].endswith(
        "10.0.0.4 and 1 more) in 1 EndpointSlice(s)"
    )


@pytest.mark.parametrize(
    ("operands", "line"),
    [
        pytest.param(
            None,
            "What goes with it: the operands it owned (Kubernetes garbage-collects them).",
            id="not-looked-at",
        ),
        pytest.param(
            (), "What went with it: every operand Deployment it owned; none is left.", id="all-gone"
        ),
    ],
)
def test_a_deleted_config_says_what_goes_with_it(
    operands: tuple[str, ...] | None, line: str
) -> None:
    cause = explain(kai(operands=operands), AlertFacts("Config", "kai-config", "Missing")).cause

    assert cause is not None and cause.names == (line,)


def test_a_missing_apiservice_says_keda_registers_it() -> None:
    alert = AlertFacts("APIService", "v1beta1.external.metrics.k8s.io", "Missing", "NotFound")

    cause = explain(Diagnosis("sim", "keda", NOW), alert).cause

    assert cause is not None and cause.names == (
        "APIService v1beta1.external.metrics.k8s.io is gone, so nothing serves external metrics "
        "(the HPAs KEDA drives cannot read them); KEDA registers it on install.",
    )
