"""Cordon and uncordon plans (`bot.nodes.cordon`), their words, and the subcommands."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from objects import node

from bot.core import errors
from bot.nodes import cordon, gpus, render_cordon
from bot.nodes.commands import Cordon, ShowNodes, Uncordon
from bot.nodes.cordon import NodeTarget
from bot.slack.blocks import neutralise
from bot.subcommands import GRAMMAR

NOW = datetime(2026, 8, 24, 8, 0, tzinfo=UTC)
TARGET = NodeTarget("gpu-node-1", "prod")
OURS = {
    gpus.CORDONED_BY: "U1",
    gpus.CORDONED_AT: "2026-08-24T06:00:00Z",
    gpus.CORDON_UNTIL: "2026-08-24T07:00:00Z",
    gpus.CORDON_REASON: "XID 79",
}


def test_a_cordon_writes_unschedulable_and_our_record_only() -> None:
    plan = cordon.plan_cordon(
        node(), TARGET, user="U1", reason="XID 79", duration=timedelta(hours=2), now=NOW
    )
    assert plan.refusal == "" and plan.gpus == 8
    assert plan.until == NOW + timedelta(hours=2)
    assert plan.patch_body("7") == {
        "spec": {"unschedulable": True},
        "metadata": {
            "resourceVersion": "7",
            "annotations": {
                gpus.CORDONED_BY: "U1",
                gpus.CORDONED_AT: "2026-08-24T08:00:00Z",
                gpus.CORDON_REASON: "XID 79",
                gpus.CORDON_UNTIL: "2026-08-24T10:00:00Z",
            },
        },
    }


def test_an_untimed_cordon_without_reason_deletes_a_stale_record_of_ours() -> None:
    plan = cordon.plan_cordon(
        node(annotations=OURS), TARGET, user="U2", reason="", duration=None, now=NOW
    )
    notes = plan.patch["metadata"]["annotations"]
    assert notes[gpus.CORDON_REASON] is None and notes[gpus.CORDON_UNTIL] is None
    assert notes[gpus.CORDONED_BY] == "U2" and plan.until is None


def test_a_node_already_cordoned_is_refused_and_nothing_is_written() -> None:
    plan = cordon.plan_cordon(
        node(unschedulable=True), TARGET, user="U1", reason="", duration=None, now=NOW
    )
    assert plan.refusal == cordon.ALREADY_CORDONED and plan.patch == {}
    words = neutralise(render_cordon.refusal_message(plan, "/kai")["text"])
    assert "already cordoned (by hand or by a health tool" in words
    assert "/kai uncordon gpu-node-1 --cluster prod" in words


def test_an_uncordon_writes_false_and_deletes_our_record() -> None:
    plan = cordon.plan_uncordon(node(unschedulable=True, annotations=OURS), TARGET)
    assert plan.patch == {
        "spec": {"unschedulable": False},
        "metadata": {"annotations": dict.fromkeys(gpus.RECORD_KEYS)},
    }
    assert cordon.plan_uncordon(node(unschedulable=True), TARGET).patch == {
        "spec": {"unschedulable": False}
    }


def test_uncordon_of_a_schedulable_node_is_refused() -> None:
    plan = cordon.plan_uncordon(node(), TARGET)
    assert plan.refusal == cordon.NOT_CORDONED
    assert (
        "is not cordoned; nothing was changed" in render_cordon.refusal_message(plan, "/k")["text"]
    )


def test_a_timed_cordon_of_ours_is_expired_after_its_until_only() -> None:
    obj = node(unschedulable=True, annotations=OURS)
    expired = cordon.find_expired_cordon(obj, "prod", NOW)
    assert expired is not None and expired.target == TARGET
    assert expired.length == timedelta(hours=1)
    assert cordon.find_expired_cordon(obj, "prod", datetime(2026, 8, 24, 6, 30, tzinfo=UTC)) is None
    assert cordon.find_expired_cordon(node(annotations=OURS), "prod", NOW) is None  # uncordoned
    untimed = {k: v for k, v in OURS.items() if k != gpus.CORDON_UNTIL}
    assert (
        cordon.find_expired_cordon(node(unschedulable=True, annotations=untimed), "p", NOW) is None
    )


def test_next_due_is_the_soonest_end_still_ahead() -> None:
    later = dict(OURS) | {gpus.CORDON_UNTIL: "2026-08-24T12:00:00Z"}
    sooner = dict(OURS) | {gpus.CORDON_UNTIL: "2026-08-24T09:00:00Z"}
    objs = [
        node("a", unschedulable=True, annotations=later),
        node("b", unschedulable=True, annotations=sooner),
        node("c", unschedulable=True, annotations=OURS),  # past: not ahead
        node("d", annotations=sooner),  # not cordoned
    ]
    assert cordon.next_due(objs, NOW) == datetime(2026, 8, 24, 9, 0, tzinfo=UTC)
    assert cordon.next_due([], NOW) is None


def test_the_confirm_says_what_is_written_and_that_nothing_is_drained() -> None:
    plan = cordon.plan_cordon(
        node(gpus=None), TARGET, user="U1", reason="disk", duration=timedelta(hours=2), now=NOW
    )
    lines = render_cordon.confirm_lines(plan, duration=timedelta(hours=2), now=NOW)
    text = "\n".join(lines)
    assert lines[0] == "Node gpu-node-1 has no GPUs (no nvidia.com/gpu)."
    assert "kai-chatops never drains" in text
    assert "until 2026-08-24 10:00 UTC" in text and "Reason: disk" in text
    assert "Writes: spec.unschedulable: true, kai-chatops/cordoned-by" in text
    assert render_cordon.confirm_title(plan) == "Cordon Node gpu-node-1 on prod?"


def test_the_announcement_escapes_the_reason_and_mentions_only_the_user() -> None:
    plan = cordon.plan_cordon(
        node(), TARGET, user="U1", reason="<!channel> hi", duration=None, now=NOW
    )
    text = neutralise(render_cordon.announcement(plan, "U1"))
    assert text.startswith("<@U1> cordoned Node gpu-node-1 on prod until uncordoned")
    assert "&lt;!channel&gt; hi" in text and "<!channel>" not in text


def test_the_audit_details_name_the_record_before_and_the_gpus() -> None:
    plan = cordon.plan_uncordon(node(unschedulable=True, annotations=OURS), TARGET)
    assert render_cordon.details(plan) == {
        "cordoned_by": "U1",
        "cordoned_at": "2026-08-24T06:00:00Z",
        "until": "2026-08-24T07:00:00Z",
        "gpus": "8",
    }


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("nodes", ShowNodes()),
        ("nodes --cluster prod", ShowNodes("prod")),
        ("cordon gpu-node-1", Cordon("gpu-node-1", None, "")),
        (
            "cordon gpu-node-1 for 2h XID 79 on GPU 2",
            Cordon("gpu-node-1", timedelta(hours=2), "XID 79 on GPU 2"),
        ),
        (
            "cordon ip-10-0-1-2.ec2.internal bad nic",
            Cordon("ip-10-0-1-2.ec2.internal", None, "bad nic"),
        ),
        ("uncordon gpu-node-1 --cluster prod", Uncordon("gpu-node-1", "prod")),
    ],
)
def test_the_subcommands_read_as_the_design_writes_them(text: str, parsed: object) -> None:
    assert GRAMMAR.parse(text) == parsed


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("cordon", "cordon needs a NODE"),
        ("cordon Gpu_Node", "'Gpu_Node' is not a node name"),
        ("cordon gpu-node-1 2h", "write 'for 2h' before the reason"),
        ("uncordon gpu-node-1 extra", "unexpected 'extra'"),
        ("nodes gpu-node-1", "unexpected 'gpu-node-1'"),
    ],
)
def test_bad_input_gets_a_clear_message(text: str, problem: str) -> None:
    with pytest.raises(errors.BadCommand, match=problem):
        GRAMMAR.parse(text)


def test_cordon_and_uncordon_need_an_operator_and_nodes_does_not() -> None:
    assert GRAMMAR.needs_operator(Cordon("n", None, ""))
    assert GRAMMAR.needs_operator(Uncordon("n"))
    assert not GRAMMAR.needs_operator(ShowNodes())
