"""The Home tab's changes waiting for approval: shown only when something waits, and within the
view's limits however many wait, beside every other part at its fullest."""

from __future__ import annotations

from home_views import big_home, texts

from bot.home.model import Home
from bot.home.render import home_view
from bot.slack import limits


def full_home(approvals: int) -> Home:
    """`approvals` changes waiting, beside every other part at its fullest."""
    return big_home(clusters=50, alerts=300, held=400, approvals=approvals)


def test_hundreds_waiting_beside_every_full_part_stay_within_the_view_limits() -> None:
    view = home_view(full_home(approvals=300), "/kai")

    assert limits.check_view(view) == []
    text = texts(view)
    assert "Waiting for approval (300)" in text and "`ID000000`" in text
    assert text.count("more not shown here") == 4  # findings, alerts, approvals, pauses
    assert "ScaledJob annia/j9" in text  # the last part, recent changes, is not cut off


def test_nothing_waiting_shows_no_approval_part() -> None:
    assert "Waiting for approval" not in texts(home_view(full_home(approvals=0), "/kai"))
