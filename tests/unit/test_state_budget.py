"""A state document's byte budget (`bot.alerts.budget`): what gives way and in which order, what
never does, the notice said once, and the caps that assumed 1 MiB per cluster checked against it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from state_documents import CLUSTER, T0, incident, state, thread

from bot.alerts import budget, document, outbox
from bot.notices import evictions


def test_a_document_within_its_budget_is_saved_as_it_is() -> None:
    whole = state(threads=10, closed=2, open_=1)
    fitted = budget.fit(whole, T0)
    assert fitted.state == whole and not fitted.gave_way
    assert fitted.text == document.dump_cluster(whole)


def test_notice_threads_give_way_oldest_first_then_closed_incidents() -> None:
    whole = state(threads=40, closed=10, open_=2)
    size = len(document.dump_cluster(whole))
    threads_bytes = sum(map(document.thread_bytes, whole.threads))

    some = budget.fit(whole, T0, budget=size - 5_000)
    assert some.threads == tuple(t.key for t in whole.threads[: len(some.threads)])
    assert 0 < len(some.threads) < 40 and some.closed == ()
    assert len(some.text) <= size - 5_000

    more = budget.fit(whole, T0, budget=size - threads_bytes - 10_000)
    assert len(more.threads) == 40
    assert more.closed == tuple(a.incident for a in whole.recent[: len(more.closed)])
    assert more.state.recent == whole.recent[len(more.closed) :]
    # what is forgotten is not told again
    assert more.state.forgotten == whole.threads[-1].last


def test_threads_owing_nothing_give_way_before_those_still_owing() -> None:
    owing = thread(0, owing=True)  # the oldest, but it still owes a reply
    whole = replace(state(), threads=(owing, *state(threads=12).threads[1:]))
    fitted = budget.fit(whole, T0, budget=len(document.dump_cluster(whole)) - 1_000)
    assert owing.key not in fitted.threads
    assert fitted.threads[0] == whole.threads[1].key


def test_what_an_open_incident_owes_never_gives_way_and_is_saved_over_the_budget() -> None:
    """A new critical page is never stopped: its root and diagnosis stay, whatever the size."""
    whole = state(threads=3, closed=1, open_=4)
    fitted = budget.fit(whole, T0, budget=20_000)
    assert fitted.state.alerts == whole.alerts
    assert fitted.state.threads == () and fitted.state.recent == ()
    assert len(fitted.text) > 20_000  # over: saved all the same (the API server takes 1 MiB)
    notice = fitted.state.notices[-1]
    assert notice.effect_id.startswith(f"{CLUSTER}:budget:")
    assert "reached its budget of 20,000 bytes" in notice.text
    assert "3 oldest eviction notice threads and the 1 oldest closed incident" in notice.text
    nothing_to_shed = replace(whole, threads=(), recent=())
    assert budget.fit(nothing_to_shed, T0, budget=20_000).state == nothing_to_shed


def test_reaching_the_budget_is_said_once_a_day() -> None:
    whole = state(threads=50)
    tight = len(document.dump_cluster(whole)) - 3_000
    first = budget.fit(whole, T0, budget=tight)
    assert len(first.state.notices) == 1 and first.state.budget_told == T0
    again = budget.fit(replace(first.state, threads=whole.threads), T0 + timedelta(hours=23),
                       budget=tight)  # fmt: skip
    assert again.gave_way and len(again.state.notices) == 1
    delivered = replace(again.state, notices=(), threads=whole.threads)
    later = budget.fit(delivered, T0 + timedelta(days=1), budget=tight)
    assert len(later.state.notices) == 1
    assert document.load_cluster(CLUSTER, later.text).budget_told == T0 + timedelta(days=1)


def test_the_caps_that_assumed_a_mebibyte_per_cluster_fit_the_budget() -> None:
    """THREADS_KEPT threads as the notices leave them, RECENT_KEPT closed incidents at their
    biggest, 25 open incidents each owing its root, a full diagnosis and what changed, and the
    memory of moves at its caps (`bot.alerts.seen`): within BUDGET."""
    worst = state(threads=evictions.THREADS_KEPT, closed=outbox.RECENT_KEPT, open_=25, memory=True)
    assert len(document.dump_cluster(worst)) <= budget.BUDGET
    assert budget.fit(worst, T0).state == worst
    # A diagnosis is cut to EVIDENCE_KEPT characters, what changed to CHANGES_KEPT: thirty
    # incidents owing both fit a document alone.
    assert 30 * document.incident_bytes(incident(0)) <= budget.BUDGET
    # Threads of many replies would not all fit: the budget sheds the oldest, nothing else.
    chatty = state(threads=evictions.THREADS_KEPT, replies=outbox.DELIVERED_KEPT, open_=5)
    fitted = budget.fit(chatty, T0)
    assert len(fitted.text) <= budget.BUDGET and fitted.state.alerts == chatty.alerts


def test_the_figure_of_300_threads_10_closed_and_5_open_incidents() -> None:
    figure = len(document.dump_cluster(state(threads=300, closed=10, open_=5)))
    assert 200_000 < figure < 300_000, figure  # docs/alerts.md "Persistence" quotes it
