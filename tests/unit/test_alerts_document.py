"""The alert state document: sparse states read back the same, damage is named, old ones migrate.

What a damaged document's reason says is what the channel notice tells the on-call engineer, so
each reason is pinned. A schema-1 document (before the outbox) owes a root only when it fired and
its root was never posted. The document itself is what an operator reads in the ConfigMap.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.alerts import outbox
from bot.alerts.document import DamagedState, dump_cluster, load_cluster
from bot.alerts.model import (
    FLEET,
    AlertKey,
    AlertState,
    ClusterAlerts,
    EffectKind,
    Note,
    NoteKind,
    Observation,
    Owed,
    Severity,
)

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
KEY = AlertKey("prod", "Config", "kai-config", "DependenciesFulfilled")
BARE = Observation(KEY, Severity.WARNING, "")
FLEET_KEY = AlertKey(FLEET, "Config", "kai-config", "DependenciesFulfilled")
PENDING = AlertState(BARE, first_seen=T0)
CLEARING = AlertState(
    Observation(
        AlertKey("prod", "Cluster", "prod", "Reachable"),
        Severity.CRITICAL,
        "Cannot check cluster prod",
        immediate=True,
    ),
    first_seen=T0,
    firing_since=T0,
    clear_since=T0 + timedelta(seconds=30),
    root_channel="C0ALERTS",
    root_ts="1.1",
    outbox=(
        Owed("prod/x/1:1", EffectKind.REPLY, Note(NoteKind.REMINDER, T0)),
        Owed("prod/x/1:2", EffectKind.REPLY, Note(NoteKind.UNSILENCED, T0, "U1", still_bad=False)),
    ),
    owed_count=3,
)


@pytest.mark.parametrize(
    "state",
    [
        ClusterAlerts("prod", {KEY: PENDING}),
        ClusterAlerts("prod", {CLEARING.key: CLEARING}),
        ClusterAlerts("prod", closing=(replace(CLEARING, resolved_at=T0),)),
        ClusterAlerts(
            "prod", {KEY: replace(PENDING, firing_since=T0, fleet="3f9a2c", paged=("prod",))}
        ),
        ClusterAlerts(
            FLEET,
            {
                FLEET_KEY: AlertState(
                    Observation(FLEET_KEY, Severity.CRITICAL, "down"),
                    first_seen=T0,
                    firing_since=T0,
                    clusters=("a", "b", "c"),
                    recovered=("b",),
                    paged=("a",),
                    outbox=(Owed("x:1", EffectKind.REPLY, Note(NoteKind.JOINED, T0, reason="c")),),
                )
            },
        ),
    ],
    ids=[
        "pending, every optional field empty",
        "immediate, clear since, notes",
        "closing",
        "a member of a fleet incident",
        "a fleet incident: its clusters, recovered, paged",
    ],
)
def test_a_sparse_state_reads_back_exactly(state: ClusterAlerts) -> None:
    assert load_cluster(state.cluster, dump_cluster(state)) == state


def test_a_note_stored_without_still_bad_reads_as_still_bad() -> None:
    body = json.loads(dump_cluster(ClusterAlerts("prod", {CLEARING.key: CLEARING})))
    for owed in body["alerts"][0]["outbox"]:
        del owed["note"]["still_bad"]
    [alert] = load_cluster("prod", json.dumps(body)).alerts.values()
    assert [o.note.still_bad for o in alert.outbox if o.note] == [True, True]


def test_the_document_an_operator_reads_names_its_schema_and_cluster_in_a_stable_order() -> None:
    text = dump_cluster(ClusterAlerts("prod", {CLEARING.key: CLEARING}, failures=1))
    body = json.loads(text)
    assert (body["schema"], body["cluster"], body["failures"]) == (5, "prod", 1)
    assert text == json.dumps(body, sort_keys=True)


def test_no_document_is_the_empty_state_of_the_cluster_asked_for() -> None:
    assert load_cluster("staging", "") == ClusterAlerts("staging")


def _with(path: list[Any], value: Any) -> str:
    body = json.loads(dump_cluster(ClusterAlerts("prod", {CLEARING.key: CLEARING})))
    inner = body
    for part in path[:-1]:
        inner = inner[part]
    if value is None:
        del inner[path[-1]]
    else:
        inner[path[-1]] = value
    return json.dumps(body)


REASONS = {
    "not ours": ('{"alerts": []}', "not an alert state document of schema 5"),
    "not JSON": ('{"schema": 2, "alerts": [', "malformed alert state document: JSONDecodeError: "),
    "alerts is a number": ('{"schema": 2, "alerts": 7}', "expected a list, found int"),
    "failures below zero": ('{"schema": 2, "failures": -1}', "failures is not a count: -1"),
    "a reply without its note": (
        _with(["alerts", 0, "outbox", 0, "note"], None),
        "reply 'prod/x/1:1' without its note",
    ),
    "a bad time": (
        _with(["alerts", 0, "first_seen"], "yesterday"),
        "first_seen is not a time: 'yesterday'",
    ),
    "an observation without its key": (
        _with(["alerts", 0, "observation", "key"], None),
        "malformed alert state document: KeyError: 'key'",
    ),
}


@pytest.mark.parametrize(("text", "reason"), list(REASONS.values()), ids=list(REASONS))
def test_a_damaged_document_says_what_is_wrong_with_it(text: str, reason: str) -> None:
    with pytest.raises(DamagedState) as damaged:
        load_cluster("prod", text)
    assert str(damaged.value).startswith(reason)


def _schema_1(**alert: Any) -> str:
    old = json.loads(dump_cluster(ClusterAlerts("prod", {CLEARING.key: CLEARING})))
    old["schema"] = 1
    old["alerts"][0] |= {"outbox": None, "owed_count": None, **alert}
    return json.dumps(old)


MIGRATIONS = {
    "fired, root being posted: owed and looked for first": (
        {"root_status": "posting", "root_ts": ""},
        [("0", "legacy")],
    ),
    "fired, root never posted: owed fresh": ({"root_status": "none", "root_ts": ""}, [("0", "")]),
    "fired, root posted: nothing owed": ({"root_status": "posted", "root_ts": "1.1"}, []),
    "still pending: nothing owed": (
        {"root_status": "none", "root_ts": "", "firing_since": None},
        [],
    ),
}


@pytest.mark.parametrize(("fields", "owed"), list(MIGRATIONS.values()), ids=list(MIGRATIONS))
def test_a_schema_1_alert_owes_its_root_only_when_it_fired_and_the_root_never_landed(
    fields: dict[str, Any], owed: list[tuple[str, str]]
) -> None:
    [alert] = load_cluster("prod", _schema_1(**fields)).alerts.values()
    assert [(o.effect_id.rsplit(":", 1)[1], o.attempt) for o in alert.outbox] == owed
    assert all(o.kind is EffectKind.ROOT for o in alert.outbox)
    reply = outbox.owe(alert, EffectKind.REPLY, Note(NoteKind.REMINDER, T0)).outbox[-1]
    assert reply.effect_id == f"{alert.incident}:1"  # numbered after the root


def test_a_schema_4_document_reads_with_no_alert_grouped() -> None:
    body = json.loads(dump_cluster(ClusterAlerts("prod", {CLEARING.key: CLEARING})))
    body["schema"] = 4
    for name in ("fleet", "clusters", "recovered", "paged"):
        del body["alerts"][0][name]
    [alert] = load_cluster("prod", json.dumps(body)).alerts.values()
    assert (alert.fleet, alert.clusters, alert.recovered, alert.paged) == ("", (), (), ())
