"""When the drain looks at an incident's channel again (bot/alerts/looks.py): once now and once
when a late call can no longer land, unless a copy is known to be on its way."""

from __future__ import annotations

from bot.alerts.looks import Looks, ts_order


def test_a_look_that_agreed_is_not_repeated_until_the_last_one() -> None:
    looks = Looks()
    looks.watch([("inc", "C1", "100.000001")], now=0.0, until=15.0)
    assert looks.due(0.0) == ["inc"]
    looks.looked("inc", True, 1.0)
    assert looks.due(5.0) == [] and looks.due(14.9) == []
    assert looks.due(15.0) == ["inc"]
    looks.looked("inc", True, 15.0)
    assert not looks


def test_a_look_that_repaired_or_could_not_read_is_due_again_at_once() -> None:
    looks = Looks()
    looks.watch([("inc", "C1", "")], now=0.0, until=15.0)
    looks.looked("inc", None, 1.0)  # Slack could not be read
    assert looks.due(1.0) == ["inc"]
    looks.looked("inc", False, 2.0)  # a copy was deleted
    assert looks.due(2.0) == ["inc"]


def test_an_eager_look_is_due_at_every_drain_until_a_late_copy_cannot_land() -> None:
    looks = Looks()
    looks.watch([("inc", "C1", "")], now=0.0, until=15.0, eager=True)
    for moment in (1.0, 5.0, 14.0):
        assert looks.due(moment) == ["inc"]
        looks.looked("inc", True, moment)
    looks.looked("inc", True, 15.0)
    assert not looks


def test_an_incident_that_had_a_copy_on_its_way_is_looked_at_eagerly_when_it_closes() -> None:
    looks = Looks()
    looks.watch([("inc", "C1", "")], now=0.0, until=15.0, eager=True)
    looks.looked("inc", True, 20.0)
    assert not looks
    looks.watch([("inc", "C1", "")], now=100.0, until=115.0)  # its closing watches it again
    looks.looked("inc", True, 101.0)
    assert looks.due(102.0) == ["inc"]


def test_one_read_of_a_channel_starts_at_the_oldest_anchor_due_there() -> None:
    looks = Looks()
    looks.watch([("a", "C1", "200.000001"), ("b", "C1", "100.000002")], now=0.0, until=9.0)
    looks.watch([("c", "C2", "50.000003")], now=0.0, until=9.0)
    assert looks.oldest_anchor("C1", 0.0) == "100.000002"
    assert looks.oldest_anchor("C3", 0.0) is None
    assert ts_order("") < ts_order("1.000001") < ts_order("1.000010")
