"""How long the outbox has owed Slack (`bot.alerts.backlog`): what `/metrics` shows as
`kai_chatops_outbox_oldest_owed_age_seconds`, the age the PrometheusRule pages on. An effect is
stamped by the save that first stores it, kept through reloads and attempts."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.alerts import backlog, outbox
from bot.alerts.document import dump_cluster, load_cluster
from bot.alerts.model import (
    AlertKey,
    AlertState,
    ClusterAlerts,
    EffectKind,
    Observation,
    Owed,
    Severity,
)
from bot.alerts.notice_thread import NoticeThread

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
KEY = AlertKey("prod", "Config", "kai-config", "DependenciesFulfilled")
ALERT = AlertState(Observation(KEY, Severity.CRITICAL, "bad"), first_seen=T0, firing_since=T0)


def owing_root() -> ClusterAlerts:
    return ClusterAlerts("prod", {KEY: outbox.owe(ALERT, EffectKind.ROOT)})


def test_an_outbox_owing_nothing_is_zero_seconds_old() -> None:
    assert backlog.oldest_age(ClusterAlerts("prod", {KEY: ALERT}), T0) == timedelta(0)


def test_an_effect_not_saved_yet_was_owed_just_now() -> None:
    assert backlog.oldest_age(owing_root(), T0 + timedelta(hours=1)) == timedelta(0)


def test_the_age_counts_from_the_save_that_first_stored_the_effect() -> None:
    saved = backlog.stamped(owing_root(), T0)
    later = ClusterAlerts("prod", {KEY: outbox.owe(saved.alerts[KEY], EffectKind.EDIT)})
    saved_again = backlog.stamped(later, T0 + timedelta(minutes=5))

    assert backlog.oldest_age(saved_again, T0 + timedelta(minutes=10)) == timedelta(minutes=10)
    [edit] = [o for o in saved_again.alerts[KEY].outbox if o.kind is EffectKind.EDIT]
    assert edit.owed_at == T0 + timedelta(minutes=5)


def notice(minutes: int) -> Owed:
    return Owed("n1", EffectKind.NOTICE, text="x", owed_at=T0 + timedelta(minutes=minutes))


def thread(minutes: int) -> NoticeThread:
    owed = Owed("evict/1:0", EffectKind.ROOT, owed_at=T0 + timedelta(minutes=minutes))
    return NoticeThread("evict/1", "C1", 1, T0, outbox=(owed,))


@pytest.mark.parametrize(
    ("in_notice", "in_thread", "in_root"),
    [(0, 2, 3), (2, 0, 3), (2, 3, 0)],
    ids=["a notice", "a thread", "an incident"],
)
def test_the_oldest_of_notices_incidents_and_threads_is_the_age(
    in_notice: int, in_thread: int, in_root: int
) -> None:
    state = replace(
        backlog.stamped(owing_root(), T0 + timedelta(minutes=in_root)),
        notices=(notice(in_notice),),
        threads=(thread(in_thread),),
    )

    assert backlog.oldest_age(state, T0 + timedelta(minutes=7)) == timedelta(minutes=7)


def test_when_it_was_owed_is_kept_in_the_document_and_through_an_attempt() -> None:
    saved = load_cluster("prod", dump_cluster(backlog.stamped(owing_root(), T0)))
    [incident] = outbox.incidents(saved)
    tried = outbox.attempted(saved, incident.incident, f"{incident.incident}:0", "a1", "r1", T0)
    assert tried is not None

    assert backlog.oldest_age(tried, T0 + timedelta(seconds=90)) == timedelta(seconds=90)
