"""Evidence with the page, end to end: the first reply in every alert's thread is the diagnosis
of the failing component, gathered when the alert fired, posted once and in order through the
outbox, kept across restarts; a diagnosis that cannot be made is one line, never a lost page.
Also the scheduler-down alert, from the simulator's `scheduler_down` to its resolution.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from alert_stack import (
    HOLD,
    alert_stack,
    assert_one_clean_incident,
    check,
    evidence_and_rest,
    resolve,
    roots,
    thread,
    words,
)
from alert_stack import fire as fire_alert
from clocks import Clock

from testbed.sim import Simulator, breakage
from testbed.slackemu import ApiCall, PostedMessage
from testbed.slackemu.records import Fault
from testbed.stack import ALERT_CHANNEL, Stack


async def fire(stack: Stack, clock: Clock, breaking: Callable[[Simulator], None]) -> PostedMessage:
    """Break the cluster, check until the hold has passed; the one root posted."""
    await fire_alert(stack, clock, breaking=breaking)
    [root] = roots(stack)
    return root


async def test_an_apiservice_page_starts_its_thread_with_the_oomkilled_pod_and_its_log(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        root = await fire(stack, clock, breakage.metrics_apiserver_crashloop)
        diagnosis, after = evidence_and_rest(stack, root)
        assert after == []

        shown = words(diagnosis)
        assert root.text.startswith("[CRITICAL] sim: APIService v1beta1.external.metrics")
        assert diagnosis.text.startswith("Diagnosis of keda on sim: Degraded")
        assert "CrashLoopBackOff" in shown and "OOMKilled" in shown
        assert "fatal error: runtime: out of memory" in shown  # the log before the restart
        assert "Bearer [redacted]" in shown and "eyJhbGciOiJSUzI1NiJ9" not in shown
        assert "0 ready endpoint(s)" in shown
        assert "`/kai diagnose keda` looks again" in shown
        assert diagnosis.metadata["event_payload"]["note"] == "diagnosis"

        await resolve(stack, clock)
        assert [words(m).split("\n")[0][:22] for m in thread(stack, root)] == [
            "Diagnosis of keda on s",
            "What changed on sim in",
            ":white_check_mark: Res",
        ]
        assert_one_clean_incident(stack)


async def test_the_scheduler_down_alert_fires_with_its_deployments_diagnosis_and_resolves(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        breakage.scheduler_down(stack.sim)
        await check(stack.service)
        clock.advance(HOLD - 1)
        await check(stack.service)
        assert roots(stack) == []  # not before `hold`
        clock.advance(1)
        await check(stack.service)

        [root] = roots(stack)
        assert root.text.startswith(
            "[CRITICAL] sim: Deployment kai-scheduler/kai-scheduler-default Available: "
            "KAI scheduler kai-scheduler-default down: no available replica"
        )
        assert "Nothing of shard default gets scheduled" in words(root)
        diagnosis, _ = evidence_and_rest(stack, root)
        shown = words(diagnosis)
        assert diagnosis.text.startswith(
            "Diagnosis of kai-scheduler/kai-scheduler-default on sim: Degraded"
        )
        assert "CrashLoopBackOff" in shown and "exit 2" in shown
        assert "panic: runtime error: invalid memory address" in shown

        await resolve(stack, clock)
        [_, _, resolution] = thread(stack, root)
        assert resolution.text.startswith(":white_check_mark: Resolved")
        assert stack.slack.message(ALERT_CHANNEL, root.ts).text.startswith("[RESOLVED (critical)]")
        assert_one_clean_incident(stack)


async def test_a_diagnosis_the_cluster_refuses_is_one_line_and_the_page_goes_on(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        stack.sim.faults.add(403, verb="list", resource="pods", times=None)
        root = await fire(stack, clock, breakage.metrics_apiserver_crashloop)

        failed, after = evidence_and_rest(stack, root)
        assert after == []
        assert failed.text.startswith("Could not diagnose keda on sim: ")
        assert "forbidden" in failed.text.lower()
        assert len(failed.text.splitlines()) == 1
        await resolve(stack, clock)
        assert_one_clean_incident(stack)


async def test_the_diagnosis_is_kept_as_gathered_across_a_slack_outage_and_a_restart(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):

        def slack_down_after_the_root(call: ApiCall) -> None:
            if call.method == "chat.postMessage" and call.ok:
                stack.slack.fault_rule = lambda method: Fault(503, 0, "service_unavailable")

        stack.slack.observers.append(slack_down_after_the_root)
        root = await fire(stack, clock, breakage.metrics_apiserver_crashloop)
        assert thread(stack, root) == []  # gathered and stored, not delivered

        breakage.heal(stack.sim)  # a diagnosis made now would find nothing wrong
        await stack.restart_service()
        stack.slack.observers.remove(slack_down_after_the_root)
        stack.slack.fault_rule = None
        await check(stack.service)

        [diagnosis, *_] = thread(stack, root)
        assert "OOMKilled" in words(diagnosis)  # the evidence of the moment it fired
        clock.advance(HOLD)
        await check(stack.service)
        assert_one_clean_incident(stack)


async def test_an_ack_right_after_the_page_comes_after_its_diagnosis_in_the_thread(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        breakage.apiservice_down(stack.sim)
        await check(stack.service)
        clock.advance(HOLD)
        stack.sim.faults.add(503, verb="list", resource="pods", times=None)  # slow evidence
        await check(stack.service)
        [root] = roots(stack)
        alert_id = root.blocks[-1]["elements"][0]["value"].split(":")[1]
        await stack.command(f"ack {alert_id}")

        replies = [m.text for m in thread(stack, root)]
        assert replies[0].startswith("Could not diagnose keda on sim")
        assert replies[1].startswith("What changed on sim in the hour before")
        assert replies[2].startswith(":eyes: Acknowledged by")
        stack.sim.faults.clear()
        await resolve(stack, clock)
        assert_one_clean_incident(stack)


async def first_reply_under(tmp_path: Path, breaking: Callable[[Simulator], None]) -> str:
    """Everything the first reply under the page says, for the alert `breaking` raises."""
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        root = await fire(stack, clock, breaking)
        [diagnosis, *_] = thread(stack, root)
        assert root.text.startswith("[CRITICAL]")
        return words(diagnosis)


async def test_under_a_dependencies_page_the_first_reply_is_the_failing_condition_not_healthy(
    tmp_path: Path,
) -> None:
    shown = await first_reply_under(tmp_path, breakage.dependencies_missing)
    assert shown.startswith("Diagnosis of kai on sim: Degraded")
    why = shown.index(
        "Why it fired: Config kai-config DependenciesFulfilled is False (dependencies_missing),"
        " saying:\n  KAI-prometheus is missing prometheus operator"
    )
    assert why < shown.index("Deployment kai-scheduler/kai-operator")  # the cause comes first
    assert "The components look healthy; the cause is the condition above." in shown
    assert ": Healthy" not in shown.splitlines()[0]


async def test_under_a_kai_config_missing_page_the_first_reply_says_it_is_gone_and_what_went(
    tmp_path: Path,
) -> None:
    shown = await first_reply_under(tmp_path, breakage.delete_kai_config)
    assert shown.startswith("Diagnosis of kai on sim: Missing")
    said = [
        "Why it fired: Config kai-config does not exist (NotFound)",
        "What goes with it: the operand Deployments it owned, garbage-collected",
        "still there: kai-scheduler/admission, kai-scheduler/binder",
    ]
    assert [line for line in said if line not in shown] == []


async def test_under_an_apiservice_page_the_first_reply_names_its_service_endpoints_and_pods(
    tmp_path: Path,
) -> None:
    shown = await first_reply_under(tmp_path, breakage.apiservice_down)
    assert shown.startswith("Diagnosis of keda on sim: Degraded")
    assert (
        "Why it fired: APIService v1beta1.external.metrics.k8s.io Available is not True "
        '(MissingEndpoints): endpointslices for service/keda-operator-metrics-apiserver in "keda"'
    ) in shown.replace("&quot;", '"')
    assert "Its spec.service, Service keda/keda-operator-metrics-apiserver: 1 ready" in shown
    assert "Its pods (Deployment keda/keda-operator-metrics-apiserver): " in shown
    assert "The components look healthy; the cause is the condition above." in shown
