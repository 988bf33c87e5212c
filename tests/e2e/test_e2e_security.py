"""Security at the edges, end to end (issue 11, docs/design.md §2 "Safety"): what an attacker on the
internet, a replay, or a second click can and cannot make the service do.

Every test drives the real service over HTTP (raw requests where an attacker would send
malformed ones) against the simulator and the emulator, and checks the cluster and Slack after.
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hostile import HOSTILE, markup_problems, texts
from raw_slack import RawRequest, command, origin, send
from stack_steps import audit_lines
from waiting import wait_until

from bot.service import jobs_alerts, logs
from bot.service.server import Service
from testbed.sim import breakage
from testbed.slackemu.payloads import slash_command_fields
from testbed.stack import ALERT_CHANNEL, DEMO_CHANNEL, OPERATOR, Stack, running_stack

SCALED_JOB = ("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia")
BACKENDS = {"sqlite": {}, "configmap": {"state": {"backend": "configmap"}}}


def writes(stack: Stack, resource: str) -> list[str]:
    """The writes the service made to one kind of object, as `VERB name`."""
    return [
        f"{r.verb} {r.name}"
        for r in stack.sim.requests
        if r.resource == resource and r.verb in ("patch", "update", "create")
    ]


def is_paused(stack: Stack) -> bool:
    obj = stack.sim.get(*SCALED_JOB) or {}
    return (obj.get("metadata", {}).get("annotations") or {}).get(
        "autoscaling.keda.sh/paused"
    ) == "true"


@asynccontextmanager
async def second_replica(stack: Stack) -> AsyncIterator[Service]:
    """Another replica of the service: same config and state, its own memory and port."""
    replica = stack.make_service()
    await replica.start()
    try:
        yield replica
    finally:
        await replica.stop(drain_for=1.0)


# --- item 1: nothing unsigned runs ------------------------------------------------------------


def _without(header: str) -> Any:
    return lambda h: {k: v for k, v in h.items() if k != header}


def _with(header: str, value: Any) -> Any:
    return lambda h: {**h, header: value(h) if callable(value) else value}


TIMESTAMP, SIGNATURE = "X-Slack-Request-Timestamp", "X-Slack-Signature"
FORGERIES = {
    "no timestamp": _without(TIMESTAMP),
    "no signature": _without(SIGNATURE),
    "timestamp not a number": _with(TIMESTAMP, "not-a-number"),
    "timestamp in other digits": _with(TIMESTAMP, lambda h: "١٢٣٤٥٦٧٨٩٠"),
    "timestamp negative": _with(TIMESTAMP, "-1"),
    "timestamp as a float": _with(TIMESTAMP, lambda h: f"{h[TIMESTAMP]}.0"),
    "stale timestamp": _with(TIMESTAMP, lambda h: str(int(h[TIMESTAMP]) - 400)),
    "timestamp from the future": _with(TIMESTAMP, lambda h: str(int(h[TIMESTAMP]) + 400)),
    "signature not hex": _with(SIGNATURE, "v0=not-hex"),
    "signature of another body": _with(SIGNATURE, "v0=" + "0" * 64),
    "signature version v1": _with(SIGNATURE, lambda h: "v1=" + h[SIGNATURE][3:]),
}


@pytest.mark.parametrize("forge", list(FORGERIES.values()), ids=list(FORGERIES))
async def test_item1_an_unverifiable_request_gets_401_and_causes_nothing(
    tmp_path: Path, forge: Any
) -> None:
    async with running_stack(tmp_path) as stack:
        await stack.command("health")  # Bolt's first request looks the bot up (auth.test)
        good = command(stack, "reconcile hr flux-system/kai-scheduler")
        forged = RawRequest(good.body, forge(good.headers), good.response_url)
        stack.sim.clear_requests()
        calls_before = len(stack.slack.calls)
        status, _ = await send(stack, forged)
        # A signed request after it, answered in full: anything the forged one set off
        # would have happened by then. (`health` itself calls no Slack method.)
        done = await stack.command("health")
        assert done.text.startswith("KAI health")
        assert status == 401
        assert stack.slack.responses(forged.hook_id) == []
        assert len(stack.slack.calls) == calls_before
        assert writes(stack, "helmreleases") == []
        assert [r for r in stack.sim.requests if r.resource == "helmreleases"] == []


async def test_item1_a_signed_payload_with_a_response_url_that_is_not_slacks_is_refused(
    tmp_path: Path,
) -> None:
    async with running_stack(tmp_path) as stack:
        elsewhere = "http://127.0.0.2:9/collect"
        request = command(stack, "reconcile hr flux-system/kai-scheduler", response_url=elsewhere)
        stack.sim.clear_requests()
        status, _ = await send(stack, request)
        assert status == 400
        assert writes(stack, "helmreleases") == []


async def test_item1_in_socket_mode_a_payload_with_a_foreign_response_url_runs_nothing(
    tmp_path: Path,
) -> None:
    async with running_stack(tmp_path, socket_mode=True) as stack:
        fields = slash_command_fields(
            origin(stack),
            text="reconcile hr flux-system/kai-scheduler",
            command="/kai",
            response_url="http://127.0.0.2:9/collect",
        )
        stack.sim.clear_requests()
        await stack.slack.socket.send_envelope(
            "slash_commands", fields, accepts_response_payload=True, ack_timeout=2.0
        )
        done = await stack.command("health")  # answered in full: the first is over too
    assert done.text.startswith("KAI health")
    assert writes(stack, "helmreleases") == []


async def test_an_unsigned_body_that_never_finishes_is_cut_off_and_runs_nothing(
    tmp_path: Path,
) -> None:
    # Issue 22: a sender that announces a body and never sends it all held the handler forever.
    async with running_stack(tmp_path) as stack:
        stack.sim.clear_requests()
        reader, writer = await asyncio.open_connection("127.0.0.1", stack.service.port)
        head = (
            "POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 4096\r\n\r\n"
        )
        writer.write(head.encode() + b"command=%2Fkai&text=reconcile+hr+flux-system%2F")
        await writer.drain()
        try:
            answer = await asyncio.wait_for(reader.read(), timeout=30.0)  # until it closes
        finally:
            writer.close()
        assert answer.startswith(b"HTTP/1.1 408"), answer[:80]
        done = await stack.command("health")  # the service goes on answering
    assert done.text.startswith("KAI health")
    assert writes(stack, "helmreleases") == []


# --- item 2: nothing replays ------------------------------------------------------------------


@pytest.mark.parametrize("backend", list(BACKENDS.values()), ids=list(BACKENDS))
async def test_item2_a_replayed_signed_request_runs_nothing_a_second_time_on_any_replica(
    tmp_path: Path, backend: dict[str, Any]
) -> None:
    async with running_stack(tmp_path, config_overrides=backend) as stack:
        request = command(stack, "reconcile hr flux-system/kai-scheduler")
        stack.sim.clear_requests()
        assert (await send(stack, request))[0] == 200
        await stack.slack.wait_for_response(request.hook_id, count=2, timeout=30.0)
        assert writes(stack, "helmreleases") == ["patch kai-scheduler"]
        again_here = await send(stack, request)
        async with second_replica(stack) as replica:
            again_there = await send(stack, request, port=replica.port)
        await stack.restart_service()
        again_after_restart = await send(stack, request)
        assert [again_here[0], again_there[0], again_after_restart[0]] == [200, 200, 200]
        assert writes(stack, "helmreleases") == ["patch kai-scheduler"]
        assert len(stack.slack.responses(request.hook_id)) == 2  # "reconciling…", the result


async def test_a_change_whose_replay_cannot_be_ruled_out_is_refused_and_a_read_runs(
    tmp_path: Path,
) -> None:
    # Issue 22: with the shared memory unreachable, a captured request replayed to another
    # replica would run again; so a change is refused ("try again"), a read still answers.
    async with running_stack(tmp_path, config_overrides=BACKENDS["configmap"]) as stack:
        stack.sim.faults.add(503, resource="configmaps", times=None)
        stack.sim.clear_requests()
        reconcile = command(stack, "reconcile hr flux-system/kai-scheduler")
        health = command(stack, "health", at=int(time.time()) - 1)
        for request in (reconcile, health):
            assert (await send(stack, request))[0] == 200
        refused = await stack.slack.wait_for_response(reconcile.hook_id, timeout=30.0)
        answered = await stack.slack.wait_for_response(health.hook_id, timeout=30.0)
        assert "Try again in a moment" in refused.body["text"], refused.body
        assert "nothing was changed" in refused.body["text"]
        assert answered.body["text"].startswith("KAI health"), answered.body
        assert writes(stack, "helmreleases") == []
        assert len(stack.slack.responses(reconcile.hook_id)) == 1


async def test_item2_the_same_command_signed_anew_is_not_a_replay(tmp_path: Path) -> None:
    async with running_stack(tmp_path) as stack:
        first = command(stack, "health", response_url=None)
        second = command(stack, "health", at=int(time.time()) - 1)
        for request in (first, second):
            assert (await send(stack, request))[0] == 200
            await stack.slack.wait_for_response(request.hook_id, timeout=10.0)


# --- item 3: a Confirm works once, across replicas and restarts --------------------------------


@pytest.mark.parametrize("backend", list(BACKENDS.values()), ids=list(BACKENDS))
async def test_item3_a_confirm_works_once_across_replicas_and_restarts(
    tmp_path: Path, backend: dict[str, Any]
) -> None:
    async with running_stack(tmp_path, config_overrides=backend, keda_controller=True) as stack:
        ask = await stack.command("pause annia/annia-worker drain")
        assert ask.message is not None, ask.text
        stack.sim.clear_requests()
        async with second_replica(stack) as replica:
            stack.driver.bot_url = f"http://127.0.0.1:{replica.port}/slack/events"
            done = await stack.click("Confirm", ask.message)
            stack.driver.bot_url = f"http://127.0.0.1:{stack.service.port}/slack/events"
            here = await stack.click("Confirm", ask.message)
        await stack.restart_service()
        after_restart = await stack.click("Confirm", ask.message)
    assert "paused" in done.text.lower(), done.text
    for refused in (here, after_restart):
        assert "already used" in refused.text
    assert writes(stack, "scaledjobs") == ["patch annia-worker"]


async def test_item3_a_confirm_works_once_across_a_restart_in_socket_mode(tmp_path: Path) -> None:
    async with running_stack(tmp_path, socket_mode=True, keda_controller=True) as stack:
        ask = await stack.command("pause annia/annia-worker drain")
        assert ask.message is not None, ask.text
        stack.sim.clear_requests()
        done = await stack.click("Confirm", ask.message)
        await stack.restart_service()
        again = await stack.click("Confirm", ask.message)
    assert "paused" in done.text.lower(), done.text
    assert "already used" in again.text
    assert writes(stack, "scaledjobs") == ["patch annia-worker"]


async def test_item3_a_cancelled_confirmation_cannot_be_confirmed_on_another_replica(
    tmp_path: Path,
) -> None:
    async with running_stack(tmp_path, keda_controller=True) as stack:
        ask = await stack.command("pause annia/annia-worker drain", user_id=OPERATOR)
        assert ask.message is not None, ask.text
        cancelled = await stack.click("Cancel", ask.message)
        async with second_replica(stack) as replica:
            stack.driver.bot_url = f"http://127.0.0.1:{replica.port}/slack/events"
            confirmed = await stack.click("Confirm", ask.message)
    assert "Cancelled" in cancelled.text
    assert "already used" in confirmed.text
    assert not is_paused(stack)


# --- item 4: nothing injects --------------------------------------------------------------------


async def test_item4_hostile_cluster_text_reaches_slack_as_text_in_replies_and_alerts(
    tmp_path: Path,
) -> None:
    hold = {"alerts": {"hold": "0s"}}
    async with running_stack(tmp_path, config_overrides=hold) as stack:
        kai = "kai.scheduler/v1"
        stack.sim.set_condition(
            kai, "Config", "kai-config", None, "DependenciesFulfilled", "False", "bad", HOSTILE
        )
        reason = {"autoscaling.keda.sh/paused": "true", "kai-chatops/pause-reason": HOSTILE}
        stack.sim.patch(*SCALED_JOB, patch={"metadata": {"annotations": reason}})
        health = await stack.command("health")
        listing = await stack.command("scaledjobs")
        await jobs_alerts.check_cluster(stack.service.deps, "sim")
        [root, *_] = await stack.slack.wait_for_messages(ALERT_CHANNEL)
    sent = [
        ("health", health.message),
        ("scaledjobs", listing.message),
        ("alert root", {"text": root.text, "blocks": list(root.blocks)}),
    ]
    for name, message in sent:
        assert message is not None, name
        assert markup_problems(message, {f"<@{OPERATOR}>"}) == [], name
        shown = html.unescape(" ".join(text for _, text in texts(message)))
        assert "<!channel>" in shown, name


# --- item 5: every action on the record ---------------------------------------------------------


async def fire_alert(stack: Stack) -> str:
    """Break KAI, run one check (hold 0s): the alert's root is posted; its ID."""
    breakage.dependencies_missing(stack.sim)
    await jobs_alerts.check_cluster(stack.service.deps, "sim")
    await stack.slack.wait_for_messages(ALERT_CHANNEL)
    desk = stack.service.deps.alerts
    assert desk is not None
    [cluster] = await desk.list_alerts()
    [alert] = cluster.alerts.values()
    return alert.alert_id


