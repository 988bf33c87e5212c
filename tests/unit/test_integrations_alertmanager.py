"""Alertmanager's notifications as incidents: the payload read or refused, the group's step
(root, joined, resolved, retries that tell nothing), the component its labels name, the silence
it asks Alertmanager for."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from alertmanager_posts import alert, payload

from bot.alerts.model import ALERTMANAGER, ClusterAlerts, EffectKind, NoteKind, Phase, Severity
from bot.config import settings as config
from bot.core import errors
from bot.diagnostics.subjects import KaiSubject, KedaSubject, subject_for_labels
from bot.integrations import alertmanager_api, alertmanager_groups
from bot.integrations.alertmanager_webhook import BadPayload, parse_notification
from bot.service.deps import SlackEnv

NOW = datetime(2026, 12, 6, 10, 5, tzinfo=UTC)
EMPTY = ClusterAlerts(ALERTMANAGER)


def receive(state: ClusterAlerts, body: dict[str, Any], *, diagnosable: bool = False):  # type: ignore[no-untyped-def]
    notification = parse_notification(json.dumps(body).encode())
    return alertmanager_groups.receive(state, notification, NOW, "C0ALERTS", diagnosable)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"[1, 2", "the body is not JSON"),
        (b"[]", "the body is not a JSON object"),
        (json.dumps({**payload(alert()), "version": "3"}).encode(), 'payload version "3"'),
        (json.dumps({**payload(alert()), "groupKey": ""}).encode(), "groupKey is missing"),
        (json.dumps({**payload(alert()), "status": "ok"}).encode(), "status must be"),
        (json.dumps(payload({**alert(), "startsAt": "soon"})).encode(), "startsAt is not a time"),
        (json.dumps(payload({**alert(), "labels": {"a": 1}})).encode(), "labels is not a map"),
    ],
    ids=["not-json", "not-object", "version", "group-key", "status", "starts-at", "labels"],
)
def test_a_payload_that_is_not_version_4_of_alertmanagers_is_refused_in_one_line(
    body: bytes, says: str
) -> None:
    with pytest.raises(BadPayload, match=says):
        parse_notification(body)


def test_the_first_firing_owes_one_root_with_the_groups_words_and_severity() -> None:
    stepped = receive(EMPTY, payload(alert(pod="a", summary="scheduler down")))
    [incident] = stepped.state.alerts.values()
    assert [o.kind for o in stepped.effects] == [EffectKind.ROOT]
    assert incident.phase is Phase.FIRING and incident.root_channel == "C0ALERTS"
    assert incident.observation.severity is Severity.CRITICAL
    assert incident.observation.message == (
        "KaiSchedulerDown (pod=a, severity=critical): scheduler down"
    )
    assert "alertname=KaiSchedulerDown" in incident.labels


def test_a_group_naming_a_component_owes_its_diagnosis_then_what_changed_after_the_root() -> None:
    stepped = receive(EMPTY, payload(alert()), diagnosable=True)
    kinds = [(o.kind, o.note.kind if o.note else None) for o in stepped.effects]
    assert kinds == [
        (EffectKind.ROOT, None),
        (EffectKind.REPLY, NoteKind.DIAGNOSIS),
        (EffectKind.REPLY, NoteKind.CHANGES),
    ]


def test_a_retry_tells_nothing_a_joining_and_a_resolving_alert_one_reply_each() -> None:
    a, b = alert(pod="a"), alert(pod="b")
    state = receive(EMPTY, payload(a)).state
    assert receive(state, payload(a)).state == state
    joined = receive(state, payload(a, b))
    notes = [o.note.kind for o in joined.effects if o.note]
    assert notes == [NoteKind.JOINED] and joined.effects[-1].kind is EffectKind.EDIT
    assert receive(joined.state, payload(a, b)).effects == ()
    left = receive(joined.state, payload({**a, "status": "resolved"}, b))
    [note] = [o.note for o in left.effects if o.note]
    assert note.kind is NoteKind.RECOVERED and "pod=a" in note.reason


def test_resolved_closes_the_incident_and_a_late_firing_copy_opens_nothing() -> None:
    firing = alert(pod="a")
    state = receive(EMPTY, payload(firing)).state
    closed = receive(state, payload({**firing, "status": "resolved"}))
    assert closed.state.alerts == {} and len(closed.state.closing) == 1
    assert [o.note.kind for o in closed.effects if o.note] == [NoteKind.RESOLVED]
    assert receive(closed.state, payload({**firing, "status": "resolved"})).effects == ()
    assert receive(closed.state, payload(firing)).effects == ()
    refired = receive(closed.state, payload(alert(pod="a", starts="2026-12-06T11:00:00Z")))
    assert [o.kind for o in refired.effects] == [EffectKind.ROOT]


@pytest.mark.parametrize(
    ("labels", "subject"),
    [
        ({"namespace": "kai-scheduler"}, KaiSubject("kai-scheduler")),
        ({"job": "kai-operator"}, KaiSubject("kai-scheduler")),
        ({"namespace": "keda"}, KedaSubject("v1beta1.external.metrics.k8s.io")),
        (
            {"service": "keda-operator-metrics-apiserver"},
            KedaSubject("v1beta1.external.metrics.k8s.io"),
        ),
        ({"namespace": "gpu-jobs", "job": "node-exporter"}, None),
    ],
    ids=["kai-namespace", "kai-job", "keda-namespace", "keda-service", "neither"],
)
def test_labels_naming_kai_or_keda_pick_the_diagnosis(
    labels: dict[str, str], subject: object
) -> None:
    found = subject_for_labels(
        labels, kai_namespace="kai-scheduler", apiservice="v1beta1.external.metrics.k8s.io"
    )
    assert found == subject


def test_the_silence_matches_the_common_labels_by_equality_created_by_the_slack_user() -> None:
    [incident] = receive(EMPTY, payload(alert(node="gpu-7"))).state.alerts.values()
    body = alertmanager_api.silence_body(
        incident, "U0OPERATOR", NOW + timedelta(hours=1), "node drain", NOW
    )
    assert body["matchers"] == [
        {"name": n, "value": v, "isRegex": False, "isEqual": True}
        for n, v in [("alertname", "KaiSchedulerDown"), ("node", "gpu-7"), ("severity", "critical")]
    ]
    assert body["createdBy"] == "U0OPERATOR"
    assert body["comment"] == f"node drain (kai-chatops alert {incident.alert_id})"
    assert (body["startsAt"], body["endsAt"]) == (NOW.isoformat(), "2026-12-06T11:05:00+00:00")
    assert "id" not in body


def test_alertmanager_configured_without_its_token_is_refused_at_start() -> None:
    raw = {
        "clusters": [{"name": "prod"}],
        "slack": {"alert_channel": "C0123"},
        "alertmanager": {"url": "http://am:9093"},
    }
    settings = config.parse_settings(raw)
    slack = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}
    with pytest.raises(errors.ConfigError) as refused:
        SlackEnv.from_environ(slack).check_integrations(settings)
    assert refused.value.problems == [
        "ALERTMANAGER_TOKEN: missing; alertmanager is configured, and its webhook "
        "(POST /alertmanager) needs the bearer token Alertmanager presents"
    ]
    SlackEnv.from_environ({**slack, "ALERTMANAGER_TOKEN": "t"}).check_integrations(settings)


def test_an_alert_left_out_of_a_truncated_notification_is_not_told_resolved() -> None:
    a, b, c = alert(pod="a"), alert(pod="b"), alert(pod="c")
    state = receive(EMPTY, payload(a, b)).state
    cut = {**payload(a, c), "truncatedAlerts": 1}  # b left out by max_alerts, still firing
    stepped = receive(state, cut)
    assert [o.note.kind for o in stepped.effects if o.note] == [NoteKind.JOINED]
    [incident] = stepped.state.alerts.values()
    assert len(incident.members) == 3
    told = receive(
        stepped.state, {**payload(a, c, {**b, "status": "resolved"}), "truncatedAlerts": 1}
    )
    [note] = [o.note for o in told.effects if o.note]
    assert note.kind is NoteKind.RECOVERED and "pod=b" in note.reason
