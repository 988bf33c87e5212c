"""The simulated KEDA operator follows the pause annotations the way KEDA reads them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from testbed.sim.keda_controller import paused_status_patch, wants_paused
from testbed.stack import running_stack


def scaled(kind: str, annotations: dict[str, str], paused: str | None = None) -> dict[str, Any]:
    conditions = [] if paused is None else [{"type": "Paused", "status": paused}]
    return {
        "kind": kind,
        "metadata": {"annotations": annotations},
        "status": {"conditions": conditions},
    }


@pytest.mark.parametrize(
    ("kind", "annotations", "expected"),
    [
        ("ScaledJob", {}, False),
        ("ScaledJob", {"autoscaling.keda.sh/paused": "true"}, True),
        ("ScaledJob", {"autoscaling.keda.sh/paused": "yes"}, True),
        ("ScaledJob", {"autoscaling.keda.sh/paused": "false"}, False),
        ("ScaledJob", {"autoscaling.keda.sh/paused-replicas": "0"}, False),
        ("ScaledObject", {"autoscaling.keda.sh/paused-replicas": "0"}, True),
        ("ScaledObject", {"autoscaling.keda.sh/paused-scale-in": "true"}, True),
        ("ScaledObject", {"autoscaling.keda.sh/paused-scale-out": "false"}, False),
        ("ScaledJob", {"autoscaling.keda.sh/paused-scale-in": "true"}, False),
    ],
    ids=[
        "none",
        "true",
        "unparsable",
        "false",
        "job-ignores-replicas",
        "object-replicas",
        "keda-one-direction-pause-sets-paused",
        "one-direction-false",
        "job-ignores-one-direction",
    ],
)
def test_what_keda_pauses(kind: str, annotations: dict[str, str], expected: bool) -> None:
    assert wants_paused(scaled(kind, annotations)) is expected


def test_no_write_when_the_condition_already_matches() -> None:
    obj = scaled("ScaledJob", {"autoscaling.keda.sh/paused": "true"}, paused="True")
    assert paused_status_patch(obj, now=None) is None


async def test_with_the_keda_controller_a_pause_is_acknowledged(tmp_path: Path) -> None:
    async with running_stack(tmp_path, keda_controller=True) as stack:
        ask = await stack.command("pause annia/annia-worker for 1h drain")
        assert ask.message is not None
        done = await stack.click("Confirm", ask.message)
    assert "acknowledged" in done.text.lower()
    assert "not acknowledged" not in done.text.lower()


async def test_a_pause_and_a_resume_at_one_moment_of_a_still_clock_each_get_their_event(
    tmp_path: Path,
) -> None:
    """KEDA names its Events `<object>.<hex nanoseconds>`: on a test's clock that stands still a
    pause and its resume would share a name, and the second create failed and stopped the
    simulated controllers for good (the next pause was never acknowledged)."""
    moment = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    still = {"clock": lambda: moment, "sim_clock": lambda: moment}
    async with running_stack(tmp_path, keda_controller=True, **still) as stack:
        for text in ("pause annia/annia-worker drain", "resume annia/annia-worker"):
            ask = await stack.command(text)
            assert ask.message is not None
            done = await stack.click("Confirm", ask.message)
            assert "not acknowledged" not in done.text.lower(), done.text
        events = stack.sim.store.list_objects(stack.sim.store.resolve("v1", "Event"), "annia")
        reasons = [
            e["reason"] for e in events["items"] if e["involvedObject"]["kind"] == "ScaledJob"
        ]
        assert sorted(reasons) == ["ScaledJobPaused", "ScaledJobUnpaused"]
