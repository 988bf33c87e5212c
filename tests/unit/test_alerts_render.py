"""What an alert looks like in Slack: the root, its thread replies, and `/kai alerts`."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.alerts import render as render_alerts
from bot.alerts import render_evidence, render_replies
from bot.alerts.model import (
    AlertKey,
    AlertState,
    ClusterAlerts,
    Note,
    NoteKind,
    Observation,
    Severity,
)
from bot.slack import blocks

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
KEY = AlertKey("prod", "Config", "kai-config", "DependenciesFulfilled")
FIRING = AlertState(
    observation=Observation(
        KEY,
        Severity.CRITICAL,
        "DependenciesFulfilled is False at generation 3",
        "dependencies_missing",
        "\nKAI-prometheus is missing prometheus operator <crds>",
        "Install it, or turn prometheus off in kai-config's spec.",
        since=T0 - timedelta(minutes=2),
    ),
    first_seen=T0,
    firing_since=T0 + timedelta(minutes=1),
    root_channel="C0ALERTS",
    root_ts="1.000100",
)


def all_text(message: dict[str, Any]) -> str:
    parts = [message["text"]]
    for block in message["blocks"]:
        if "text" in block:
            parts.append(block["text"]["text"])
        parts += [
            e.get("text", "") for e in block.get("elements", []) if block["type"] == "context"
        ]
    return "\n".join(parts)


def labels(message: dict[str, Any]) -> list[str]:
    actions = [b for b in message["blocks"] if b["type"] == "actions"]
    return [e["text"]["text"] for a in actions for e in a["elements"]]


def test_the_root_says_what_where_why_since_when_and_what_to_check_first() -> None:
    text = all_text(render_alerts.root_message(FIRING, command="/kai"))
    for expected in (
        "CRITICAL",
        "*Cluster:* prod",
        "Config kai-config",
        "DependenciesFulfilled",
        "*Reason:* dependencies_missing",
        "KAI-prometheus is missing prometheus operator &lt;crds&gt;",
        "*Since:* 2026-03-01 09:58:00 UTC",
        "*Check first:* Install it",
        f"`/kai ack {KEY.alert_id}`",
    ):
        assert expected in text


def test_the_root_offers_the_four_alert_buttons_carrying_the_alert() -> None:
    message = render_alerts.root_message(FIRING, command="/kai")
    assert labels(message) == ["Acknowledge", "Silence 1h", "Silence 4h", "Run health check"]
    values = {
        e["value"] for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]
    }
    assert values == {f"prod:{KEY.alert_id}"}


def test_the_resolved_root_says_for_how_long_it_fired_and_has_no_buttons() -> None:
    resolved = replace(FIRING, resolved_at=T0 + timedelta(minutes=29))
    message = render_alerts.root_message(resolved, command="/kai")
    assert labels(message) == []
    assert message["text"].startswith("[RESOLVED (critical)] prod:")
    assert "after firing for 28m" in all_text(message)


def test_the_root_shows_who_acknowledged_and_who_silenced_until_when() -> None:
    owned = replace(
        FIRING,
        acked_by="U1",
        acked_at=T0 + timedelta(minutes=3),
        silenced_by="U2",
        silenced_until=T0 + timedelta(hours=2),
        silence_reason="node drain",
    )
    text = all_text(render_alerts.root_message(owned, command="/kai"))
    assert "acknowledged by <@U1> at 2026-03-01 10:03:00 UTC" in text
    assert "silenced by <@U2> until 2026-03-01 12:00:00 UTC: node drain" in text


def test_thread_replies_name_who_when_and_why() -> None:
    silenced = Note(NoteKind.SILENCED, T0, "U2", "node drain", T0 + timedelta(hours=4))
    assert render_replies.reply_message(FIRING, silenced)["text"] == (
        ":no_bell: Silenced by <@U2> at 2026-03-01 10:00:00 UTC for 4h, until "
        "2026-03-01 14:00:00 UTC. Reason: node drain"
    )
    expired = Note(NoteKind.SILENCE_EXPIRED, T0, "U2")
    assert "still holds: firing again" in render_replies.reply_message(FIRING, expired)["text"]
    resolved = Note(NoteKind.RESOLVED, T0 + timedelta(minutes=31))
    assert "It fired for 30m" in render_replies.reply_message(FIRING, resolved)["text"]


def test_durations_after_a_clock_step_back_are_never_negative() -> None:
    stepped_back = FIRING.firing_since - timedelta(hours=2)  # type: ignore[operator]
    resolved = replace(FIRING, resolved_at=stepped_back)
    assert "after firing for 0s" in all_text(render_alerts.root_message(resolved, command="/kai"))
    note = Note(NoteKind.RESOLVED, stepped_back)
    assert "It fired for 0s" in render_replies.reply_message(FIRING, note)["text"]
    reminder = render_replies.reply_message(FIRING, Note(NoteKind.REMINDER, stepped_back))
    assert "(0s)" in reminder["text"]
    assert (
        "-"
        not in all_text(render_alerts.root_message(resolved, command="/kai")).split("firing for")[
            1
        ][:3]
    )


def test_the_listing_shows_ids_states_silences_and_failing_checks() -> None:
    pending_key = AlertKey("prod", "APIService", "v1beta1.external.metrics.k8s.io", "Missing")
    pending = AlertState(Observation(pending_key, Severity.CRITICAL, "missing"), first_seen=T0)
    silenced = replace(FIRING, silenced_by="U2", silenced_until=T0 + timedelta(hours=1))
    states = [
        ClusterAlerts("prod", {KEY: silenced, pending_key: pending}),
        ClusterAlerts("staging", failures=2, last_error="connection refused"),
    ]
    message = render_alerts.alerts_listing(states, hold=timedelta(seconds=60))
    text = message["text"]
    assert text.startswith("Alerts: 1 active")
    assert f"`{KEY.alert_id}`" in text
    assert "silenced by <@U2> until 2026-03-01 11:00:00 UTC" in text
    assert "pending: fires at 2026-03-01 10:01:00 UTC" in text
    assert "the last 2 check(s) of staging failed: connection refused" in text


def test_an_empty_listing_says_so_per_cluster() -> None:
    message = render_alerts.alerts_listing([ClusterAlerts("prod")], hold=timedelta(seconds=60))
    assert "No active alerts or silences on prod." in message["text"]


def test_a_long_diagnosis_is_kept_within_its_cap_and_says_what_was_left_out() -> None:
    log = "```" + "\n".join(f"line {i} " + "x" * 150 for i in range(20)) + "```"
    sections = [blocks.section(f"*Component {i}*\n{log}") for i in range(45)]
    message = blocks.fit_message(
        {"text": "Diagnosis of kai on prod\n" + log * 10, "blocks": sections}
    )

    text, kept = render_evidence.kept_evidence(message)

    assert len(json.dumps({"text": text, "blocks": kept})) <= render_evidence.EVIDENCE_KEPT
    assert text.startswith("Diagnosis of kai on prod")
    assert kept[0]["text"]["text"].startswith("*Component 0*")
    assert kept[0]["text"]["text"].count("```") % 2 == 0  # a cut code block is closed
    assert "more part(s) of the diagnosis not kept" in kept[-1]["elements"][0]["text"]


def test_a_short_diagnosis_is_kept_whole() -> None:
    message = blocks.fit_message({"text": "Diagnosis", "blocks": [blocks.section("all fine")]})
    assert render_evidence.kept_evidence(message) == ("Diagnosis", message["blocks"])


def test_a_secret_in_the_conditions_message_is_redacted_in_the_root_and_its_fallback() -> None:
    seen = replace(
        FIRING.observation,
        message="dial postgres://kai:hunter2@db failed\nretrying with password=hunter2",
    )
    root = render_alerts.root_message(replace(FIRING, observation=seen), [], command="/kai")
    shown = all_text(root)
    assert "hunter2" not in shown
    assert "[redacted]" in root["text"] and "[redacted]" in json.dumps(root["blocks"])


def test_the_answer_to_the_asker_names_the_alert_and_where_it_is_noted() -> None:
    done = render_alerts.command_done(FIRING, "Silenced", duration=timedelta(hours=2))
    assert done["text"] == (
        "Silenced alert "
        f"{FIRING.alert_id} for 2h (prod: DependenciesFulfilled is False at generation 3); "
        "noted in its thread."
    )
    quiet = replace(FIRING, root_ts="")
    assert render_alerts.command_done(quiet, "Acknowledged")["text"].endswith("generation 3).")


def test_a_click_says_where_its_root_is_or_nothing() -> None:
    body = {"container": {"channel_id": "C1", "message_ts": "1.2"}, "channel": {"id": "C9"}}
    assert render_alerts.clicked_root(body) == ("C1", "1.2")
    assert render_alerts.clicked_root({"channel": {"id": "C9"}}) == ("C9", "")
    assert render_alerts.clicked_root({}) == ("", "")
