"""Flux suspend and resume decided from the object as read (docs/design.md §2 "Flux reconcile"):
the merge patch each writes, what is refused, which timed suspend is over and which falls due
next. Pure tables; a patch is applied as the API server applies a JSON merge patch (RFC 7386),
so each test reads the object as Flux and the next sweep would.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from bot.core import conditions
from bot.gitops.plan import FluxReport, StepResult
from bot.gitops.suspend import (
    ALREADY_SUSPENDED,
    NOT_SUSPENDED,
    SuspendOutcome,
    find_expired_suspend,
    next_due,
    plan_resume,
    plan_suspend,
)
from bot.gitops.target import GitopsTarget
from bot.rules.flux_suspend import read_suspend_record

NOW = datetime(2026, 8, 24, 8, 0, tzinfo=UTC)
TARGET = GitopsTarget("HelmRelease", "flux-system", "keda", "prod")
BY, AT, REASON, UNTIL = (
    "kai-chatops/suspended-by",
    "kai-chatops/suspended-at",
    "kai-chatops/suspend-reason",
    "kai-chatops/suspend-until",
)


def release(
    name: str = "keda",
    *,
    suspended: bool = False,
    annotations: dict[str, str] | None = None,
    namespace: str = "flux-system",
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "resourceVersion": "7"}
    if annotations is not None:
        metadata["annotations"] = {"team": "gpu", **annotations}
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": metadata,
        "spec": {"interval": "10m", "suspend": suspended},
    }


def merged(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merged(result.get(key), value)
    return result


def ours(until: datetime | None, *, by: str = "U0OPS", reason: str = "") -> dict[str, str]:
    record = {BY: by, AT: conditions.format_timestamp(NOW - timedelta(hours=1))}
    if reason:
        record[REASON] = reason
    if until is not None:
        record[UNTIL] = conditions.format_timestamp(until)
    return record


def suspend(obj: dict[str, Any], duration: timedelta | None, reason: str = "") -> Any:
    plan = plan_suspend(obj, TARGET, user="U0OPS", reason=reason, duration=duration, now=NOW)
    assert plan.refusal == ""
    return plan


def test_a_re_suspend_without_a_time_deletes_the_old_suspend_until() -> None:
    # Resumed by hand (`flux resume`, an edit in Git): spec.suspend false, our old record left.
    earlier = release(annotations=ours(NOW - timedelta(hours=3), reason="old drain"))

    plan = suspend(earlier, None)
    after = merged(earlier, plan.patch_body("7"))

    notes = after["metadata"]["annotations"]
    assert UNTIL not in notes and REASON not in notes  # no time, no reason this time
    assert notes[BY] == "U0OPS" and notes[AT] == "2026-08-24T08:00:00Z"
    assert notes["team"] == "gpu"  # annotations of others are left as they are
    assert after["spec"]["suspend"] is True
    assert plan.until is None
    # So no sweep ever resumes it by itself, however late it runs.
    assert find_expired_suspend(after, "prod", NOW + timedelta(days=30)) is None
    assert next_due([after], NOW) is None


def test_a_suspend_on_a_clean_object_writes_only_what_it_knows() -> None:
    plan = suspend(release(), None)

    assert plan.patch == {
        "spec": {"suspend": True},
        "metadata": {"annotations": {BY: "U0OPS", AT: "2026-08-24T08:00:00Z"}},
    }
    assert plan.action == "suspend" and plan.target == TARGET
    assert plan.before == read_suspend_record(release())


def test_a_timed_suspend_writes_its_end_and_reason_and_carries_the_version_read() -> None:
    plan = suspend(release(), timedelta(hours=2), "node drain")

    assert plan.until == NOW + timedelta(hours=2)
    assert plan.patch_body("7") == {
        "spec": {"suspend": True},
        "metadata": {
            "annotations": {
                BY: "U0OPS",
                AT: "2026-08-24T08:00:00Z",
                REASON: "node drain",
                UNTIL: "2026-08-24T10:00:00Z",
            },
            "resourceVersion": "7",
        },
    }
    assert "resourceVersion" not in plan.patch_body("")["metadata"]
    assert "resourceVersion" not in plan.patch["metadata"]  # the plan itself is left as it was


def test_suspending_what_is_suspended_and_resuming_what_is_not_are_refused() -> None:
    held = release(suspended=True, annotations=ours(None))

    again = plan_suspend(held, TARGET, user="U0X", reason="", duration=None, now=NOW)
    idle = plan_resume(release(), TARGET)

    assert (again.refusal, again.patch, again.action) == (ALREADY_SUSPENDED, {}, "suspend")
    assert again.before.by == "U0OPS" and again.target == TARGET
    assert (idle.refusal, idle.patch, idle.action) == (NOT_SUSPENDED, {}, "resume")
    assert idle.before == read_suspend_record(release()) and idle.target == TARGET


def test_a_resume_writes_false_and_deletes_every_key_of_our_record_present() -> None:
    held = release(suspended=True, annotations=ours(NOW, reason="drain"))

    plan = plan_resume(held, TARGET)
    after = merged(held, plan.patch_body("7"))

    assert plan.refusal == "" and plan.action == "resume" and plan.before.reason == "drain"
    assert plan.target == TARGET
    assert plan.patch == {
        "spec": {"suspend": False},
        "metadata": {"annotations": {BY: None, AT: None, REASON: None, UNTIL: None}},
    }
    assert after["spec"]["suspend"] is False
    assert after["metadata"]["annotations"] == {"team": "gpu"}


def test_a_resume_of_a_suspend_by_hand_writes_only_spec_suspend() -> None:
    plan = plan_resume(release(suspended=True), TARGET)

    assert plan.patch == {"spec": {"suspend": False}}


@pytest.mark.parametrize(
    ("obj", "expired"),
    [
        pytest.param(release(suspended=True, annotations=ours(NOW)), True, id="due-now"),
        pytest.param(
            release(suspended=True, annotations=ours(NOW - timedelta(minutes=1))),
            True,
            id="past",
        ),
        pytest.param(
            release(suspended=True, annotations=ours(NOW + timedelta(seconds=1))),
            False,
            id="ahead",
        ),
        pytest.param(release(suspended=True, annotations=ours(None)), False, id="untimed"),
        pytest.param(
            release(suspended=False, annotations=ours(NOW - timedelta(hours=1))),
            False,
            id="resumed-by-hand",
        ),
        pytest.param(
            release(suspended=True, annotations={UNTIL: conditions.format_timestamp(NOW)}),
            False,
            id="not-ours",
        ),
        pytest.param(
            release(suspended=True, annotations={**ours(None), UNTIL: "tomorrow"}),
            False,
            id="unreadable-until",
        ),
    ],
)
def test_a_timed_suspend_is_over_only_when_ours_in_force_and_past_its_end(
    obj: dict[str, Any], expired: bool
) -> None:
    found = find_expired_suspend(obj, "prod", NOW)

    assert (found is not None) is expired
    if found is not None:
        assert found.target == TARGET
        assert found.record == read_suspend_record(obj)
        assert found.until == datetime.fromisoformat(obj["metadata"]["annotations"][UNTIL])
        assert found.length == found.until - (NOW - timedelta(hours=1))


def test_a_timed_suspend_without_its_start_has_no_length() -> None:
    record = {BY: "U0OPS", UNTIL: conditions.format_timestamp(NOW)}
    found = find_expired_suspend(release(suspended=True, annotations=record), "prod", NOW)

    assert found is not None and found.suspended_at is None and found.length is None


def test_the_next_due_is_the_earliest_timed_suspend_still_ahead() -> None:
    objs = [
        release("late", suspended=True, annotations=ours(NOW + timedelta(hours=5))),
        release("soon", suspended=True, annotations=ours(NOW + timedelta(hours=1))),
        release("later", suspended=True, annotations=ours(NOW + timedelta(hours=3))),
        release("over", suspended=True, annotations=ours(NOW - timedelta(hours=1))),
        release("now", suspended=True, annotations=ours(NOW)),
        release("hand", suspended=True, annotations={UNTIL: conditions.format_timestamp(NOW)}),
        release("resumed", annotations=ours(NOW + timedelta(minutes=5))),
        release("untimed", suspended=True, annotations=ours(None)),
    ]

    assert next_due(objs, NOW) == NOW + timedelta(hours=1)
    assert next_due(objs[3:], NOW) is None


def test_format_time_is_rfc3339_utc_to_the_second_whatever_the_hosts_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    east = datetime(2026, 8, 24, 19, 0, 5, 999, tzinfo=timezone(timedelta(hours=9)))
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        written = conditions.format_timestamp(east)
    finally:
        monkeypatch.undo()
        time.tzset()

    assert written == "2026-08-24T10:00:05Z"


def test_a_suspend_is_ok_once_written_and_a_resume_ends_as_its_reconcile() -> None:
    suspended = suspend(release(), None)
    resumed = plan_resume(release(suspended=True), TARGET)
    failed = FluxReport((StepResult(TARGET, "failed", "False", "InstallFailed"),), 3.0)

    assert SuspendOutcome(suspended, release()).outcome == "ok"
    assert SuspendOutcome(resumed, release(), failed).outcome == "failed"
