"""A few seeds of the randomised delivery soak (`tests/alert_soak.py`; `make soak` runs more):
under random Slack, API-server, Lease and process faults, nothing is lost and nothing doubled."""

from __future__ import annotations

from pathlib import Path

import pytest
from alert_soak import soak_seed

SEEDS = [1, 2, 4]  # odd: one replica; even: two sharing a Lease


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed {s}" for s in SEEDS])
async def test_random_faults_lose_and_double_nothing(seed: int, tmp_path: Path) -> None:
    figures = await soak_seed(seed, tmp_path, incidents=4)
    print(figures.summary())
    assert figures.incidents == 4
    assert figures.diagnoses == 4  # every page's first reply, delivered under the faults too
    assert sum(figures.faults.values()) > 0
    assert (figures.lost, figures.duplicated, figures.problems) == (0, 0, [])
