"""`/kai timeline` as the slash command reads it: --since, ALERT_ID, and bad input said."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.core import errors
from bot.subcommands import GRAMMAR
from bot.timeline.commands import IncidentTimeline, ShowTimeline


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("timeline", ShowTimeline(timedelta(hours=2))),
        ("timeline --since 30m", ShowTimeline(timedelta(minutes=30))),
        ("timeline --since=1h30m --cluster prod", ShowTimeline(timedelta(minutes=90), "prod")),
        ("timeline \u2014since 1d", ShowTimeline(timedelta(days=1))),
        ("timeline 3F9A2C", IncidentTimeline("3f9a2c")),
        ("timeline 3f9a2c --cluster lab", IncidentTimeline("3f9a2c", "lab")),
    ],
    ids=["default 2h", "30m", "with = and a cluster", "a dash Slack made", "an alert ID", "on lab"],
)
def test_the_forms_of_timeline(text: str, expected: object) -> None:
    assert GRAMMAR.parse(text) == expected


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("timeline --since", "--since needs a DURATION after it"),
        ("timeline --since soon", "--since soon:"),
        ("timeline --since 8d", "too far back: the timeline goes back at most 7d"),
        ("timeline --since 1h --since 2h", "--since takes one DURATION"),
        ("timeline --since=1h --since=2h", "--since is given more than once"),
        ("timeline 2h", "write --since 2h"),
        ("timeline nope!", "'nope!' is not an ALERT_ID"),
        ("timeline 3f9a2c --since 1h", "an ALERT_ID takes no --since"),
        ("timeline --verbose", "does not take --verbose"),
    ],
    ids=["no value", "not a duration", "too far back", "twice", "twice with =",
         "a bare duration", "not an ID", "ID and since", "unknown flag"],
)  # fmt: skip
def test_bad_input_is_a_usage_naming_the_problem(text: str, said: str) -> None:
    with pytest.raises(errors.BadCommand) as bad:
        GRAMMAR.parse(text)
    assert said in str(bad.value)
    assert "/kai timeline [--since DURATION]" in bad.value.usage
