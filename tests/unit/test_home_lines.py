"""Every line of the Home tab as a reader sees it (docs/design.md §2 "Home tab"): the top, each
cluster's verdict and the findings that are not Healthy, each active alert in its phase, what is
held, each recent change, and what each part says when it is empty. One whole view, read line by
line, so a word that goes missing or wrong is a failing line.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.core.models import Finding, Health, HealthReport
from bot.home.model import AlertLine, ChangeLine, ClusterStatus, HeldObject, Home
from bot.home.render import REFRESH_ACTION, home_view, not_allowed_view

NOW = datetime(2026, 8, 24, 12, 0, tzinfo=UTC)


def lines(view: dict[str, Any]) -> list[str]:
    """Each block's text, line by line; headers marked `#`, buttons `[ ]`."""
    found = []
    for block in view["blocks"]:
        if block["type"] == "header":
            found.append(f"# {block['text']['text']}")
        elif block["type"] == "actions":
            found += [f"[{e['text']['text']}]" for e in block["elements"]]
        elif block["type"] == "context":
            found += [e["text"] for e in block["elements"]]
        else:
            found += block["text"]["text"].splitlines()
    return found


def test_every_part_of_a_full_tab_reads_as_written() -> None:
    one = (Finding("Config kai-config", Health.DEGRADED, "DependenciesFulfilled is False"),)
    two = (*one, Finding("Deployment a/b", Health.PROGRESSING, "1/2 <updated>"),
           Finding("Queue q", Health.HEALTHY, "fine"))  # fmt: skip
    home = Home(
        now=NOW,
        clusters=(
            ClusterStatus("prod", HealthReport("prod", two, NOW)),
            ClusterStatus("lab", HealthReport("lab", one, NOW)),
            ClusterStatus("down", error="connection refused"),
            ClusterStatus("edge", HealthReport("edge", (), NOW)),
        ),
        alerts=(
            AlertLine("a1", "prod", True, "Config kai-config", "deps", "firing",
                      NOW - timedelta(minutes=90)),
            AlertLine("a2", "prod", False, "Deployment x", "down", "acknowledged",
                      NOW - timedelta(seconds=20), "U0OPS"),
            AlertLine("a3", "lab", False, "Deployment y", "down", "silenced", None,
                      "someone", None, "<!here> flaky"),
            AlertLine("a4", "lab", True, "APIService v1", "gone", "firing", None),
        ),
        held=(HeldObject("paused", "ScaledJob", "annia", "w", "prod"),),
        changes=(
            ChangeLine(NOW - timedelta(minutes=5), "slack:U0OPS", "pause", "ScaledJob annia/w",
                       "ok", "drain"),
            ChangeLine(NOW - timedelta(minutes=9), "kai-chatops", "resume", "HelmRelease a/b",
                       "done"),
            ChangeLine(NOW - timedelta(minutes=12), "U0OPS", "sync", "Application argocd/x",
                       "unknown", "", "timed out"),
            ChangeLine(NOW - timedelta(minutes=15), "U0OPS", "sync", "Application argocd/y",
                       "failed"),
        ),
    )  # fmt: skip

    view = home_view(home, "/gpu")

    assert view["type"] == "home"
    assert view["blocks"][2]["elements"][0]["action_id"] == REFRESH_ACTION
    assert lines(view) == [
        "# kai-chatops",
        "As of 2026-08-24 12:00 UTC · `/gpu help` lists the commands",
        "[Refresh]",
        "# Clusters",
        ":red_circle: *prod*: Degraded · 2 findings not Healthy",
        "      :red_circle: Config kai-config: Degraded — DependenciesFulfilled is False",
        "      :hourglass_flowing_sand: Deployment a/b: Progressing — 1/2 &lt;updated&gt;",
        ":red_circle: *lab*: Degraded · 1 finding not Healthy",
        "      :red_circle: Config kai-config: Degraded — DependenciesFulfilled is False",
        ":grey_question: *down*: could not check: connection refused",
        ":white_check_mark: *edge*: Healthy",
        "# Active alerts (4)",
        ":red_circle: `a1` prod · Config kai-config: deps — :rotating_light: firing for 1h30m",
        ":large_orange_circle: `a2` prod · Deployment x: down — :eyes: acknowledged by <@U0OPS>"
        " (fired 1m ago)",
        ":large_orange_circle: `a3` lab · Deployment y: down — :no_bell: silenced by someone:"
        " &lt;!here&gt; flaky (fired ? ago)",
        ":red_circle: `a4` lab · APIService v1: gone — :rotating_light: firing",
        "# Paused and suspended",
        ":double_vertical_bar: *ScaledJob annia/w* on prod — paused by hand (no kai-chatops "
        "record)",
        "# Recent changes",
        ":white_check_mark: 2026-08-24 11:55 UTC · <@U0OPS> pause ScaledJob annia/w: ok — drain",
        ":white_check_mark: 2026-08-24 11:51 UTC · kai-chatops resume HelmRelease a/b: done",
        ":warning: 2026-08-24 11:48 UTC · <@U0OPS> sync Application argocd/x: timed out",
        ":warning: 2026-08-24 11:45 UTC · <@U0OPS> sync Application argocd/y: failed",
    ]


def test_an_empty_tab_says_so_in_each_part() -> None:
    home = Home(now=NOW, clusters=(), changes_error="The change journal cannot be read: gone")

    assert lines(home_view(home, "/kai"))[3:] == [
        "# Clusters",
        "No cluster",
        "# Active alerts (0)",
        "No active alerts.",
        "# Paused and suspended",
        "Nothing paused or suspended.",
        "# Recent changes",
        ":warning: The change journal cannot be read: gone",
    ]


def test_someone_who_may_not_look_is_told_why_and_sees_nothing_else() -> None:
    view = not_allowed_view("You are not <in> access.viewers")

    assert view["type"] == "home"
    assert lines(view) == ["# kai-chatops", ":no_entry: You are not &lt;in&gt; access.viewers"]


def test_a_part_past_its_block_budget_shows_what_fits_and_counts_the_rest() -> None:
    alerts = tuple(
        AlertLine(f"a{n:03d}", "prod", True, "Config kai-config", "t" * 700, "firing", NOW)
        for n in range(100)
    )

    view = home_view(Home(now=NOW, clusters=(), alerts=alerts), "/kai")

    blocks = view["blocks"]
    start = next(i for i, b in enumerate(blocks) if "Active alerts (100)" in str(b))
    end = next(i for i in range(start + 1, len(blocks)) if blocks[i]["type"] == "header")
    part = blocks[start + 1 : end]
    sections = [b for b in part if b["type"] == "section"]
    shown = sum(len(b["text"]["text"].splitlines()) for b in sections)
    assert len(sections) == 15  # the alerts' share of Slack's 100 blocks
    assert part[-1]["elements"][0]["text"] == f"… {100 - shown} more not shown here"


def test_the_times_are_utc_whatever_the_hosts_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        text = lines(home_view(Home(now=NOW, clusters=()), "/kai"))[1]
    finally:
        monkeypatch.undo()
        time.tzset()

    assert text.startswith("As of 2026-08-24 12:00 UTC")


def test_a_tab_without_changes_says_none_were_made_through_the_bot() -> None:
    assert lines(home_view(Home(now=NOW, clusters=()), "/kai"))[-2:] == [
        "# Recent changes",
        "No changes made through kai-chatops yet.",
    ]
