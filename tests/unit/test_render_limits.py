"""Replies always fit Slack's limits, and say so when something was cut."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.models import Finding, Health, HealthReport
from bot.health import render as health_render
from bot.slack import blocks as render
from bot.slack import limits as slack_limits

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def report_with(findings: list[Finding]) -> HealthReport:
    return HealthReport(cluster="prod", findings=tuple(findings), checked_at=NOW)


def test_a_degraded_report_leads_with_the_verdict_and_keeps_the_message_verbatim() -> None:
    detail = "\nKAI-prometheus is missing prometheus operator"
    finding = Finding("Config kai-config", Health.DEGRADED, "dependencies missing", detail)
    message = health_render.health_message(report_with([finding]))
    assert message["blocks"][0]["text"]["text"] == "KAI health on prod: Degraded"
    assert "KAI-prometheus is missing prometheus operator" in message["blocks"][2]["text"]["text"]
    assert message["text"].startswith("KAI health on prod: Degraded")
    assert slack_limits.check_message(message) == []


def test_hundreds_of_problems_are_cut_to_fifty_blocks_with_a_note() -> None:
    findings = [
        Finding(f"Deployment kai/d{i}", Health.DEGRADED, "not available") for i in range(300)
    ]
    message = health_render.health_message(report_with(findings))
    assert len(message["blocks"]) == slack_limits.MAX_BLOCKS
    assert "more not shown" in message["blocks"][-1]["elements"][0]["text"]
    assert slack_limits.check_message(message) == []


def test_a_huge_operator_message_is_truncated_inside_its_section() -> None:
    detail = "\n".join(f"Binder: Deployment [binder-{i}] is not available" for i in range(500))
    finding = Finding("Config kai-config", Health.PROGRESSING, "rolling out", detail)
    message = health_render.health_message(report_with([finding]))
    section_text = message["blocks"][2]["text"]["text"]
    assert len(section_text) <= slack_limits.MAX_SECTION_TEXT
    assert "(truncated)" in section_text
    assert section_text.count("```") % 2 == 0
    assert slack_limits.check_message(message) == []


def test_fallback_text_over_forty_thousand_characters_is_truncated() -> None:
    message = render.fit_message({"text": "x" * 50_000, "blocks": []})
    assert len(message["text"]) == slack_limits.MAX_MESSAGE_TEXT
    assert message["text"].endswith("(truncated)")


def test_operator_text_cannot_inject_slack_markup() -> None:
    finding = Finding("APIService x", Health.DEGRADED, "<!channel> & <https://evil|click>")
    text = health_render.health_message(report_with([finding]))["blocks"][2]["text"]["text"]
    assert "<!channel>" not in text
    assert "&lt;!channel&gt; &amp;" in text


def test_a_long_context_line_is_truncated_too() -> None:
    message = render.fit_message({"text": "x", "blocks": [render.context("reason " * 1000)]})
    assert len(message["blocks"][0]["elements"][0]["text"]) == slack_limits.MAX_TEXT_OBJECT
    assert slack_limits.check_message(message) == []
