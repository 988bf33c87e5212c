"""After a pause is written, a failed read-back still reports (and lets the caller record) it.

A narrow unit test with a fake of our own gateway: the first read works, the patch works, and
every read after it fails, which the simulator cannot be told to do at that exact moment.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from bot.core import errors
from bot.core.models import RawObject
from bot.keda.pause import KedaTarget
from bot.keda.usecase import AckWait, pause
from bot.kube.kinds import ResourceRef

SCALED_JOB = {
    "apiVersion": "keda.sh/v1alpha1",
    "kind": "ScaledJob",
    "metadata": {"name": "annia-worker", "namespace": "annia", "resourceVersion": "7"},
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
}


class ReadsFailAfterTheWrite:
    cluster = "sim"

    def __init__(self) -> None:
        self.written: dict[str, Any] | None = None

    async def get_object(
        self, ref: ResourceRef, name: str, namespace: str | None = None
    ) -> RawObject:
        if self.written is not None:
            raise errors.KubeUnavailable("cluster sim: cannot reach the API server")
        return copy.deepcopy(SCALED_JOB)

    async def patch_object(
        self, ref: ResourceRef, name: str, namespace: str | None, body: Any, **_: Any
    ) -> RawObject:
        self.written = copy.deepcopy(SCALED_JOB)
        self.written["metadata"]["annotations"] = {
            k: v for k, v in body["metadata"]["annotations"].items() if v is not None
        }
        return self.written


async def test_a_pause_whose_read_back_fails_is_still_reported_as_written() -> None:
    kube = ReadsFailAfterTheWrite()
    target = KedaTarget("ScaledJob", "annia", "annia-worker", "sim")
    outcome = await pause(
        kube,  # type: ignore[arg-type]
        target,
        user="U0OPERATOR",
        reason="drain",
        duration=None,
        now=datetime(2026, 11, 29, tzinfo=UTC),
        wait=AckWait(timeout=1.0, interval=0.1),
    )
    assert outcome.written and outcome.took_effect
    assert not outcome.acknowledged
