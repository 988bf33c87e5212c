"""A state document's byte budget (`bot.alerts.budget`): what gives way and in which order, what
never does, the notice said once, and the caps that assumed 1 MiB per cluster checked against it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from bot.alerts import budget, document, outbox
from bot.alerts.model import (
    AlertKey,
    AlertState,
    ClusterAlerts,
    EffectKind,
    Note,
    NoteKind,
    NoticeThread,
    Observation,
    Owed,
    Severity,
)
from bot.alerts.render_evidence import EVIDENCE_KEPT
from bot.notices import evictions

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
CLUSTER = "prod-eu-west-1"
TS = "1772359200.000100"


def thread(i: int, replies: int = 1, owing: bool = False) -> NoticeThread:
    """An eviction notice thread as the notices leave it: its root and `replies` delivered."""
    key = f"{CLUSTER}/evict/{i:08d}-7d2c-4b7e-9a51-1f0c3e8b{i:04d}"
    delivered = {f"{key}:{n}": f"1772359200.{n:06d}" for n in range(1, replies + 1)}
    owed = (Owed(f"{key}:{replies + 1}", EffectKind.NOTICE, text="x" * 400),) if owing else ()
    return NoticeThread(
        key, "C0ALERTS01", replies + 1, T0 + timedelta(seconds=i), outbox=owed,
        owed_count=replies + 1, root_ts=TS, root_anchor=TS, delivered=delivered,
    )  # fmt: skip


def incident(n: int, *, closed: bool = False, diagnosis: bool = True) -> AlertState:
    """An incident at its biggest: DELIVERED_KEPT replies remembered, five command IDs, and
    (open, with `diagnosis`) its root and a diagnosis of EVIDENCE_KEPT characters still owed."""
    key = AlertKey(CLUSTER, "Deployment", f"kai-scheduler/scheduler-shard-{n}", "Available")
    seen = Observation(
        key, Severity.CRITICAL, "No available replica of the scheduler of shard",
        reason="MinimumReplicasUnavailable",
        message="Deployment does not have minimum availability. " * 3,
        check_first="kubectl -n kai-scheduler describe deployment scheduler-shard", since=T0,
    )  # fmt: skip
    alert = AlertState(
        seen, first_seen=T0 + timedelta(minutes=n), firing_since=T0 + timedelta(minutes=n),
        root_channel="C0ALERTS01", root_ts=TS, root_anchor=TS, acked_by="U0ONCALL01",
        commands=tuple(f"command-{i:032d}" for i in range(5)),
    )  # fmt: skip
    replies = {f"{alert.incident}:{k}": f"1772359400.{k:06d}" for k in range(outbox.DELIVERED_KEPT)}
    alert = replace(alert, delivered=replies, owed_count=outbox.DELIVERED_KEPT + 1)
    if closed:
        return replace(alert, resolved_at=T0 + timedelta(hours=2))
    if diagnosis:
        note = Note(NoteKind.DIAGNOSIS, T0)
        half = EVIDENCE_KEPT // 2
        blocks = ({"type": "section", "text": {"type": "mrkdwn", "text": "y" * (half - 100)}},)
        owed = (
            Owed(f"{alert.incident}:0", EffectKind.ROOT, attempt="a" * 32, anchor=TS),
            Owed(f"{alert.incident}:1", EffectKind.REPLY, note, text="x" * half, blocks=blocks),
        )
        alert = replace(alert, root_ts="", outbox=owed)
    return alert


def state(threads: int = 0, closed: int = 0, open_: int = 0, **kw: object) -> ClusterAlerts:
    alerts = [incident(n) for n in range(open_)]
    return ClusterAlerts(
        CLUSTER,
        alerts={a.key: a for a in alerts},
        threads=tuple(thread(i, **kw) for i in range(threads)),  # type: ignore[arg-type]
        recent=tuple(incident(100 + n, closed=True) for n in range(closed)),
    )


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
    biggest, and 25 open incidents each owing its root and a full diagnosis: within BUDGET."""
    worst = state(threads=evictions.THREADS_KEPT, closed=outbox.RECENT_KEPT, open_=25)
    assert len(document.dump_cluster(worst)) <= budget.BUDGET
    assert budget.fit(worst, T0).state == worst
    # A diagnosis is cut to EVIDENCE_KEPT characters: forty of them fit a document alone.
    assert 40 * document.incident_bytes(incident(0)) <= budget.BUDGET
    # Threads of many replies would not all fit: the budget sheds the oldest, nothing else.
    chatty = state(threads=evictions.THREADS_KEPT, replies=outbox.DELIVERED_KEPT, open_=5)
    fitted = budget.fit(chatty, T0)
    assert len(fitted.text) <= budget.BUDGET and fitted.state.alerts == chatty.alerts


def test_the_figure_of_300_threads_10_closed_and_5_open_incidents() -> None:
    figure = len(document.dump_cluster(state(threads=300, closed=10, open_=5)))
    assert 200_000 < figure < 300_000, figure  # docs/alerts.md "Persistence" quotes it
