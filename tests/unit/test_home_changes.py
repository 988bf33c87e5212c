"""`/kai changes`: how it is read and how its list looks (who, why, since, until, by hand)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.core import errors
from bot.home.commands import ShowChanges
from bot.home.render_changes import changes_message
from bot.rules.held import HeldObject, paused_objects
from bot.slack import limits
from bot.subcommands import GRAMMAR

NOW = datetime(2026, 8, 24, 10, 0, tzinfo=UTC)
OURS = HeldObject(
    "paused", "ScaledJob", "annia", "annia-worker", "sim", "U0OPERATOR", "2026-08-24T08:00:00Z",
    "node drain",
)  # fmt: skip
SUSPENDED = HeldObject(
    "suspended", "HelmRelease", "apps", "podinfo", "lab", "U0OPERATOR", "2026-08-24T09:00:00Z",
    "canary", "2026-08-24T11:00:00Z",
)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "expected"),
    [("changes", ShowChanges()), ("changes --cluster lab", ShowChanges("lab"))],
    ids=["every-cluster", "one-cluster"],
)
def test_changes_reads_every_cluster_unless_one_is_named(text: str, expected: ShowChanges) -> None:
    assert GRAMMAR.parse(text) == expected
    assert not GRAMMAR.needs_operator(expected)


def test_changes_with_extra_words_gets_its_usage() -> None:
    with pytest.raises(errors.BadCommand) as raised:
        GRAMMAR.parse("changes annia")

    assert "unexpected 'annia'" in str(raised.value)
    assert raised.value.usage.startswith("/kai changes [--cluster NAME]")


def test_each_line_says_cluster_kind_name_who_since_until_and_why() -> None:
    message = changes_message([OURS, SUSPENDED], clusters=["sim", "lab"], now=NOW)

    text = message["text"]
    assert "Pauses and suspends in force on sim, lab" in text
    assert "1 paused · 1 suspended" in text
    assert (
        "sim · *ScaledJob annia/annia-worker* paused by <@U0OPERATOR> · since 2026-08-24 08:00 "
        "UTC (2h ago) · no end · why: node drain" in text
    )
    assert "lab · *HelmRelease apps/podinfo* suspended by <@U0OPERATOR>" in text
    assert "until 2026-08-24 11:00 UTC · why: canary" in text


def test_a_pause_by_hand_says_so_with_when_it_was_first_seen() -> None:
    by_hand = HeldObject("paused", "ScaledObject", "annia", "api", "sim", how="scale-in")
    first_seen = {("sim", "ScaledObject", "annia", "api"): NOW - timedelta(hours=3)}

    seen = changes_message([by_hand], clusters=["sim"], now=NOW, first_seen=first_seen)
    unseen = changes_message([by_hand], clusters=["sim"], now=NOW)

    assert (
        "*ScaledObject annia/api* paused (scale-in) by hand, no record · first seen "
        "2026-08-24 07:00 UTC (3h ago) · no end" in seen["text"]
    )
    assert "by hand, no record · since unknown · no end" in unseen["text"]


def test_one_direction_and_paused_replicas_pauses_are_held() -> None:
    def scaled_object(name: str, notes: dict[str, str]) -> dict[str, object]:
        meta = {"name": name, "namespace": "annia", "annotations": notes}
        return {"kind": "ScaledObject", "metadata": meta}

    held = paused_objects(
        [
            scaled_object("in", {"autoscaling.keda.sh/paused-scale-in": "true"}),
            scaled_object("zero", {"autoscaling.keda.sh/paused-replicas": "0"}),
            scaled_object("free", {"autoscaling.keda.sh/paused-scale-out": "false"}),
        ],
        "sim",
    )

    assert [(h.name, h.how) for h in held] == [("in", "scale-in"), ("zero", "at 0 replicas")]


def test_many_changes_stay_within_slacks_limits_and_say_how_many_were_left_out() -> None:
    many = [replace(OURS, name=f"job-{n}", reason="r" * 400) for n in range(400)]

    message = changes_message(many, clusters=["sim"], now=NOW)

    assert len(message["blocks"]) <= limits.MAX_BLOCKS
    assert "more not shown here" in str(message["blocks"][-1])
    assert len(message["text"]) <= limits.MAX_MESSAGE_TEXT


def test_nothing_held_says_so() -> None:
    message = changes_message([], clusters=["sim"], now=NOW, notes=["lab: cannot list"])

    assert "Nothing is paused or suspended." in message["text"]
    assert "lab: cannot list" in message["text"]
