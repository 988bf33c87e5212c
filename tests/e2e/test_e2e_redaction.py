"""Secrets a crashing pod printed never reach Slack (issue 36, finding 4), end to end: its
previous log and its Event in `/kai diagnose keda` (viewers, in the channel), through the one
redaction (`bot/core/redaction.py`); the service's own log lines pass the same one
(tests/e2e/test_e2e_security.py `test_item7_...`)."""

from __future__ import annotations

import json

from testbed.sim import breakage
from testbed.stack import VIEWER, Stack

KEDA_POD = "keda-operator-metrics-apiserver-7b9f6c5d48-p4x9z"
CONTAINER = "keda-operator-metrics-apiserver"
# What the pen test saw in the channel, and the other shapes it listed.
SECRETS = ("R3dis-hunter2", "Pg-hunter2", "pa/ss", "tok-hunter2", "short1", "horse battery")
PRINTED = [
    "connecting to redis://:R3dis-hunter2@redis:6379/0",
    "PASSWORD: 'Pg-hunter2'",
    "amqp://worker:pa/ss@rabbit:5672 refused",
    "retrying with token 'tok-hunter2'",
    "AWS_SECRET_ACCESS_KEY=short1",
    '{"level":"error","password":"correct horse battery","msg":"auth failed"}',
]


async def test_secrets_a_crashing_pod_printed_never_reach_the_channel(stack: Stack) -> None:
    breakage.metrics_apiserver_crashloop(stack.sim)
    stack.sim.write_log("keda", KEDA_POD, CONTAINER, PRINTED, previous=True)
    event = stack.sim.get("v1", "Event", f"sim-{KEDA_POD}.backoff", "keda")
    assert event is not None
    event["message"] = "Back-off restarting; last error: secret_key = 'Pg-hunter2 again'"
    stack.sim.apply(event)

    reply = await stack.command("diagnose keda", user_id=VIEWER)

    assert reply.message is not None and reply.message["response_type"] == "in_channel"
    shown = json.dumps(reply.message)
    assert [secret for secret in SECRETS if secret in shown] == []
    for kept in ("redis://:[redacted]@redis:6379/0", "PASSWORD: '[redacted]'", "auth failed"):
        assert kept in shown, kept
    assert "secret_key = '[redacted]'" in shown
