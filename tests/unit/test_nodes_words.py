"""The exact words of GPU nodes in Slack: the cordon's Confirm, refusals, results and records
(`bot.nodes.render_cordon`), `/kai nodes` and a node's evidence (`bot.nodes.render`), the GPU
node alert's observation (`bot.alerts.gpu_nodes`), and whole cordon plans (`bot.nodes.cordon`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from objects import condition, node

from bot.alerts import gpu_nodes
from bot.alerts.model import AlertKey, Observation, Severity
from bot.core import conditions
from bot.nodes import cordon, gpus, render, render_cordon
from bot.nodes.cordon import CordonPlan, NodeTarget
from bot.slack.blocks import neutralise

NOW = datetime(2026, 8, 24, 8, 0, tzinfo=UTC)
TARGET = NodeTarget("gpu-node-1", "prod")
OURS = {
    gpus.CORDONED_BY: "U1",
    gpus.CORDONED_AT: "2026-08-24T06:00:00Z",
    gpus.CORDON_UNTIL: "2026-08-24T07:00:00Z",
    gpus.CORDON_REASON: "XID 79",
}
RECORD = gpus.CordonRecord(True, "U1", "2026-08-24T06:00:00Z", "XID 79", "2026-08-24T07:00:00Z")
RECORDED = "cordoned by <@U1> at 2026-08-24 06:00 UTC, until 2026-08-24 07:00 UTC: XID 79"


# Plans are made inside each test (never at import), so a mutant of the planner meets them.
def uncordon_plan() -> CordonPlan:
    return cordon.plan_uncordon(node(unschedulable=True, annotations=OURS), TARGET)


def timed_plan(obj: dict[str, object] | None = None) -> CordonPlan:
    return cordon.plan_cordon(
        obj or node(), TARGET, user="U1", reason="XID 79", duration=timedelta(hours=2), now=NOW
    )


def endless_plan() -> CordonPlan:
    return cordon.plan_cordon(node(), TARGET, user="U1", reason="", duration=None, now=NOW)


def ephemeral(text: str) -> dict[str, object]:
    section = {"type": "section", "text": {"type": "mrkdwn", "text": text}}
    return {"text": text, "blocks": [section], "response_type": "ephemeral"}


def test_whole_plans_of_refusals_and_of_an_uncordon() -> None:
    assert cordon.plan_cordon(
        node(unschedulable=True, annotations=OURS),
        TARGET,
        user="U",
        reason="",
        duration=None,
        now=NOW,
    ) == CordonPlan("cordon", TARGET, RECORD, 8, refusal=cordon.ALREADY_CORDONED)
    assert cordon.plan_uncordon(node(), TARGET) == CordonPlan(
        "uncordon", TARGET, gpus.CordonRecord(False), 8, refusal=cordon.NOT_CORDONED
    )
    assert (
        CordonPlan(
            "uncordon",
            TARGET,
            RECORD,
            8,
            {"spec": {"unschedulable": False}, "metadata": {"annotations": dict.fromkeys(OURS)}},
        )
        == uncordon_plan()
    )
    assert (timed_plan().action, timed_plan().before, timed_plan().target) == (
        "cordon",
        gpus.CordonRecord(False),
        TARGET,
    )


def test_a_timed_cordon_is_due_at_its_until_not_before() -> None:
    at_until = datetime(2026, 8, 24, 7, 0, tzinfo=UTC)
    obj = node(unschedulable=True, annotations=OURS)
    expired = cordon.find_expired_cordon(obj, "prod", at_until)
    assert expired == cordon.ExpiredCordon(TARGET, RECORD, at_until, at_until - timedelta(hours=1))
    assert cordon.next_due([obj], at_until) is None
    assert cordon.next_due([obj], at_until - timedelta(seconds=1)) == at_until
    assert conditions.format_timestamp(datetime(2026, 8, 24, 10, 0, tzinfo=UTC).astimezone()) == (
        "2026-08-24T10:00:00Z"
    )


def test_the_confirm_lines_of_each_change() -> None:
    assert render_cordon.confirm_lines(uncordon_plan(), duration=None, now=NOW) == [
        f"It is {RECORDED.replace('<@U1>', 'U1')}.",
        "New pods may be scheduled on it again (spec.unschedulable: false, the kai-chatops "
        "record deleted).",
    ]
    assert render_cordon.confirm_lines(timed_plan(), duration=timedelta(hours=2), now=NOW) == [
        render_cordon.WHAT_CORDON_DOES,
        "For 2h, until 2026-08-24 10:00 UTC: then kai-chatops uncordons it (even after a restart).",
        "Reason: XID 79",
        "Writes: spec.unschedulable: true, kai-chatops/cordoned-by, kai-chatops/cordoned-at, "
        "kai-chatops/cordon-reason, kai-chatops/cordon-until",
    ]
    assert render_cordon.confirm_lines(endless_plan(), duration=None, now=NOW) == [
        render_cordon.WHAT_CORDON_DOES,
        "Until someone uncordons it.",
        "Writes: spec.unschedulable: true, kai-chatops/cordoned-by, kai-chatops/cordoned-at",
    ]


def test_the_channels_records() -> None:
    assert neutralise(render_cordon.announcement(uncordon_plan(), "U2")) == (
        f"<@U2> uncordoned Node gpu-node-1 on prod (it was {RECORDED})."
    )
    assert neutralise(render_cordon.announcement(timed_plan(), "U2")) == (
        "<@U2> cordoned Node gpu-node-1 on prod until 2026-08-24 10:00 UTC: no new pods land "
        "there.\nReason: XID 79"
    )
    assert neutralise(render_cordon.announcement(endless_plan(), "U2")) == (
        "<@U2> cordoned Node gpu-node-1 on prod until uncordoned: no new pods land there."
    )
    expired = cordon.find_expired_cordon(node(unschedulable=True, annotations=OURS), "prod", NOW)
    assert expired is not None
    assert neutralise(render_cordon.auto_uncordon_text(expired)) == (
        f"Node gpu-node-1 on prod uncordoned automatically after 1h (it was {RECORDED})."
    )
    undated = {k: v for k, v in OURS.items() if k != gpus.CORDONED_AT}
    lone = cordon.find_expired_cordon(node(unschedulable=True, annotations=undated), "prod", NOW)
    assert lone is not None and lone.length is None
    assert neutralise(render_cordon.auto_uncordon_text(lone)) == (
        "Node gpu-node-1 on prod uncordoned automatically (it was cordoned by <@U1>, until "
        "2026-08-24 07:00 UTC: XID 79)."
    )


def test_the_record_in_words() -> None:
    assert neutralise(render_cordon.record_words(RECORD)) == RECORDED
    assert str(render_cordon.record_words(RECORD, md=False)) == RECORDED.replace("<@U1>", "U1")
    assert neutralise(render_cordon.record_words(gpus.CordonRecord(True, "U1"))) == (
        "cordoned by <@U1>, until uncordoned"
    )
    odd = gpus.CordonRecord(True, "U1", reason="a<b & c")
    assert (
        str(render_cordon.record_words(odd, md=False))
        == "cordoned by U1, until uncordoned: a<b & c"
    )
    assert neutralise(render_cordon.record_words(gpus.CordonRecord(True))) == (
        "cordoned (by hand or by a health tool: no kai-chatops record)"
    )


def test_the_clickers_answers_and_the_audit_details() -> None:
    assert render_cordon.cordon_result(timed_plan(), "/kai") == ephemeral(
        ":no_entry: Cordoned Node gpu-node-1 on prod until 2026-08-24 10:00 UTC, then uncordoned "
        "by kai-chatops: no new pods land there, nothing was drained. To uncordon it earlier: "
        "`/kai uncordon gpu-node-1 --cluster prod`."
    )
    assert render_cordon.cordon_result(endless_plan(), "/kai")["text"] == (
        ":no_entry: Cordoned Node gpu-node-1 on prod: no new pods land there, nothing was "
        "drained. To uncordon it: `/kai uncordon gpu-node-1 --cluster prod`."
    )
    assert render_cordon.uncordon_result(uncordon_plan()) == ephemeral(
        ":arrow_forward: Uncordoned Node gpu-node-1 on prod: new pods may be scheduled on it again."
    )
    assert render_cordon.refusal_message(cordon.plan_uncordon(node(), TARGET), "/kai") == (
        ephemeral(
            "Node gpu-node-1 on prod is not cordoned; nothing was changed. To cordon it: "
            "`/kai cordon gpu-node-1 --cluster prod`."
        )
    )
    refused = render_cordon.refused_message("cordon", TARGET, RuntimeError("no"))  # type: ignore[arg-type]
    assert refused == ephemeral("Could not cordon Node gpu-node-1 on prod: no. Nothing changed.")
    assert render_cordon.details(timed_plan()) == {"until": "2026-08-24T10:00:00Z", "gpus": "8"}
    assert render_cordon.details(endless_plan()) == {"gpus": "8"}
    cpu = timed_plan(node("cpu-node-1", gpus=None))
    assert render_cordon.cordon_result(cpu, "/k")["text"].startswith(
        ":no_entry: Cordoned Node gpu-node-1 on prod (it has no GPUs) until 2026-08-24 10:00 UTC,"
    )
    assert render_cordon.details(cpu) == {"until": "2026-08-24T10:00:00Z", "gpus": "0"}
    assert render_cordon.details(uncordon_plan()) == {
        "cordoned_by": "U1",
        "cordoned_at": "2026-08-24T06:00:00Z",
        "until": "2026-08-24T07:00:00Z",
        "gpus": "8",
    }


SICK_CONDITION = condition(
    "GpuMemWatch", "True", reason="GpuMemWatchIsNotHealthy", message="bad\nGPU 3"
)
SICK = gpus.read_gpu_node(
    node(
        allocatable=6,
        conditions=[SICK_CONDITION, condition("GpuHealthy", "Unknown")],
        unschedulable=True,
        annotations={gpus.CORDONED_BY: "U1", gpus.CORDONED_AT: "2026-08-24T06:00:00Z"},
    ),
    3,
)
SICK_LINES = (
    "gpu-node-1: Ready · GPUs 8 / 6 / 3 (2 lost: not allocatable)\n"
    "    cordoned by U1 at 2026-08-24 06:00 UTC, until uncordoned\n"
    "    GpuMemWatch True (GpuMemWatchIsNotHealthy) [failing]: bad GPU 3\n"
    "    GpuHealthy Unknown"
)


def well(**kwargs: object) -> gpus.GpuNode:
    found = gpus.read_gpu_node(node(**kwargs), 3)  # type: ignore[arg-type]
    assert found is not None
    return found


def test_a_nodes_lines_and_their_parts() -> None:
    assert SICK is not None and render.node_lines(SICK) == SICK_LINES
    assert render.node_lines(well()) == "gpu-node-1: Ready · GPUs 8 / 8 / 3"
    assert render.ready_words(well(ready="False")) == "NotReady (KubeletReady)"
    assert render.ready_words(well(ready=None)) == "Ready missing"
    assert render.ready_words(well(ready="Unknown")) == "Ready Unknown (KubeletReady)"
    assert render.cordon_words(gpus.CordonRecord(True)) == (
        "cordoned (spec.unschedulable, by hand or by a health tool: no kai-chatops record)"
    )
    assert render.cordon_words(gpus.CordonRecord(True, "U1", until="2026-08-24T07:00:00Z")) == (
        "cordoned by U1, until 2026-08-24 07:00 UTC"
    )
    assert render.condition_words(gpus.GpuCondition("GpuHealthy", "")) == "GpuHealthy unset"
    assert render.show_text_time("soon") == "'soon'"
    assert render.shown_message("a  b\nc") == "a b c"
    assert render.shown_message("x" * 300) == "x" * 300


def test_the_whole_nodes_message() -> None:
    assert SICK is not None
    message = render.nodes_message([well(), SICK], total=3, cluster="prod", command="/kai")
    summary = (
        "2 of 3 nodes have GPUs · 14 of 16 GPUs allocatable · 6 allocated · 1 need attention · "
        "1 cordoned"
    )
    hint = "`/kai cordon NODE [for DURATION] [REASON]` keeps new pods off a node."
    body = f"{SICK_LINES}\ngpu-node-1: Ready · GPUs 8 / 8 / 3"
    assert message == {
        "text": f"GPU nodes on prod: {summary}\n{body}\n{render.LEGEND}\n{hint}",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": "GPU nodes on prod"}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": summary}]},
            {"type": "section", "text": {"type": "mrkdwn", "text": body}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": render.LEGEND}]},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": hint}]},
        ],
    }
    unread = gpus.gpu_nodes([node("a")])
    assert (
        "1 of 1 nodes have GPUs · 8 of 8 GPUs allocatable\n"
        in render.nodes_message(unread, total=1, cluster="p", command="/k")["text"]
    )


def test_a_list_too_long_for_one_message_says_how_many_are_left_out() -> None:
    many = gpus.gpu_nodes(
        [
            node(f"node-{i:03}", conditions=[condition("GpuMemWatch", "True", message="m" * 280)])
            for i in range(500)
        ]
    )
    message = render.nodes_message(many, total=500, cluster="p", command="/k")
    shown = sum(
        b["text"]["text"].count("[failing]") for b in message["blocks"] if b["type"] == "section"
    )
    left = [b for b in message["blocks"] if "more GPU nodes not shown" in str(b)]
    assert 0 < shown < 500 and len(message["blocks"]) <= 50
    assert left == [
        {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": f"{500 - shown} more GPU nodes not shown: too many for one message.",
                }
            ],
        }
    ]
    one = render.nodes_message([], total=1, cluster="prod", command="/kai")
    assert one == {
        "text": "No node on prod has nvidia.com/gpu capacity (1 node in all): the device plugin "
        "advertises it on GPU nodes.",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": "GPU nodes on prod"}},
            {"type": "section", "text": {"type": "mrkdwn", "text": one["text"]}},
        ],
    }
    assert (
        "(3 nodes in all)" in render.nodes_message([], total=3, cluster="p", command="/k")["text"]
    )


def test_the_evidence_message() -> None:
    assert SICK is not None
    hint = (
        "`/kai nodes --cluster prod` shows every GPU node; `/kai cordon gpu-node-1` keeps new "
        "pods off it (nothing running is drained)."
    )
    text = f"Node gpu-node-1 on prod now:\n{SICK_LINES}"
    assert render.node_evidence(SICK, "gpu-node-1", "prod", "/kai") == {
        "text": text,
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": text}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": hint}]},
        ],
    }
    gone = "Node gpu-node-1 is gone from prod, or no longer has GPUs."
    assert render.node_evidence(None, "gpu-node-1", "prod", "/kai") == {
        "text": gone,
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": gone}}],
    }


def test_the_whole_observation_of_a_node_sick_every_way() -> None:
    found = gpus.read_gpu_node(
        node(
            allocatable=6,
            ready="False",
            conditions=[
                SICK_CONDITION,
                condition("GpuUnhealthy", "True", at="2026-01-01T00:00:00Z"),
            ],
        )
    )
    assert found is not None
    (seen,) = gpu_nodes.gpu_node_alerts("p", [found], command="/kai")
    assert seen == Observation(
        key=AlertKey("p", "Node", "gpu-node-1", "GPUs"),
        severity=Severity.WARNING,
        title="GPU node gpu-node-1: 2 of 8 GPUs lost; NotReady; GpuMemWatch True; "
        "GpuUnhealthy True",
        reason="GpuMemWatchIsNotHealthy",
        message="2 GPUs of its 8 not allocatable: the device plugin advertises 6 (it withdraws a "
        "GPU it marks unhealthy, e.g. after an XID error).\n"
        "Ready is False (KubeletReady): kubelet is posting ready status\n"
        "GpuMemWatch is True (GpuMemWatchIsNotHealthy): bad\nGPU 3\n"
        "GpuUnhealthy is True\n"
        "It is not cordoned: new pods may still be scheduled on it.",
        check_first=gpu_nodes._CHECK_FIRST.format(command="/kai", node="gpu-node-1"),
        since=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_reasons_fall_back_to_the_conditions_type_then_not_ready() -> None:
    bare = gpus.read_gpu_node(node(conditions=[condition("GpuUnhealthy", "True")]))
    assert bare is not None
    (seen,) = gpu_nodes.gpu_node_alerts("p", [bare], command="/k")
    assert seen.reason == "GpuUnhealthy"
    down = gpus.read_gpu_node(node(ready=None, conditions=[condition("Ready", "False")]))
    assert down is not None
    (seen,) = gpu_nodes.gpu_node_alerts("p", [down], command="/k")
    assert seen.reason == "NotReady"
    assert seen.message.startswith("Ready is False\n")
    (gone,) = gpu_nodes.gpu_node_alerts("p", [well(ready=None)], command="/k")
    assert gone.message.startswith("Ready is missing\n")
    assert seen.message.endswith("It is not cordoned: new pods may still be scheduled on it.")
    lone = well(allocatable=7)
    assert gpu_nodes.message_lines(lone)[0].startswith("1 GPU of its 8 not allocatable")
    ours = well(unschedulable=True, annotations={gpus.CORDONED_BY: "U1"})
    assert gpu_nodes.message_lines(ours) == ["It is cordoned by U1: no new pods land on it."]
    assert (
        gpu_nodes.message_lines(
            well(ready="False", unschedulable=True, annotations={gpus.CORDONED_BY: "U1"})
        )[-1]
        == "It is cordoned by U1: no new pods land on it."
    )
