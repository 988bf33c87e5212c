"""PagerDuty's Events API v2 as we speak it (`bot.integrations.pagerduty.events`), pure: the
event bodies, what each answer means, the link to the thread, the environment and the
`pagerduty` section of the configuration, each problem on one clear line."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from bot.alerts.model import AlertKey, AlertState, Observation, PageAction, Severity
from bot.config.settings import parse_settings
from bot.core import errors
from bot.integrations.pagerduty import events
from bot.integrations.pagerduty.events import Outcome, PagerDutyEnv

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
KEY = "R0123456789abcdef0123456789abcde"
ALERT = AlertState(
    Observation(
        AlertKey("prod", "Config", "kai-config", "DependenciesFulfilled"),
        Severity.CRITICAL,
        "KAI dependencies are not fulfilled",
        reason="DependenciesMissing",
        message="prometheus missing; token=abcdefabcdef0123456789",
    ),
    first_seen=T0,
    firing_since=T0,
    root_channel="C0ALERTS",
    root_ts="1767261600.000100",
)
LINK = "https://team.slack.com/archives/C0ALERTS/p1767261600000100"


def test_a_trigger_carries_the_incident_id_its_title_and_the_link_to_its_thread() -> None:
    body = events.event(ALERT, PageAction.TRIGGER, KEY, LINK)
    assert body["routing_key"] == KEY and body["event_action"] == "trigger"
    assert body["dedup_key"] == ALERT.incident
    payload = body["payload"]
    assert payload["summary"] == "KAI dependencies are not fulfilled"
    assert (payload["source"], payload["severity"]) == ("prod", "critical")
    assert body["links"] == [{"href": LINK, "text": "Slack thread"}]
    assert "abcdefabcdef0123456789" not in str(body)  # the cluster's text is redacted


@pytest.mark.parametrize("action", [PageAction.ACKNOWLEDGE, PageAction.RESOLVE])
def test_acknowledge_and_resolve_name_only_the_incident(action: PageAction) -> None:
    body = events.event(ALERT, action, KEY, LINK)
    assert body == {"routing_key": KEY, "event_action": action.value, "dedup_key": ALERT.incident}


def test_a_summary_longer_than_pagerduty_takes_is_cut_to_1024_characters() -> None:
    long = replace(ALERT, observation=replace(ALERT.observation, title="x" * 5000))
    assert len(events.event(long, PageAction.TRIGGER, KEY, LINK)["payload"]["summary"]) == 1024


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (202, Outcome.ACCEPTED),
        (400, Outcome.REFUSED),
        (429, Outcome.RETRY),
        (500, Outcome.RETRY),
        (503, Outcome.RETRY),
        (403, Outcome.RETRY),
        (None, Outcome.RETRY),
    ],
    ids=["202 taken", "400 invalid", "429", "500", "503", "403 wrong key", "no answer"],
)
def test_each_answer_means_what_pagerdutys_retry_table_says(
    status: int | None, outcome: Outcome
) -> None:
    assert events.outcome(status) is outcome


@pytest.mark.parametrize(
    ("ts", "link"),
    [
        ("1767261600.000100", "https://team.slack.com/archives/C0ALERTS/p1767261600000100"),
        ("", "https://team.slack.com/archives/C0ALERTS"),
    ],
    ids=["the thread", "the channel while the root has no ts"],
)
def test_the_link_has_slacks_permalink_shape(ts: str, link: str) -> None:
    assert events.thread_link("https://team.slack.com/", "C0ALERTS", ts) == link


def test_the_environment_names_the_integration_and_the_api() -> None:
    env = PagerDutyEnv.from_environ({"PAGERDUTY_ROUTING_KEY": KEY})
    assert env.enqueue_url == "https://events.pagerduty.com/v2/enqueue"
    local = PagerDutyEnv.from_environ(
        {"PAGERDUTY_ROUTING_KEY": KEY, "PAGERDUTY_API_URL": "http://127.0.0.1:9/"}
    )
    assert local.enqueue_url == "http://127.0.0.1:9/v2/enqueue"


@pytest.mark.parametrize(
    ("env", "problems"),
    [
        (
            {},
            [
                "PAGERDUTY_ROUTING_KEY: missing; pagerduty is configured, so it needs the "
                "integration key of an Events API v2 integration (32 characters)"
            ],
        ),
        (
            {"PAGERDUTY_ROUTING_KEY": "short", "PAGERDUTY_API_URL": "events.pagerduty.com"},
            [
                "PAGERDUTY_ROUTING_KEY: 5 characters (expected the 32-character integration "
                "key of an Events API v2 integration)",
                "PAGERDUTY_API_URL: 'events.pagerduty.com' is not an http(s) URL (expected a "
                "base URL like https://events.pagerduty.com)",
            ],
        ),
    ],
    ids=["no key", "a short key and a URL without a scheme"],
)
def test_a_bad_environment_is_refused_with_one_line_per_problem(
    env: dict[str, str], problems: list[str]
) -> None:
    with pytest.raises(errors.ConfigError) as refused:
        PagerDutyEnv.from_environ(env)
    assert refused.value.problems == problems


BASE = {"clusters": [{"name": "prod"}], "slack": {"alert_channel": "C0ALERTS"}}


@pytest.mark.parametrize(
    ("section", "severities"),
    [(None, None), ({}, ("critical",)), ({"severities": ["warning", "critical"]}, None)],
    ids=["absent: no paging", "empty: critical", "both severities"],
)
def test_the_pagerduty_section(section: object, severities: tuple[str, ...] | None) -> None:
    settings = parse_settings({**BASE, "pagerduty": section})
    if section is None:
        assert settings.pagerduty is None
    else:
        assert settings.pagerduty is not None
        assert settings.pagerduty.severities == (severities or ("warning", "critical"))


@pytest.mark.parametrize(
    ("section", "problems"),
    [
        (
            {"severities": []},
            ["pagerduty.severities: [] pages nothing (expected one or more of critical, warning)"],
        ),
        (
            {"severities": ["page"]},
            ["pagerduty.severities[0]: 'page' is not a severity (expected critical or warning)"],
        ),
        (
            {"routing_key": KEY, "api_url": "http://x"},
            [
                "pagerduty.routing_key: comes only from the environment "
                "(PAGERDUTY_ROUTING_KEY); delete this key",
                "pagerduty.api_url: comes only from the environment (PAGERDUTY_API_URL); "
                "delete this key",
            ],
        ),
        (
            {"severity": ["critical"]},
            ["pagerduty: unknown key 'severity' (known keys: severities)"],
        ),
    ],
    ids=["no severity", "an unknown severity", "the key and URL in the file", "a misspelt key"],
)
def test_a_bad_pagerduty_section_gets_one_clear_line_per_problem(
    section: object, problems: list[str]
) -> None:
    with pytest.raises(errors.ConfigError) as refused:
        parse_settings({**BASE, "pagerduty": section})
    assert refused.value.problems == problems
