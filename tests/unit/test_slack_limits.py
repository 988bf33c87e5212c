"""Slack's message limits: `check_message` flags what Slack would refuse, names where and why."""

from __future__ import annotations

from typing import Any

import pytest

from bot.slack.limits import (
    MAX_ACTIONS_ELEMENTS,
    MAX_BLOCKS,
    MAX_BUTTON_TEXT,
    MAX_BUTTON_VALUE,
    MAX_CONTEXT_ELEMENTS,
    MAX_HEADER_TEXT,
    MAX_MARKDOWN_BLOCK_TEXT,
    MAX_MESSAGE_TEXT,
    MAX_SECTION_FIELD_TEXT,
    MAX_SECTION_FIELDS,
    MAX_SECTION_TEXT,
    check_message,
)


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def button(action_id: str, label: str = "Confirm", value: str = "v") -> dict[str, Any]:
    return {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": label},
        "value": value,
    }


def actions(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "actions", "elements": list(elements)}


def test_the_documented_limits_have_slacks_values() -> None:
    assert (MAX_BLOCKS, MAX_SECTION_TEXT, MAX_MESSAGE_TEXT) == (50, 3000, 40_000)
    assert (MAX_SECTION_FIELDS, MAX_SECTION_FIELD_TEXT, MAX_HEADER_TEXT) == (10, 2000, 150)
    assert (MAX_ACTIONS_ELEMENTS, MAX_CONTEXT_ELEMENTS) == (25, 10)
    assert (MAX_BUTTON_TEXT, MAX_BUTTON_VALUE, MAX_MARKDOWN_BLOCK_TEXT) == (75, 2000, 12_000)


VALID = [
    pytest.param({"text": "hello"}, id="plain-text"),
    pytest.param({"text": "x" * MAX_MESSAGE_TEXT}, id="text-at-the-limit"),
    pytest.param(
        {"text": "fallback", "blocks": [section("x" * MAX_SECTION_TEXT)] * MAX_BLOCKS},
        id="50-blocks-of-3000-chars",
    ),
    pytest.param(
        {
            "text": "alert",
            "blocks": [
                {"type": "header", "text": {"type": "plain_text", "text": "KAI degraded"}},
                {"type": "divider"},
                section("*kai-config* DependenciesFulfilled False"),
                {"type": "context", "elements": [{"type": "mrkdwn", "text": "prod"}]},
                actions(button("ack", "Acknowledge"), button("silence_1h", "Silence 1h")),
            ],
        },
        id="an-alert-with-buttons",
    ),
    pytest.param({"delete_original": True}, id="response-url-delete"),
]


@pytest.mark.parametrize("payload", VALID)
def test_messages_within_the_limits_have_no_problems(payload: dict[str, Any]) -> None:
    assert check_message(payload) == []


INVALID = [
    pytest.param(
        {"text": "t", "blocks": [section("ok")] * 51},
        "blocks: 51 blocks (limit 50)",
        id="51-blocks",
    ),
    pytest.param(
        {"text": "t", "blocks": [section("ok"), section("x" * 3001)]},
        "blocks[1].text.text: 3001 characters (limit 3000)",
        id="3001-char-section",
    ),
    pytest.param(
        {"blocks": [section("ok")]},
        "text: missing (a message with blocks needs a fallback text)",
        id="blocks-without-fallback-text",
    ),
    pytest.param({}, "message: empty (a message needs text or blocks)", id="empty-message"),
    pytest.param(
        {"text": "x" * 40_001}, "text: 40001 characters (limit 40000)", id="text-too-long"
    ),
    pytest.param(
        {"text": "t", "blocks": [{"type": "section", "fields": [section("f")["text"]] * 11}]},
        "blocks[0].fields: 11 fields (limit 10)",
        id="11-fields",
    ),
    pytest.param(
        {"text": "t", "blocks": [{"type": "section", "fields": [section("f" * 2001)["text"]]}]},
        "blocks[0].fields[0].text: 2001 characters (limit 2000)",
        id="2001-char-field",
    ),
    pytest.param(
        {
            "text": "t",
            "blocks": [{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}],
        },
        "blocks[0].text.text: 151 characters (limit 150)",
        id="long-header",
    ),
    pytest.param(
        {"text": "t", "blocks": [{"type": "header", "text": {"type": "mrkdwn", "text": "*h*"}}]},
        "blocks[0].text.type: a header takes plain_text, got 'mrkdwn'",
        id="mrkdwn-header",
    ),
    pytest.param(
        {"text": "t", "blocks": [actions(*(button(f"b{i}") for i in range(26)))]},
        "blocks[0].elements: 26 elements (limit 25)",
        id="26-buttons",
    ),
    pytest.param(
        {"text": "t", "blocks": [actions(button("ok", "C" * 76))]},
        "blocks[0].elements[0].text.text: 76 characters (limit 75)",
        id="long-button-label",
    ),
    pytest.param(
        {"text": "t", "blocks": [actions(button("ok", value="v" * 2001))]},
        "blocks[0].elements[0].value: 2001 characters (limit 2000)",
        id="long-button-value",
    ),
    pytest.param(
        {"text": "t", "blocks": [actions(button("a" * 256))]},
        "blocks[0].elements[0].action_id: 256 characters (limit 255)",
        id="long-action-id",
    ),
    pytest.param(
        {"text": "t", "blocks": [actions(button("same"), button("same"))]},
        "blocks[0]: action_id 'same' used 2 times in one block",
        id="duplicate-action-id",
    ),
    pytest.param(
        {
            "text": "t",
            "blocks": [{**section("a"), "block_id": "b"}, {**section("c"), "block_id": "b"}],
        },
        "blocks: block_id 'b' used 2 times (must be unique)",
        id="duplicate-block-id",
    ),
    pytest.param(
        {"text": "t", "blocks": [{**section("a"), "block_id": "b" * 256}]},
        "blocks[0].block_id: 256 characters (limit 255)",
        id="long-block-id",
    ),
    pytest.param(
        {"text": "t", "blocks": [{"type": "context", "elements": [section("c")["text"]] * 11}]},
        "blocks[0].elements: 11 elements (limit 10)",
        id="11-context-elements",
    ),
    pytest.param(
        {"text": "t", "blocks": [{"type": "markdown", "text": "m" * 12_001}]},
        "blocks[0].text: 12001 characters (limit 12000)",
        id="long-markdown-block",
    ),
    pytest.param(
        {"text": "t", "blocks": [section("")]},
        "blocks[0].text.text: empty (needs at least 1 character)",
        id="empty-section-text",
    ),
    pytest.param(
        {"text": "t", "blocks": [{"type": "table"}]},
        "blocks[0].type: unknown block type 'table'",
        id="unknown-block-type",
    ),
    pytest.param(
        {"text": "t", "blocks": [actions({**button("ok"), "style": "green"})]},
        "blocks[0].elements[0].style: 'green' (must be 'primary' or 'danger')",
        id="unknown-button-style",
    ),
]


@pytest.mark.parametrize(("payload", "problem"), INVALID)
def test_each_violation_is_named_with_its_path_and_limit(
    payload: dict[str, Any], problem: str
) -> None:
    assert problem in check_message(payload)


def test_every_violation_in_a_message_is_reported_not_just_the_first() -> None:
    payload = {"blocks": [section("x" * 3001)] * 51}

    problems = check_message(payload)

    assert "blocks: 51 blocks (limit 50)" in problems
    assert "blocks[50].text.text: 3001 characters (limit 3000)" in problems
    assert any(p.startswith("text: missing") for p in problems)
    assert len(problems) == 1 + 51 + 1
