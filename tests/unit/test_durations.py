"""Durations as users type them in commands and in the configuration file."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.core import durations

GOOD = [
    ("30s", timedelta(seconds=30)),
    ("30m", timedelta(minutes=30)),
    ("2h", timedelta(hours=2)),
    ("1d", timedelta(days=1)),
    ("1h30m", timedelta(hours=1, minutes=30)),
    ("1d2h", timedelta(days=1, hours=2)),
    ("1d2h3m4s", timedelta(days=1, hours=2, minutes=3, seconds=4)),
    ("90m", timedelta(minutes=90)),
    ("2H", timedelta(hours=2)),
    (" 45s ", timedelta(seconds=45)),
]


@pytest.mark.parametrize(("text", "expected"), GOOD, ids=[text.strip() for text, _ in GOOD])
def test_a_duration_as_typed_is_read(text: str, expected: timedelta) -> None:
    assert durations.parse_duration(text) == expected


BAD = ["", "   ", "0m", "0h0m", "2x", "-1h", "h", "1.5h", "30m1h", "1h1h", "2 h", "two hours", "٣h"]


@pytest.mark.parametrize("text", BAD, ids=[repr(text) for text in BAD])
def test_a_malformed_or_zero_duration_is_refused_with_what_is_expected(text: str) -> None:
    with pytest.raises(ValueError, match="expected a duration like 30m, 2h, 1d or 1h30m"):
        durations.parse_duration(text)


def test_the_refusal_quotes_what_was_typed() -> None:
    with pytest.raises(ValueError, match="'2 hours' is not a duration"):
        durations.parse_duration("2 hours")


FORMATTED = [
    (timedelta(hours=1, minutes=30), "1h30m"),
    (timedelta(seconds=45), "45s"),
    (timedelta(days=2), "2d"),
    (timedelta(0), "0s"),
    (timedelta(days=1, hours=2, minutes=3, seconds=4), "1d2h3m4s"),
    (timedelta(minutes=90), "1h30m"),
    (timedelta(seconds=59, microseconds=999_999), "59s"),
    (timedelta(minutes=-5), "-5m"),
]


@pytest.mark.parametrize(("td", "expected"), FORMATTED, ids=[text for _, text in FORMATTED])
def test_a_duration_is_shown_in_the_compact_form(td: timedelta, expected: str) -> None:
    assert durations.format_duration(td) == expected


# Health headlines and how long pods waited (formerly `bot.health.report.format_age`).
COARSE = [
    (timedelta(seconds=45), "45s"),
    (timedelta(minutes=25), "25m"),
    (timedelta(minutes=5, seconds=30), "5m"),
    (timedelta(hours=1, minutes=30), "1h30m"),
    (timedelta(hours=2), "2h"),
    (timedelta(days=2, hours=4, minutes=10), "2d4h"),
    (timedelta(days=2, minutes=10), "2d"),
    (timedelta(seconds=-5), "0s"),
]


@pytest.mark.parametrize(("td", "expected"), COARSE, ids=[str(td) for td, _ in COARSE])
def test_a_coarse_duration_keeps_the_two_largest_units(td: timedelta, expected: str) -> None:
    assert durations.format_duration(td, "coarse") == expected


# The Home tab's alert ages (formerly `bot.home.render._age`'s own arithmetic).
TO_THE_MINUTE = [
    (timedelta(seconds=20), "1m"),
    (timedelta(seconds=-20), "1m"),
    (timedelta(minutes=2, seconds=59), "2m"),
    (timedelta(hours=2, minutes=5, seconds=10), "2h5m"),
    (timedelta(days=1, hours=2, minutes=3, seconds=4), "1d2h3m"),
]


@pytest.mark.parametrize(
    ("td", "expected"), TO_THE_MINUTE, ids=[str(td) for td, _ in TO_THE_MINUTE]
)
def test_a_duration_to_the_minute_is_at_least_one_minute(td: timedelta, expected: str) -> None:
    assert durations.format_duration(td, "minute") == expected


@pytest.mark.parametrize("text", ["30s", "2h", "1d2h", "1h30m", "1d2h3m4s"])
def test_the_compact_form_reads_back_to_the_same_duration(text: str) -> None:
    assert durations.format_duration(durations.parse_duration(text)) == text


def test_a_duration_over_a_year_is_refused_not_overflowed() -> None:
    with pytest.raises(ValueError, match="too long"):
        durations.parse_duration("999999999999d")
    assert durations.parse_duration("365d").days == 365
