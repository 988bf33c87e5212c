"""At what urgency the drain spends Slack's budget on each step (`bot.alerts.drain._priority`):
a new page before anything an open incident's thread owes, so that under a fleet-wide failure
every cluster is paged before the first one's diagnosis (one lane posts in the channel, about
one message a second); notices and reminders after what a person waits for."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.alerts.drain import _priority
from bot.alerts.model import (
    AlertKey,
    AlertState,
    EffectKind,
    Note,
    NoteKind,
    Observation,
    Owed,
    Severity,
)
from bot.alerts.notice_thread import NoticeThread
from bot.slack.budget import Priority

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
KEY = AlertKey("prod", "Config", "kai-config", "DependenciesFulfilled")
ALERT = AlertState(Observation(KEY, Severity.CRITICAL, "bad"), first_seen=T0, firing_since=T0)
NOTICE = NoticeThread("evict/1", "C1", 1, T0)
DIAGNOSIS = Owed("prod/x/1:1", EffectKind.REPLY, Note(NoteKind.DIAGNOSIS, T0))


@pytest.mark.parametrize(
    ("place", "owed", "priority"),
    [
        (ALERT, Owed("prod/x/1:0", EffectKind.ROOT), Priority.PAGE),
        (None, Owed("prod/x/1:0", EffectKind.ROOT), Priority.PAGE),  # the alert left meanwhile
        (ALERT, DIAGNOSIS, Priority.THREAD),
        (ALERT, Owed("prod/x/1:e", EffectKind.EDIT), Priority.THREAD),
        (NOTICE, Owed("evict/1:0", EffectKind.ROOT), Priority.BACKGROUND),
    ],
)
def test_a_new_page_goes_before_what_a_thread_owes_and_notices_after_both(
    place: AlertState | NoticeThread | None, owed: Owed, priority: Priority
) -> None:
    assert _priority(place, owed) is priority
    assert Priority.PAGE < Priority.THREAD < Priority.ANSWER < Priority.BACKGROUND
