"""The ack of a slash command, decided from its text alone (`bot.subcommands.acks`): what HTTP
mode's endpoint and Socket Mode's middleware answer before any listener runs, and the command
parsed once for the listener; every parsed type has a runner, so none is left unanswered."""

from __future__ import annotations

import pytest

import handlers
from bot.commands.registry import Help, label_of
from bot.config.settings import GitopsSettings, GitopsShortcut
from bot.health.commands import CheckHealth
from bot.home.commands import ShowChanges
from bot.keda.commands import Pause
from bot.slack import blocks
from bot.subcommands import GRAMMAR, acks
from bot.workloads.commands import ShowPending, ShowQueues, Why

GITOPS = GitopsSettings(kai=GitopsShortcut("HelmRelease", "flux-system", "kai-scheduler"))


def decide(text: str, *, draining: bool = False) -> acks.Decided:
    return acks.decide(text, "/gpu", GITOPS, draining=draining)


def test_a_command_that_does_not_parse_is_answered_with_that_subcommands_usage() -> None:
    decided = decide("pause annia")
    assert decided.parsed is None and decided.invalid
    assert decided.answer is not None and decided.answer["response_type"] == "ephemeral"
    assert "/gpu pause" in decided.answer["text"]  # the usage of pause, in the command's name
    assert decided.answer["text"].endswith(GRAMMAR.usage_for("pause", "/gpu"))
    assert decided.answer["blocks"][0]["text"]["text"].startswith(":warning: ")


def test_an_unknown_subcommand_is_answered_with_the_closest_ones_usage() -> None:
    decided = decide("helth")
    assert decided.invalid and decided.answer is not None
    assert "did you mean health?" in decided.answer["text"]
    assert GRAMMAR.usage_for("health", "/gpu") in decided.answer["text"]


@pytest.mark.parametrize(
    ("text", "topic"),
    [("help", None), ("", None), ("health --help", "health"), ("help reconcile", "reconcile")],
    ids=["help", "empty", "--help", "help topic"],
)
def test_help_is_answered_in_the_ack(text: str, topic: str | None) -> None:
    shown = blocks.help_message(acks.help_text("/gpu", topic, GITOPS))
    assert decide(text) == acks.Decided({**shown, "response_type": "ephemeral"})


def test_the_help_names_the_configured_shortcuts() -> None:
    text = acks.help_text("/gpu", None, GITOPS)
    assert text.startswith(GRAMMAR.help_text("/gpu"))
    assert "/gpu reconcile kai: HelmRelease flux-system/kai-scheduler" in text
    assert "/gpu reconcile keda: not configured (gitops.keda)" in text


def test_help_on_reconcile_names_the_shortcuts_and_other_topics_do_not() -> None:
    assert "Shortcuts:" in acks.help_text("/gpu", "reconcile", GITOPS)
    assert "Shortcuts:" not in acks.help_text("/gpu", "pause", GITOPS)


def test_while_draining_every_command_is_answered_restarting() -> None:
    for text in ("health", "pause annia/x for 2h", "nonsense words", "help"):
        decided = decide(text, draining=True)
        assert decided.answer == {
            **blocks.text_message(blocks.RESTARTING),
            "response_type": "ephemeral",
        }
        assert decided.parsed is None and not decided.invalid


def test_a_good_command_is_acked_empty_and_handed_on_parsed() -> None:
    assert decide("health --cluster prod") == acks.Decided(None, CheckHealth("prod"))
    decided = decide("pause annia/annia-worker for 2h")
    assert decided.answer is None and not decided.invalid
    assert isinstance(decided.parsed, Pause) and decided.parsed.namespace == "annia"


def test_every_parsed_type_of_the_table_has_a_runner() -> None:
    """So the listener never meets a command it cannot run (the ack said nothing)."""
    assert GRAMMAR.types - {Help} <= set(handlers._runners())


@pytest.mark.parametrize(
    ("parsed", "label"),
    [
        (CheckHealth(), "health"),
        (ShowQueues(), "queues"),
        (ShowPending(), "pending"),
        (ShowChanges(), "changes"),
        (Why("a", "b"), "why"),
        (GRAMMAR.parse("pause a/b"), "pause"),
        (GRAMMAR.parse("resume hr a/b"), "fluxresume"),  # the Flux form of resume
    ],
    ids=lambda x: x if isinstance(x, str) else type(x).__name__,
)
def test_each_subcommand_is_counted_under_the_label_it_always_had(
    parsed: object, label: str
) -> None:
    assert label_of(parsed) == label
