"""What changed, with the page, and the postmortem draft, end to end: every alert's thread gets,
after its diagnosis, "What changed in the hour before" (owed and delivered by the outbox: once,
in order, the words gathered when it fired, across an outage and a restart); `/kai timeline
ALERT_ID` posts the incident's whole timeline as a Markdown file in its thread through Slack's
upload methods (files.getUploadURLExternal, the upload URL, files.completeUploadExternal)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from alert_stack import HOLD, alert_id, assert_one_clean_incident, check, overrides, roots, words
from clocks import Clock
from test_e2e_timeline import helm_upgraded, replica_set

from bot.keda.usecase import AckWait
from testbed.sim import breakage
from testbed.slackemu import ApiCall, PostedMessage
from testbed.slackemu.records import Fault
from testbed.stack import ALERT_CHANNEL, Stack, running_stack

MENTION = ["U0LEAD"]


@asynccontextmanager
async def incident_stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    config = overrides(tmp_path, alerts={"hold": f"{HOLD}s", "interval": "1h", "mention": MENTION})
    async with running_stack(
        tmp_path,
        clock=clock,
        sim_clock=clock,
        monotonic=clock.monotonic,
        config_overrides=config,
        slack_timeout=0.3,
        slack_backoffs=(0.0, 0.0, 0.0),
        keda_wait=AckWait(timeout=0.2),
    ) as stack:
        yield stack


async def changed_then_broke(stack: Stack, clock: Clock) -> PostedMessage:
    """Three hours after the install: a Helm upgrade, then the binder rolled out, then KAI's
    dependencies go missing; checked until it pages. The root."""
    clock.advance(3 * 3600)
    await check(stack.service)
    clock.advance(600)
    helm_upgraded(stack, clock())
    clock.advance(300)
    stack.sim.apply(replica_set("binder-7c4d9f8b6", "binder", 2, "ghcr.io/kai/binder:v0.17.1"))
    clock.advance(300)
    breakage.dependencies_missing(stack.sim)
    await check(stack.service)
    clock.advance(HOLD)
    await check(stack.service)
    [root] = roots(stack)
    return root


async def test_the_second_reply_under_a_page_is_what_changed_in_the_hour_before(
    tmp_path: Path, clock: Clock
) -> None:
    async with incident_stack(tmp_path, clock) as stack:
        root = await changed_then_broke(stack, clock)
        diagnosis, changes = stack.slack.thread(ALERT_CHANNEL, root.ts)

        assert diagnosis.text.startswith("Diagnosis of kai on sim")
        shown = words(changes)
        assert changes.text.startswith("What changed on sim in the hour before: 2 change(s)")
        assert "Alert " not in words(changes)  # the page itself is not news in its thread
        assert shown.index("*Deployment kai-scheduler/binder* rolled out revision 2") < shown.index(
            "*HelmRelease flux-system/keda* upgrade to v6: chart keda@2.20.3"
        )  # newest first
        assert "(10:20 UTC to 11:21 UTC)" in shown.replace("2026-08-24 ", "")  # first seen - 1h
        assert "`/kai timeline --cluster sim` looks again." in shown
        assert "<@" not in shown and "<!" not in shown  # a thread reply notifies nobody
        assert changes.metadata["event_payload"]["note"] == "changes"
        assert_one_clean_incident(stack)


async def test_what_changed_is_kept_as_gathered_across_a_slack_outage_and_a_restart(
    tmp_path: Path, clock: Clock
) -> None:
    async with incident_stack(tmp_path, clock) as stack:

        def slack_down_after_the_root(call: ApiCall) -> None:
            if call.method == "chat.postMessage" and call.ok:
                stack.slack.fault_rule = lambda method: Fault(503, 0, "service_unavailable")

        stack.slack.observers.append(slack_down_after_the_root)
        root = await changed_then_broke(stack, clock)
        assert stack.slack.thread(ALERT_CHANNEL, root.ts) == []  # gathered, stored, not sent

        stack.sim.delete("helm.toolkit.fluxcd.io/v2", "HelmRelease", "keda", "flux-system")
        await stack.restart_service()
        stack.slack.observers.remove(slack_down_after_the_root)
        stack.slack.fault_rule = None
        await check(stack.service)

        _, changes = stack.slack.thread(ALERT_CHANNEL, root.ts)
        assert "upgrade to v6: chart keda@2.20.3" in words(changes)  # as it was when it fired
        assert_one_clean_incident(stack)


async def test_the_postmortem_draft_is_the_whole_incident_as_a_markdown_file_in_its_thread(
    tmp_path: Path, clock: Clock
) -> None:
    async with incident_stack(tmp_path, clock) as stack:
        root = await changed_then_broke(stack, clock)
        incident = alert_id(root)
        clock.advance(60)
        await stack.command(f"ack {incident}")
        clock.advance(60)
        await stack.command(f"silence {incident} 1h waiting for *prometheus* <operator>")
        breakage.heal(stack.sim)
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)

        reply = await stack.command(f"timeline {incident}")

        assert reply.message is not None and reply.message["response_type"] == "ephemeral"
        assert f"The postmortem draft of alert {incident}" in reply.text
        assert "is posted in its thread in the alert channel" in reply.text
        shared = stack.slack.thread(ALERT_CHANNEL, root.ts)[-1]
        assert shared.text == f"Postmortem draft of alert {incident}: its whole timeline, to edit."
        [file] = shared.files
        draft = stack.slack.files.by_id[file["id"]].text
        assert file["name"] == f"postmortem-sim-{incident}-20260824T1121.md"
        assert draft.startswith("# Postmortem draft: DependenciesFulfilled is False at generation")
        assert "- **Resolved:** 2026-08-24 11:24:00Z (after 3m)" in draft
        assert "- **The operator's words:** KAI-prometheus is missing prometheus operator" in draft
        timeline = draft[draft.index("## Timeline") : draft.index("## What the sources")]
        told = [line.split("** ", 1)[1] for line in timeline.splitlines() if "** " in line]
        assert told == [
            "upgrade to v6: chart keda@2.20.3 (app 2.20.3), values sha256:77e0c1d2a3b4…: "
            "deployed (Flux)",
            "rolled out revision 2 (ReplicaSet binder-7c4d9f8b6: ghcr.io/kai/binder:v0.17.1) "
            "(rollout)",
            "first seen: DependenciesFulfilled is False at generation 1 (alert)",
            "fired (critical) (alert)",
            "paged: root posted in the alert channel, mentioning U0LEAD (alert)",
            "diagnosis gathered (first reply) (alert)",
            "what changed in the hour before, gathered (second reply) (alert)",
            "acknowledged (alert); by U0OPERATOR",
            "silenced until 2026-08-24 12:23:00Z (alert); by U0OPERATOR; "
            "why: waiting for \\*prometheus\\* \\<operator\\>",  # escaped: no emphasis, no HTML
            "resolved (alert)",
        ]
        assert "- Evictions: back to 2026-08-24 10:24:00Z only" in draft  # what it could not see
        methods = [c.method for c in stack.slack.calls if c.method.startswith("files.")]
        assert methods == ["files.getUploadURLExternal", "files.completeUploadExternal"]


async def test_a_draft_slack_will_not_take_is_said_and_nothing_is_shared(
    tmp_path: Path, clock: Clock
) -> None:
    async with incident_stack(tmp_path, clock) as stack:
        root = await changed_then_broke(stack, clock)
        stack.slack.workspace.scopes.discard("files:write")  # an app installed before it
        reply = await stack.command(f"timeline {alert_id(root)}")
        assert "missing_scope" in reply.text
        assert reply.message is not None and reply.message["response_type"] == "ephemeral"
        assert stack.slack.files.by_id == {}
        assert len(stack.slack.thread(ALERT_CHANNEL, root.ts)) == 2  # nothing more in it
