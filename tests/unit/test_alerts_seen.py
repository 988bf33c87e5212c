"""What the checks remember of moves (bot/alerts/seen.py): a Kustomization's applied revision,
kai-config's UID and generation, the APIService; first sight silent, caps kept, kept in the
state document."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from state_documents import memory_at_its_caps

from bot.alerts import budget, document, seen
from bot.alerts.model import ClusterAlerts
from bot.alerts.seen import APISERVICE, CONFIG, KUSTOMIZATION, Move, Seen, Sighting

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
KS = frozenset({KUSTOMIZATION})


def ks(name: str, revision: str) -> Sighting:
    return Sighting(KUSTOMIZATION, f"flux-system/{name}", revision)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_the_first_read_of_a_kind_remembers_it_without_a_move() -> None:
    memory = seen.remember(Seen(), [ks("apps", "main@sha1:aaa")], KS, T0)
    assert memory.moves == ()
    assert memory.values == {"Kustomization flux-system/apps": "main@sha1:aaa"}
    assert memory.since == {KUSTOMIZATION: T0}


def test_a_new_revision_applied_is_a_move_and_an_unchanged_one_is_nothing() -> None:
    first = seen.remember(Seen(), [ks("apps", "main@sha1:aaa")], KS, T0)
    moved = seen.remember(first, [ks("apps", "main@sha1:bbb")], KS, at(5))
    assert moved.moves == (
        Move(at(5), KUSTOMIZATION, "flux-system/apps", "main@sha1:aaa", "main@sha1:bbb"),
    )
    assert seen.move_words(moved.moves[0]) == "applied main@sha1:bbb (was main@sha1:aaa)"
    assert seen.remember(moved, [ks("apps", "main@sha1:bbb")], KS, at(6)) is moved  # at rest


def test_a_kustomization_created_or_deleted_after_the_first_read_is_a_move() -> None:
    first = seen.remember(Seen(), [ks("apps", "r1")], KS, T0)
    created = seen.remember(first, [ks("apps", "r1"), ks("infra", "r7")], KS, at(1))
    deleted = seen.remember(created, [ks("infra", "r7")], KS, at(2))
    words = [seen.move_words(m) for m in deleted.moves]
    assert words == ["applied r7", "deleted"]
    assert list(deleted.values) == ["Kustomization flux-system/infra"]


def test_a_kind_not_read_this_time_is_neither_deleted_nor_moved() -> None:
    first = seen.remember(Seen(), [ks("apps", "r1")], KS, T0)
    assert seen.remember(first, [], {CONFIG}, at(1)).values == {
        **first.values
    }  # Kustomizations could not be listed: not "deleted"


def test_kai_config_changed_deleted_and_created_again_is_said_by_uid_and_generation() -> None:
    config = frozenset({CONFIG})
    memory = seen.remember(Seen(), [Sighting(CONFIG, "kai-config", "uid-1 3")], config, T0)
    memory = seen.remember(memory, [Sighting(CONFIG, "kai-config", "uid-1 4")], config, at(1))
    memory = seen.remember(memory, [], config, at(2))
    memory = seen.remember(memory, [Sighting(CONFIG, "kai-config", "uid-2 1")], config, at(3))
    assert [seen.move_words(m) for m in memory.moves] == [
        "changed: generation 3 → 4",
        "deleted (UID uid-1)",
        "created (UID uid-2, generation 1)",
    ]
    recreated = Move(T0, CONFIG, "kai-config", "uid-1 4", "uid-2 1")
    assert "deleted and created again (UID uid-1 → uid-2" in seen.move_words(recreated)


def test_the_apiservice_is_followed_by_its_available_condition_and_service() -> None:
    obj = {
        "metadata": {"name": "v1beta1.external.metrics.k8s.io"},
        "spec": {"service": {"namespace": "keda", "name": "keda-operator-metrics-apiserver"}},
        "status": {"conditions": [
            {"type": "Available", "status": "False", "reason": "FailedDiscoveryCheck"}
        ]},
    }  # fmt: skip
    [sighting] = seen.apiservice_sighting(obj)
    assert sighting == Sighting(
        APISERVICE,
        "v1beta1.external.metrics.k8s.io",
        "Available False (FailedDiscoveryCheck), service keda/keda-operator-metrics-apiserver",
    )


def test_moves_older_than_a_week_or_beyond_the_caps_are_forgotten_newest_kept() -> None:
    memory = seen.remember(Seen(), [ks("apps", "r0")], KS, T0)
    for n in range(1, seen.MOVES_KEPT + 11):
        memory = seen.remember(memory, [ks("apps", f"r{n}")], KS, at(n))
    assert len(memory.moves) == seen.MOVES_KEPT
    assert memory.moves[-1].after == f"r{seen.MOVES_KEPT + 10}"
    later = seen.remember(memory, [ks("apps", "last")], KS, T0 + seen.KEPT_FOR + timedelta(days=1))
    assert [m.after for m in later.moves] == ["last"]


def test_the_memory_at_its_caps_stays_within_its_share_of_the_state_budget() -> None:
    memory = memory_at_its_caps()
    size = len(document.dump_cluster(ClusterAlerts("prod", seen=memory)))
    # About 32 KB at the very worst (bot/alerts/seen.py): 4 % of a document's budget, whatever
    # the caps are set to.
    assert size <= 33_000 and size <= budget.BUDGET * 0.04, size


def test_the_memory_is_kept_in_the_state_document_and_read_back() -> None:
    memory = seen.remember(Seen(), [ks("apps", "r1")], KS, T0)
    memory = seen.remember(memory, [ks("apps", "r2")], KS, at(1))
    state = ClusterAlerts("prod", seen=memory)
    assert document.load_cluster("prod", document.dump_cluster(state)) == state
    assert '"seen"' not in document.dump_cluster(ClusterAlerts("prod"))  # nothing when empty
