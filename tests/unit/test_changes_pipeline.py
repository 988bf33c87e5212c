"""The change pipeline's order, with a kind and a service that only note what is asked of them:
who is checked before anything is read, the Confirm used up before anything is written, the
record after the write; and each kind's words for the approval request. In-process fakes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.access.audit import Change
from bot.access.once import MemoryOnce
from bot.changes import registry
from bot.changes.kinds import Ask, Described, Done, Run
from bot.changes.pipeline import ChangePipeline
from bot.config import settings as config
from bot.core import errors
from bot.gitops.target import GitopsTarget, Request
from bot.keda.change import PauseParams
from bot.keda.pause import KedaTarget
from bot.keda.usecase import AckWait
from bot.kube.kinds import SCALED_JOB
from bot.slack import blocks

NOW = datetime(2026, 8, 24, 8, 0, tzinfo=UTC)
SETTINGS = config.parse_settings(
    {"clusters": [{"name": "prod"}], "slack": {"alert_channel": "C0ALERTS"}}
)
JOB = KedaTarget("ScaledJob", "annia", "w", "prod")


@dataclass
class Gate:
    steps: list[str]
    operators: tuple[str, ...] = ("U0OP",)

    async def require_operator(self, user_id: str, action: str) -> None:
        self.steps.append(f"operator {user_id}: {action}")
        if user_id not in self.operators:
            raise errors.NotAllowed(f"You are not allowed to {action}")

    async def person(self, user_id: str) -> None:
        self.steps.append(f"person {user_id}")


@dataclass
class Slack:
    steps: list[str]

    async def post(self, channel: str, message: dict[str, Any], thread_ts: str = "") -> str:
        self.steps.append(f"post {channel}")
        return "1.0"


@dataclass
class Journal:
    steps: list[str]

    async def add(self, change: Change) -> None:
        self.steps.append(f"journal {change.action} {change.outcome}")


@dataclass
class Parts:
    """The service, as far as the pipeline asks it."""

    steps: list[str] = field(default_factory=list)
    settings: config.Settings = SETTINGS
    confirm_key: bytes = b"k" * 32
    once: MemoryOnce = field(default_factory=MemoryOnce)
    approvals: None = None

    def __post_init__(self) -> None:
        self.gate, self.slack, self.journal = (
            Gate(self.steps),
            Slack(self.steps),
            Journal(self.steps),
        )

    def clock(self) -> datetime:
        return NOW

    def kube_for(self, cluster: str | None) -> str:
        self.steps.append(f"kube {cluster}")
        return f"gateway of {cluster}"


class Pausing:
    """A pause kind that notes each call instead of touching a cluster."""

    action, params, announced = "pause", PauseParams, True

    def __init__(self, steps: list[str], fails: bool = False) -> None:
        self.steps, self.fails = steps, fails

    def describe(self, params: PauseParams) -> Described:
        return Described("pause", SCALED_JOB, "annia", "w", "prod", reason=params.reason)

    async def prepare(self, params: PauseParams, run: Run) -> Ask:
        self.steps.append(f"prepare as {run.user} on {run.kube}")
        return Ask("Pause ScaledJob annia/w on prod?", ["Annotations to set:"])

    async def apply(self, params: PauseParams, run: Run) -> Done:
        self.steps.append(f"apply as {run.user} on {run.kube}")
        if self.fails:
            raise errors.KubeError("the API server said no")
        change = Change(run.user, "pause", "ScaledJob annia/w on prod", "ok", NOW, params.reason)
        return Done(blocks.text_message("paused"), change, "paused it")


def sealed_value(message: dict[str, Any]) -> str:
    """The value of the Confirm button (Cancel carries the same)."""
    (value,) = [
        e["value"]
        for b in message["blocks"]
        for e in b.get("elements", [])
        if e.get("action_id") == blocks.CONFIRM_ACTION
    ]
    return str(value)


@dataclass(frozen=True)
class Asker:
    user_id: str = "U0OP"
    channel_id: str = "C0DEMO"
    respond: None = None


async def test_the_asker_is_checked_before_the_object_is_read_and_nothing_is_written() -> None:
    parts = Parts()
    changes = ChangePipeline(parts, {"pause": Pausing(parts.steps)})  # type: ignore[arg-type,dict-item]

    message = await changes.ask("pause", PauseParams(JOB, "drain"), Asker())

    assert parts.steps == [
        "operator U0OP: pause ScaledJob annia/w",
        "person U0OP",
        "kube prod",
        "prepare as U0OP on gateway of prod",
    ]
    assert message["response_type"] == "ephemeral" and sealed_value(message)


async def test_a_viewer_is_refused_before_anything_is_read() -> None:
    parts = Parts()
    changes = ChangePipeline(parts, {"pause": Pausing(parts.steps)})  # type: ignore[arg-type,dict-item]

    with pytest.raises(errors.NotAllowed):
        await changes.ask("pause", PauseParams(JOB), Asker(user_id="U0VIEWER"))

    assert parts.steps == ["operator U0VIEWER: pause ScaledJob annia/w"]


async def test_a_click_is_checked_used_up_then_made_as_the_clicker_then_recorded() -> None:
    parts = Parts()
    changes = ChangePipeline(parts, {"pause": Pausing(parts.steps)})  # type: ignore[arg-type,dict-item]
    value = sealed_value(await changes.ask("pause", PauseParams(JOB, "drain"), Asker()))
    parts.steps.clear()

    result = await changes.confirm("U0OP", value)
    with pytest.raises(errors.UserError, match="already used"):
        await changes.confirm("U0OP", value)

    assert parts.steps[:5] == [
        "operator U0OP: pause",
        "kube prod",
        "person U0OP",
        "apply as U0OP on gateway of prod",
        "journal pause ok",
    ]
    assert parts.steps[5] == "post C0DEMO"  # the announcement, after the journal
    assert parts.steps[6:] == ["operator U0OP: pause"]  # the second click: refused, unused
    assert result["replace_original"] is True and result["text"] == "paused"


async def test_a_change_that_raises_is_recorded_once_as_failed_and_raised() -> None:
    parts = Parts()
    kind = Pausing(parts.steps, fails=True)
    changes = ChangePipeline(parts, {"pause": kind})  # type: ignore[arg-type,dict-item]
    value = sealed_value(await changes.ask("pause", PauseParams(JOB), Asker()))
    parts.steps.clear()

    with pytest.raises(errors.KubeError):
        await changes.confirm("U0OP", value)

    assert parts.steps[-1] == "apply as U0OP on gateway of prod"  # failed: logged, not kept


@pytest.mark.parametrize(
    ("action", "change", "line"),
    [
        ("pause", PauseParams(KedaTarget("ScaledJob", "annia", "w", "prod")), None),
        (
            "reconcile",
            Request(GitopsTarget("HelmRelease", "flux-system", "kai", "prod"), force=True),
            "reconcile HelmRelease flux-system/kai on prod --force",
        ),
        (
            "flux-resume",
            GitopsTarget("Kustomization", "apps", "web", "prod"),
            "resume Kustomization apps/web on prod",
        ),
    ],
    ids=["pause", "reconcile-force", "flux-resume"],
)
def test_a_request_says_what_the_change_does(action: str, change: object, line: str) -> None:
    kind = registry.change_kinds(keda_wait=AckWait())[action]
    assert kind.describe(change).line == (line or "pause ScaledJob annia/w on prod")


def test_a_pause_for_two_hours_is_described_with_its_duration_and_reason() -> None:
    kind = registry.change_kinds(keda_wait=AckWait())["pause"]
    described = kind.describe(PauseParams(JOB, "drain", timedelta(hours=2)))
    assert (described.operation, described.duration, described.reason) == (
        "pause ScaledJob annia/w",
        timedelta(hours=2),
        "drain",
    )
