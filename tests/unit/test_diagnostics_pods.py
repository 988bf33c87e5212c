"""Pod states → the diagnosis lines an on-call reads (docs/design.md §2 "Diagnose"), and the log
tail.

Table tests over pods shaped as the kubelet writes them; each line must say what is wrong and
what to do, and the container whose log the diagnosis shows must be the failing one.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.core import redaction
from bot.core.models import Health
from bot.diagnostics import assemble, evidence
from bot.diagnostics import pods as rules
from bot.diagnostics.assemble import Namespace

NOW = datetime(2026, 8, 7, 10, 0, tzinfo=UTC)


def pod(
    name: str = "api-1",
    *,
    phase: str = "Running",
    containers: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
    conditions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase, "containerStatuses": containers or []}
    if init is not None:
        status["initContainerStatuses"] = init
    if conditions is not None:
        status["conditions"] = conditions
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "team", "labels": {"app": "api"}},
        "spec": {"nodeName": "node-1", "containers": [{"name": "api", "image": "reg/api:1.2"}]},
        "status": status,
    }


def container(
    name: str = "api",
    *,
    state: dict[str, Any],
    restarts: int = 0,
    ready: bool = False,
    last: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "image": "reg/api:1.2",
        "ready": ready,
        "restartCount": restarts,
        "state": state,
        "lastState": {"terminated": last} if last else {},
    }


RUNNING = {"running": {"startedAt": "2026-08-07T09:00:00Z"}}
CRASHLOOP = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}}
OOM = {"reason": "OOMKilled", "exitCode": 137}

CASES = [
    pytest.param(
        pod(containers=[container(state=CRASHLOOP, restarts=7, last=OOM)]),
        [
            "api-1 container api: CrashLoopBackOff, restarted 7 times; the last instance ended "
            "with OOMKilled (exit code 137): it ran out of memory; raise its memory limit or find "
            "what grew"
        ],
        ("api-1", "api", True),
        id="crashloop-after-oomkilled",
    ),
    pytest.param(
        pod(
            containers=[
                container(
                    state={
                        "waiting": {
                            "reason": "ImagePullBackOff",
                            "message": 'Back-off pulling image "reg/api:1.2"',
                        }
                    }
                )
            ]
        ),
        [
            "api-1 container api: ImagePullBackOff: image reg/api:1.2 cannot be pulled; check its "
            "name and tag, that the registry is reachable, and the pull secret: Back-off pulling "
            'image "reg/api:1.2"'
        ],
        ("api-1", "api", False),
        id="image-pull-backoff",
    ),
    pytest.param(
        pod(
            phase="Pending",
            conditions=[
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
                }
            ],
        ),
        ["api-1 is not scheduled: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu."],
        None,
        id="pending-unschedulable",
    ),
    pytest.param(
        pod(
            phase="Pending",
            init=[
                container(
                    "migrate",
                    state=CRASHLOOP,
                    restarts=3,
                    last={"reason": "Error", "exitCode": 1},
                )
            ],
            containers=[
                container(state={"waiting": {"reason": "PodInitializing"}}),
            ],
        ),
        [
            "api-1 init container migrate: CrashLoopBackOff, restarted 3 times; the last instance "
            "ended with Error (exit code 1): the log tail of that instance says why",
            "api-1: its other containers wait until migrate succeeds",
        ],
        ("api-1", "migrate", True),
        id="init-container-failing",
    ),
    pytest.param(
        pod(containers=[container(state=RUNNING, ready=True)]),
        [],
        None,
        id="running-and-ready",
    ),
    pytest.param(
        pod(containers=[container(state=RUNNING, ready=True, restarts=2, last=OOM)]),
        [
            "api-1 container api: running, but restarted 2 times; the last instance ended with "
            "OOMKilled (exit code 137): it ran out of memory; raise its memory limit or find what "
            "grew"
        ],
        ("api-1", "api", True),
        id="running-after-oom-restarts",
    ),
    pytest.param(
        pod(
            containers=[
                container(
                    state={
                        "waiting": {
                            "reason": "CreateContainerConfigError",
                            "message": 'secret "api-token" not found',
                        }
                    }
                )
            ]
        ),
        [
            "api-1 container api: CreateContainerConfigError: a ConfigMap, Secret or key it "
            'refers to is missing or wrong: secret "api-token" not found'
        ],
        ("api-1", "api", False),
        id="missing-secret",
    ),
    pytest.param(
        pod(containers=[container(state=RUNNING, ready=False)]),
        ["api-1 container api: running but not ready: its readiness probe fails (see the events)"],
        ("api-1", "api", False),
        id="running-not-ready",
    ),
]


@pytest.mark.parametrize(("raw", "lines", "log"), CASES)
def test_each_pod_state_reads_as_what_is_wrong_and_what_to_do(
    raw: dict[str, Any], lines: list[str], log: tuple[str, str, bool] | None
) -> None:
    state = rules.read_pod(raw)

    assert rules.pod_findings(state) == lines
    component = assemble.deployment_component(deployment(), Namespace([], [raw], []), NOW)
    target = assemble.log_target(component)
    assert (None if target is None else (target.pod, target.container, target.previous)) == log


def deployment(replicas: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api", "namespace": "team", "uid": "u-1"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "api"}}},
        "status": {"replicas": replicas, "updatedReplicas": replicas, "availableReplicas": 0},
    }


def test_a_deployment_without_any_pod_says_so_and_points_at_the_replicaset_events() -> None:
    quota = event(
        "ReplicaSet",
        "api-5d8",
        "FailedCreate",
        'pods "api-5d8-x" is forbidden: exceeded quota: gpu-quota',
        minutes_ago=5,
    )

    component = assemble.deployment_component(
        deployment(), Namespace([replicaset("api-5d8")], [], [quota]), NOW
    )

    assert component.health is Health.DEGRADED
    assert component.findings == (
        "Deployment team/api wants 2 replicas but has no pods: the ReplicaSet cannot create them "
        "(quota, admission webhook, or a missing service account); its Warning events below say "
        "which",
    )
    assert [e.reason for e in component.events] == ["FailedCreate"]
    assert assemble.log_target(component) is None


def test_a_deployment_scaled_to_zero_says_nothing_runs() -> None:
    component = assemble.deployment_component(deployment(0), Namespace([], [], []), NOW)

    assert component.findings == ("Deployment team/api is scaled to 0 replicas: nothing runs",)


def replicaset(name: str) -> dict[str, Any]:
    return {
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": "team",
            "labels": {"app": "api"},
            "ownerReferences": [{"kind": "Deployment", "name": "api", "uid": "u-1"}],
        },
    }


def event(
    kind: str, name: str, reason: str, message: str, *, minutes_ago: int, type_: str = "Warning"
) -> dict[str, Any]:
    at = (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "kind": "Event",
        "metadata": {"name": f"{name}.{reason}", "namespace": "team"},
        "involvedObject": {"kind": kind, "name": name},
        "type": type_,
        "reason": reason,
        "message": message,
        "count": 3,
        "lastTimestamp": at,
    }


def test_events_are_warnings_about_the_deployment_its_replicasets_and_pods_of_the_last_hour() -> (
    None
):
    events = [
        event("Pod", "api-1", "BackOff", "restarting", minutes_ago=1),
        event("Deployment", "api", "ProgressDeadlineExceeded", "stuck", minutes_ago=30),
        event("Pod", "api-1", "Pulled", "pulled", minutes_ago=2, type_="Normal"),
        event("Pod", "other-1", "BackOff", "someone else's pod", minutes_ago=1),
        event("Pod", "api-1", "Unhealthy", "an old probe failure", minutes_ago=61),
        *[event("Pod", "api-1", f"Reason{i}", "many", minutes_ago=10 + i) for i in range(12)],
    ]
    raw = pod(containers=[container(state=CRASHLOOP, restarts=1, last=OOM)])

    component = assemble.deployment_component(deployment(), Namespace([], [raw], events), NOW)

    reasons = [e.reason for e in component.events]
    assert reasons[:2] == ["BackOff", "Reason0"]
    assert len(reasons) == 10
    assert "Pulled" not in reasons and "Unhealthy" not in reasons
    assert all(e.name == "api-1" or e.kind == "Deployment" for e in component.events)


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        pytest.param("token=abc123def456", "token=[redacted]", id="keyed-token"),
        pytest.param('"password": "hunter2!"', '"password": "[redacted]"', id="json-password"),
        pytest.param(
            "Authorization: Bearer abc.def.ghi-123", "Authorization: Bearer [redacted]", id="bearer"
        ),
        pytest.param("using xoxb-1234567890-abcdefghij", "using [redacted]", id="slack-token"),
        pytest.param("key AKIAIOSFODNN7EXAMPLE ok", "key [redacted] ok", id="aws-key"),
        pytest.param(
            "postgres://app:s3cr3t@db:5432/x",
            "postgres://app:[redacted]@db:5432/x",
            id="url-password",
        ),
        pytest.param("jwt eyJhbGciOi.eyJzdWIiOiJ4In0.c2lnbmF0dXJl", "jwt [redacted]", id="jwt"),
        pytest.param("sha256:" + "a" * 64, "sha256:" + "a" * 64, id="digest-kept"),
        pytest.param(
            "OOMKilled after 1041235968 bytes", "OOMKilled after 1041235968 bytes", id="plain-kept"
        ),
    ],
)
def test_token_shaped_strings_in_log_lines_are_redacted(line: str, shown: str) -> None:
    assert evidence.log_tail(line) == (shown,)


# Issue 22: shapes the redaction missed, and look-alikes it must leave as written ("=" for
# nothing redacted). Each is a log line, an Event message or a condition message.
SHAPES = {
    "env-pass": ("DB_PASS=hunter2 ready", "DB_PASS=[redacted] ready"),
    "bypass-kept": ("bypass=true", "="),
    "flag-password": ("app --password hunter2 -v", "app --password [redacted] -v"),
    "flag-pass": ("app --db-pass hunter2", "app --db-pass [redacted]"),
    "auth-token": ("Authorization: Token 9f8e7d6c5b", "Authorization: Token [redacted]"),
    "mysql": ("mysql -u root -phunter2 -h db", "mysql -u root -p[redacted] -h db"),
    "client-secret": ("client_secret s3cr3tvalue", "client_secret [redacted]"),
    "prose-kept": ("couldn't find key password in Secret default/db", "="),
    "event-kept": ('secret "db-creds" not found', "="),
}


@pytest.mark.parametrize(("line", "shown"), list(SHAPES.values()), ids=list(SHAPES))
def test_secrets_of_every_shape_are_redacted_and_look_alikes_kept(line: str, shown: str) -> None:
    assert redaction.redact(line) == (line if shown == "=" else shown)


def test_the_log_tail_is_the_last_twenty_non_empty_lines() -> None:
    text = "\n".join(f"line {i}" for i in range(50)) + "\n\n"

    assert evidence.log_tail(text) == tuple(f"line {i}" for i in range(30, 50))


def test_event_and_condition_messages_in_a_diagnosis_are_redacted_too() -> None:
    events = [event("Pod", "api-1", "Failed", "exec: app -phunter2 DB_PASS=hunter2", minutes_ago=1)]
    waiting = {"waiting": {"reason": "CreateContainerError", "message": "--password hunter2"}}
    unscheduled = [
        {"type": "PodScheduled", "status": "False", "message": "client_secret s3cr3tvalue"}
    ]
    raw = pod(containers=[container(state=waiting)], conditions=unscheduled)
    failing = deployment()
    failing["status"] = {
        "conditions": [
            {"type": "Available", "status": "False", "message": "Authorization: Token 9f8e7d"}
        ]
    }

    component = assemble.deployment_component(failing, Namespace([], [raw], events), NOW)

    shown = repr(component)
    assert "hunter2" not in shown and "s3cr3tvalue" not in shown and "9f8e7d" not in shown
    assert "DB_PASS=[redacted]" in component.events[0].message
    assert "--password [redacted]" in component.pods[0].containers[0].message
    assert component.pods[0].unschedulable == "client_secret [redacted]"
