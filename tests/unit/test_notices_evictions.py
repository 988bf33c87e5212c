"""Eviction notices, pure: a KAI Evict Event read, whether it is news, what the state owes for
it, how it is rendered, and the notice threads surviving a save and load."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.alerts import document, outbox
from bot.alerts.model import ClusterAlerts, EffectKind
from bot.notices import evictions
from bot.notices.evictions import Eviction, Telling, Told
from bot.notices.render import QueueFigures, eviction_notice
from bot.workloads.queues import QueueRow

NOW = datetime(2026, 8, 7, 10, 0, tzinfo=UTC)
TELLING = Telling("C0TEAM", ("the notice", ()), ("evicted again", ()))


def kai_event(count: int = 1, at: datetime = NOW, **annotations: str) -> dict[str, Any]:
    """An Evict Event as KAI's scheduler records it (default: a reclaim of 4 pods)."""
    notes = annotations or {
        "evictor-action-type": "reclaim",
        "num-evicted-pods": "4",
        "evictor-pod-group-name": "pg-train",
        "evictor-pod-group-namespace": "team-a",
    }
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": "pg-sweep.1",
            "namespace": "team-b",
            "uid": "u-1",
            "annotations": notes,
        },
        "involvedObject": {
            "kind": "PodGroup",
            "apiVersion": "scheduling.run.ai/v2alpha2",
            "name": "pg-sweep",
            "namespace": "team-b",
        },
        "reason": "Evict",
        "type": "Normal",
        "message": "Pod team-b/sweep-0 was preempted by workload team-a/pg-train.",
        "count": count,
        "lastTimestamp": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def read(event: dict[str, Any]) -> Eviction:
    eviction = evictions.read_eviction(event)
    assert eviction is not None
    return eviction


def test_an_evict_event_is_read_with_every_annotation_kai_writes() -> None:
    eviction = read(kai_event())
    assert (eviction.namespace, eviction.group, eviction.action) == (
        "team-b",
        "pg-sweep",
        "reclaim",
    )
    assert (eviction.pods, eviction.evictor, eviction.evictor_namespace) == (
        4,
        "pg-train",
        "team-a",
    )
    assert (eviction.count, eviction.at) == (1, NOW)


@pytest.mark.parametrize(
    "change",
    [{"reason": "Unschedulable"}, {"metadata": {"name": "no-uid"}}],
    ids=["another reason", "no uid"],
)
def test_an_event_that_is_not_an_eviction_with_a_uid_is_not_read(change: dict[str, Any]) -> None:
    assert evictions.read_eviction({**kai_event(), **change}) is None


def test_an_event_without_annotations_is_read_with_what_it_has() -> None:
    eviction = read(kai_event(**{"unrelated": "x"}))
    assert not eviction.has_annotations
    assert (eviction.pods, eviction.evictor, eviction.action) == (None, "", "")


def state_told(count: int = 1) -> ClusterAlerts:
    return evictions.record(ClusterAlerts("sim"), read(kai_event(count)), NOW, TELLING)


@pytest.mark.parametrize(
    ("state", "event", "now", "told"),
    [
        (ClusterAlerts("sim"), kai_event(), NOW + timedelta(minutes=59), Told.NEW),
        (ClusterAlerts("sim"), kai_event(), NOW + timedelta(minutes=61), Told.OLD),
        (state_told(), kai_event(), NOW, Told.KNOWN),
        (state_told(), kai_event(count=3), NOW, Told.AGAIN),
        (ClusterAlerts("sim", forgotten=NOW), kai_event(), NOW, Told.KNOWN),
    ],
    ids=["fresh", "an hour old when first seen", "same count", "count rose", "forgotten"],
)
def test_whether_an_eviction_is_news(
    state: ClusterAlerts, event: dict[str, Any], now: datetime, told: Told
) -> None:
    assert evictions.judge(state, read(event), now) is told


def test_a_new_eviction_owes_its_notice_in_its_channel_once() -> None:
    state = state_told()
    [thread] = state.threads
    assert (thread.key, thread.channel, thread.count) == ("sim/evict/u-1", "C0TEAM", 1)
    [root] = thread.outbox
    assert (root.effect_id, root.kind, root.text) == (
        "sim/evict/u-1:0",
        EffectKind.ROOT,
        "the notice",
    )
    again = evictions.record(state, read(kai_event()), NOW, TELLING)
    assert again == state, "recorded twice (another replica, a conflict redone): owed once"


def test_a_count_rise_owes_one_reply_in_the_thread() -> None:
    state = evictions.record(state_told(), read(kai_event(count=2)), NOW, TELLING)
    [thread] = state.threads
    assert [o.effect_id for o in thread.outbox] == ["sim/evict/u-1:0", "sim/evict/u-1:1"]
    assert thread.outbox[1].kind is EffectKind.NOTICE and thread.count == 2
    same = evictions.record(state, read(kai_event(count=2)), NOW, TELLING)
    assert same == state


def test_quiet_threads_are_forgotten_and_not_told_again() -> None:
    state = outbox.adopted(state_told(), "sim/evict/u-1", "sim/evict/u-1:0", "C0TEAM", "1.000001")
    later = NOW + evictions.FORGET_AFTER + timedelta(minutes=1)
    forgotten = outbox.forget_threads(state, later - evictions.FORGET_AFTER, keep=10)
    assert forgotten.threads == () and forgotten.forgotten == NOW
    assert evictions.judge(forgotten, read(kai_event()), NOW) is Told.KNOWN


def test_a_thread_still_owing_is_never_forgotten() -> None:
    state = state_told()
    assert outbox.forget_threads(state, NOW + timedelta(days=1), keep=0) == state


def test_notice_threads_survive_a_save_and_load_and_old_documents_still_load() -> None:
    state = outbox.adopted(state_told(), "sim/evict/u-1", "sim/evict/u-1:0", "C0TEAM", "1.000001")
    state = evictions.record(state, read(kai_event(count=2)), NOW, TELLING)
    assert document.load_cluster("sim", document.dump_cluster(state)) == state
    old = document.dump_cluster(ClusterAlerts("sim"))
    assert "threads" not in old and document.load_cluster("sim", old) == ClusterAlerts("sim")


ROW = QueueRow("team-b", "", 0, "", False, True, 8.0, 16.0, 1.0, 12.0, 20.0)


def test_the_notice_says_every_fact_and_why_the_rules_allowed_it() -> None:
    queues = QueueFigures("team-b", ROW, "team-a", None)
    text = eviction_notice("prod", read(kai_event()), queues)["text"]
    assert "KAI reclaimed team-b/pg-sweep on prod" in text
    assert "Queue: team-b: 12 GPUs allocated now, quota 8" in text
    assert "Pods evicted: 4" in text
    assert "Taken by: team-a/pg-train, queue team-a (not found)" in text
    assert "Queue team-b was using more GPUs than its quota." in text


def test_a_notice_without_annotations_guesses_nothing() -> None:
    text = eviction_notice("prod", read(kai_event(**{"x": "y"})), QueueFigures("team-b", ROW))[
        "text"
    ]
    assert text.startswith("team-b/pg-sweep was evicted by KAI on prod")
    assert not any(word in text for word in ("Pods evicted", "Taken by", "Why"))


def test_an_event_first_seen_after_it_repeated_says_every_eviction_in_its_notice() -> None:
    text = eviction_notice("prod", read(kai_event(count=3)), QueueFigures("team-b", ROW))["text"]
    assert "This Event counts 3 evictions." in text
    once = eviction_notice("prod", read(kai_event()), QueueFigures("team-b", ROW))["text"]
    assert "counts" not in once
