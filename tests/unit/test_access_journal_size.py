"""The change journal's ConfigMap stays within its size: the oldest entries go first."""

from __future__ import annotations

import json

from bot.access.journal import MAX_BYTES, fit_entries


def test_entries_that_would_outgrow_the_configmap_drop_the_oldest_first() -> None:
    entries = [{"n": n, "reason": "x" * 40_000} for n in range(50)]
    kept = fit_entries(entries, MAX_BYTES)
    assert len(json.dumps(kept, sort_keys=True).encode()) <= MAX_BYTES
    assert kept == entries[-len(kept) :] and len(kept) < 50  # the newest, in order


def test_entries_that_fit_are_all_kept() -> None:
    entries = [{"n": n, "reason": "drain"} for n in range(50)]
    assert fit_entries(entries, MAX_BYTES) == entries


def test_the_newest_entry_is_kept_even_alone_over_the_budget() -> None:
    assert fit_entries([{"a": 1}, {"reason": "y" * 100}], 50) == [{"reason": "y" * 100}]