async def test_item5_ack_silence_and_unsilence_each_write_one_audit_line_with_the_reason(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    async with running_stack(tmp_path, config_overrides={"alerts": {"hold": "0s"}}) as stack:
        alert_id = await fire_alert(stack)
        await stack.command(f"ack {alert_id}")
        stack.slack.fail_next("chat.postMessage", status=200, error="channel_not_found")
        await stack.command(f"silence {alert_id} 2h node drain")
        await stack.command(f"unsilence {alert_id}")
    lines = [(r["action"], r["user"], r["outcome"], r["reason"]) for r in audit_lines(caplog)]
    assert lines == [
        ("acknowledge", OPERATOR, "ok", ""),
        ("silence", OPERATOR, "ok", "node drain"),
        ("unsilence", OPERATOR, "ok", ""),
    ]
    assert audit_lines(caplog)[1]["details"] == {"for": "2h"}


async def test_item5_a_silence_longer_than_alerts_max_silence_is_refused(tmp_path: Path) -> None:
    config = {"alerts": {"hold": "0s", "max_silence": "2h"}}
    async with running_stack(tmp_path, config_overrides=config) as stack:
        alert_id = await fire_alert(stack)
        typed = await stack.command(f"silence {alert_id} 30d quiet please")
        [root] = stack.slack.root_messages(ALERT_CHANNEL)
        clicked = await stack.click("Silence 4h", {"blocks": list(root.blocks)})
        desk = stack.service.deps.alerts
        assert desk is not None
        [cluster] = await desk.list_alerts()
    for reply in (typed, clicked):
        assert "at most 2h" in reply.text, reply.text
        assert "Nothing was changed" in reply.text
    assert [a.silenced_until for a in cluster.alerts.values()] == [None]


async def test_item5_a_patch_whose_answer_timed_out_is_recorded_unknown_and_announced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    fast = {"kubernetes": {"request_timeout": "1s", "retries": 0}}
    async with running_stack(tmp_path, config_overrides=fast, keda_controller=True) as stack:
        ask = await stack.command("pause annia/annia-worker drain")
        assert ask.message is not None, ask.text
        stack.sim.faults.add(None, verb="patch", resource="scaledjobs", delay=1.5)
        result = await stack.click("Confirm", ask.message)
        [announced] = await stack.slack.wait_for_messages(DEMO_CHANNEL)
        await wait_until(lambda: is_paused(stack), 10, "the pause")  # the change was made after all
    assert "may or may not have been applied" in result.text
    assert "may or may not have been done" in announced.text
    [line] = audit_lines(caplog)
    assert (line["action"], line["outcome"], line["reason"]) == ("pause", "unknown", "drain")


async def test_item5_a_change_asked_in_a_direct_message_is_also_announced_in_the_alert_channel(
    tmp_path: Path,
) -> None:
    direct = "D0DIRECT"
    async with running_stack(tmp_path, keda_controller=True) as stack:
        ask = await stack.command("pause annia/annia-worker drain", channel_id=direct)
        assert ask.message is not None, ask.text
        await stack.click("Confirm", ask.message, channel_id=direct)
        await stack.command("reconcile hr flux-system/kai-scheduler", channel_id=direct,
                            to_the_end=True)  # fmt: skip
        announced = await stack.slack.wait_for_messages(ALERT_CHANNEL, count=2)
    assert "annia/annia-worker" in announced[0].text
    assert "HelmRelease flux-system/kai-scheduler" in announced[1].text
    assert "direct message" in announced[1].text


# --- item 7: no token in the log ------------------------------------------------------------------


PASTED = {
    "a slack token": ("oops xoxc-1234567890-1234567890-abcdefabcdef", "oops [redacted]"),
    # Issue 36, finding 4: the service's own log redacted Slack tokens alone.
    "a password and a url": (
        "password='Pg-hunter2' via redis://:R3dis-hunter2@redis",
        "password='[redacted]' via redis://:[redacted]@redis",
    ),
}


@pytest.mark.parametrize(("pasted", "logged"), list(PASTED.values()), ids=list(PASTED))
async def test_item7_a_secret_pasted_into_a_reason_never_reaches_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pasted: str, logged: str
) -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    logs.configure("json")
    try:
        async with running_stack(tmp_path, keda_controller=True) as stack:
            ask = await stack.command(f"pause annia/annia-worker {pasted}")
            assert ask.message is not None, ask.text
            await stack.click("Confirm", ask.message)
    finally:
        root.handlers[:], root.level = saved[0], saved[1]
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    audit = [line for line in lines if line["logger"] == "kai_chatops.audit"]
    assert audit and logged in audit[0]["event"]
    secrets = [word.strip("'@") for word in pasted.split() if word not in logged.split()]
    assert secrets and [secret for secret in secrets if secret in json.dumps(lines)] == []
