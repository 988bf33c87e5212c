"""Pause/resume planning and its Slack wording: exact annotations, timed pauses, long listings."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from objects import keda_conditions, keda_object

from bot.changes.params import check_reason
from bot.core import errors
from bot.keda import render as render_keda
from bot.keda import render_changes
from bot.keda.pause import (
    KedaRow,
    KedaTarget,
    PauseOutcome,
    Plan,
    check_namespace,
    find_expired_pause,
    plan_pause,
    plan_resume,
    summarise,
)
from bot.rules import keda
from bot.slack import blocks, limits

NOW = datetime(2026, 8, 24, 8, 0, tzinfo=UTC)
PAUSED, REPLICAS = keda.PAUSED, keda.PAUSED_REPLICAS
JOB = KedaTarget("ScaledJob", "annia", "annia-worker", "prod")
SO = KedaTarget("ScaledObject", "annia", "annia-api", "prod")
RECORD = {
    keda.PAUSED_BY: "U0123ABCD",
    keda.PAUSED_AT: "2026-08-24T06:00:00Z",
    keda.PAUSE_REASON: "node drain",
    keda.PAUSE_UNTIL: "2026-08-24T08:00:00Z",
}


def obj(
    target: KedaTarget, annotations: dict[str, str] | None = None, paused: str = "False"
) -> dict[str, Any]:
    conditions = keda_conditions(target.kind, paused=paused)
    found = keda_object(
        target.kind, target.name, target.namespace, annotations=annotations, conditions=conditions
    )
    found["metadata"]["resourceVersion"] = "41"
    return found


def pause(target: KedaTarget, annotations: dict[str, str] | None, **kwargs: Any) -> Plan:
    options: dict[str, Any] = {"user": "U0OPS", "reason": "", "duration": None} | kwargs
    return plan_pause(target, obj(target, annotations), now=NOW, **options)


@pytest.mark.parametrize(
    ("reason", "duration", "expected"),
    [
        pytest.param(
            "",
            None,
            {PAUSED: "true", keda.PAUSED_BY: "U0OPS", keda.PAUSED_AT: "2026-08-24T08:00:00Z"},
            id="until-resumed-no-reason",
        ),
        pytest.param(
            "node drain",
            timedelta(hours=2),
            {
                PAUSED: "true",
                keda.PAUSED_BY: "U0OPS",
                keda.PAUSED_AT: "2026-08-24T08:00:00Z",
                keda.PAUSE_REASON: "node drain",
                keda.PAUSE_UNTIL: "2026-08-24T10:00:00Z",
            },
            id="for-2h-with-reason",
        ),
    ],
)
@pytest.mark.parametrize("target", [JOB, SO], ids=["ScaledJob", "ScaledObject"])
def test_pause_writes_exactly_paused_true_and_our_record(
    target: KedaTarget, reason: str, duration: timedelta | None, expected: dict[str, str]
) -> None:
    plan = pause(target, None, reason=reason, duration=duration)

    assert plan.nothing_to_do is None
    assert dict(plan.annotations) == expected
    assert plan.patch_body("41") == {"metadata": {"resourceVersion": "41", "annotations": expected}}


def test_pause_deletes_a_stale_record_left_by_a_resume_by_hand() -> None:
    plan = pause(JOB, {PAUSED: "false", **RECORD})

    assert dict(plan.annotations) == {
        PAUSED: "true",
        keda.PAUSED_BY: "U0OPS",
        keda.PAUSED_AT: "2026-08-24T08:00:00Z",
        keda.PAUSE_REASON: None,
        keda.PAUSE_UNTIL: None,
    }


@pytest.mark.parametrize(
    ("target", "annotations", "already_paused"),
    [
        pytest.param(JOB, {PAUSED: "true"}, True, id="job-true"),
        pytest.param(JOB, {PAUSED: "True"}, True, id="job-True"),
        pytest.param(JOB, {PAUSED: "1"}, True, id="job-1"),
        pytest.param(JOB, {PAUSED: "yes"}, True, id="job-yes-unparsable"),
        pytest.param(JOB, {PAUSED: ""}, True, id="job-empty-unparsable"),
        pytest.param(JOB, {PAUSED: "false"}, False, id="job-false"),
        pytest.param(JOB, {REPLICAS: "0"}, False, id="job-ignores-paused-replicas"),
        pytest.param(SO, {REPLICAS: "0"}, True, id="object-paused-replicas"),
        pytest.param(SO, {PAUSED: "false", REPLICAS: "3"}, True, id="object-replicas-beat-false"),
        pytest.param(SO, {"autoscaling.keda.sh/paused-scale-in": "true"}, False, id="scale-in"),
    ],
)
def test_pausing_reads_the_annotations_as_keda_does(
    target: KedaTarget, annotations: dict[str, str], already_paused: bool
) -> None:
    plan = pause(target, annotations)

    assert (plan.nothing_to_do == "it is already paused") is already_paused
    assert (dict(plan.annotations) == {}) is already_paused


@pytest.mark.parametrize(
    ("target", "annotations", "deleted"),
    [
        pytest.param(JOB, {PAUSED: "true", **RECORD}, [PAUSED, *RECORD], id="job-ours"),
        pytest.param(JOB, {PAUSED: "yes"}, [PAUSED], id="job-by-hand-odd-value"),
        pytest.param(
            JOB, {PAUSED: "true", REPLICAS: "1"}, [PAUSED], id="job-leaves-paused-replicas"
        ),
        pytest.param(SO, {REPLICAS: "0"}, [REPLICAS], id="object-paused-replicas"),
        pytest.param(
            SO, {PAUSED: "false", REPLICAS: "2"}, [PAUSED, REPLICAS], id="object-both-keys"
        ),
    ],
)
def test_resume_deletes_the_pause_keys_present_and_never_writes_false(
    target: KedaTarget, annotations: dict[str, str], deleted: list[str]
) -> None:
    plan = plan_resume(target, obj(target, annotations, paused="True"))

    assert plan.nothing_to_do is None
    assert dict(plan.annotations) == dict.fromkeys(deleted)
    assert '"false"' not in json.dumps(plan.patch_body("41"))


@pytest.mark.parametrize(
    ("target", "annotations", "why"),
    [
        pytest.param(JOB, None, "it is not paused", id="no-annotations"),
        pytest.param(JOB, {PAUSED: "false"}, "it is not paused", id="false"),
        pytest.param(
            SO,
            {"autoscaling.keda.sh/paused-scale-in": "true"},
            "it is not paused (only scale-in is paused by its own annotation, which resume leaves)",
            id="one-direction-pause",
        ),
    ],
)
def test_resuming_what_is_not_paused_writes_nothing_and_says_why(
    target: KedaTarget, annotations: dict[str, str] | None, why: str
) -> None:
    plan = plan_resume(target, obj(target, annotations))

    assert (plan.nothing_to_do, dict(plan.annotations)) == (why, {})


def test_a_namespace_outside_the_list_is_refused() -> None:
    check_namespace("annia", ["annia"])
    with pytest.raises(errors.NotAllowed, match=r"'kube-system'.*keda.namespaces\): annia"):
        check_namespace("kube-system", ["annia"])


@pytest.mark.parametrize(
    ("reason", "accepted"),
    [
        pytest.param("x" * 500, True, id="500-ascii"),
        pytest.param("x" * 501, False, id="501-ascii"),
        pytest.param("\N{FIRE}" * 60, False, id="60-emoji"),
    ],
)
def test_a_reason_too_long_for_the_confirm_button_is_refused(reason: str, accepted: bool) -> None:
    if accepted:
        check_reason(reason)
    else:
        with pytest.raises(errors.UserError, match="The reason is too long"):
            check_reason(reason)


@pytest.mark.parametrize(
    ("annotations", "now", "expired"),
    [
        pytest.param({PAUSED: "true", **RECORD}, NOW, True, id="ours-due-now"),
        pytest.param({PAUSED: "true", **RECORD}, NOW - timedelta(minutes=1), False, id="not-yet"),
        pytest.param(RECORD, NOW, False, id="resumed-by-hand"),
        pytest.param({PAUSED: "True", **RECORD}, NOW, False, id="rewritten-by-hand"),
        pytest.param({PAUSED: "true", **RECORD, keda.PAUSED_BY: ""}, NOW, False, id="no-paused-by"),
        pytest.param(
            {PAUSED: "true", **RECORD, keda.PAUSE_UNTIL: "soon"}, NOW, False, id="until-unreadable"
        ),
        pytest.param({PAUSED: "true"}, NOW, False, id="paused-by-hand-no-record"),
    ],
)
def test_only_our_own_expired_timed_pauses_are_found(
    annotations: dict[str, str], now: datetime, expired: bool
) -> None:
    found = find_expired_pause(obj(JOB, annotations, paused="True"), "prod", now)

    assert (found is not None) is expired
    if found is not None:
        assert found.target == JOB
        assert found.length == timedelta(hours=2)


def row(
    name: str,
    namespace: str = "annia",
    *,
    annotations: dict[str, str] | None = None,
    paused: str = "False",
    ready: str = "True",
) -> KedaRow:
    found = keda_object(
        "ScaledJob",
        name,
        namespace,
        annotations=annotations,
        conditions=keda_conditions("ScaledJob", paused=paused, ready=ready),
    )
    return summarise(found)


def test_a_short_listing_shows_every_object_with_its_verdict_and_pause() -> None:
    rows = [
        row("annia-worker", annotations={PAUSED: "true", **RECORD}, paused="True"),
        row("annia-trainer"),
    ]

    message = render_keda.listing_message(
        rows, cluster="prod", scope="namespace annia", now=NOW - timedelta(minutes=30)
    )

    lines = message["text"].splitlines()
    assert lines[:2] == [
        "KEDA ScaledJobs and ScaledObjects on prod: namespace annia",
        "2 objects in 1 namespace: 1 Suspended · 1 Healthy",
    ]
    assert lines[2] == (
        "annia/annia-worker (ScaledJob): Suspended — paused by U0123ABCD at 2026-08-24 06:00 UTC, "
        "until 2026-08-24 08:00 UTC (in 30m): node drain"
    )
    assert lines[3] == "annia/annia-trainer (ScaledJob): Healthy"
    assert "<@U0123ABCD>" in json.dumps(message["blocks"])


def test_an_overdue_timed_pause_says_the_next_check_resumes_it() -> None:
    line = str(
        render_keda.object_line(
            row("w", annotations={PAUSED: "true", **RECORD}, paused="True"),
            NOW + timedelta(minutes=5),
            md=False,
        )
    )

    assert "(overdue by 5m: the next timed-pause check resumes it)" in line


def test_a_leftover_pause_record_on_an_unpaused_object_is_noted() -> None:
    line = str(render_keda.object_line(row("w", annotations=RECORD), NOW, md=False))

    assert line.startswith("annia/w (ScaledJob): Healthy (note: a kai-chatops pause record")


def many_rows(namespaces: int, per_namespace: int, paused_every: int) -> list[KedaRow]:
    rows = []
    for n in range(namespaces):
        for i in range(per_namespace):
            paused = i % paused_every == 0
            annotations = {PAUSED: "true", **RECORD} if paused else None
            state = "True" if paused else "False"
            rows.append(row(f"job-{i:03}", f"ns-{n:03}", annotations=annotations, paused=state))
    return rows


@pytest.mark.parametrize(
    ("namespaces", "per_namespace", "paused_every"),
    [
        pytest.param(100, 20, 10, id="2000-few-paused"),
        pytest.param(100, 20, 1, id="2000-all-paused"),
        pytest.param(1, 2000, 2, id="one-big-namespace"),
    ],
)
def test_a_long_listing_stays_within_slack_limits_and_says_what_it_leaves_out(
    namespaces: int, per_namespace: int, paused_every: int
) -> None:
    rows = many_rows(namespaces, per_namespace, paused_every)

    message = render_keda.listing_message(rows, cluster="prod", scope="all namespaces", now=NOW)

    assert limits.check_message(message) == []
    assert "Too many to list in one Slack message. Not shown one by one:" in message["text"]
    shown = sum(line.count("\n:") for line in _section_texts(message))
    paused = sum(1 for r in rows if r.state.paused)
    left = message["blocks"][-1]["elements"][0]["text"]
    healthy_left = len(rows) - paused
    suspended_left = paused - shown
    expected = ", ".join(
        part
        for part in (
            f"{suspended_left} Suspended" if suspended_left else "",
            f"{healthy_left} Healthy" if healthy_left else "",
        )
        if part
    )
    assert f"Not shown one by one: {expected} (in " in left
    assert shown <= paused


def test_a_summarised_listing_still_shows_every_degraded_object_in_full() -> None:
    rows = many_rows(100, 30, 1000)
    rows.insert(500, row("job-broken", rows[500].namespace, ready="False"))

    message = render_keda.listing_message(rows, cluster="prod", scope="all namespaces", now=NOW)

    assert "job-broken (ScaledJob): Degraded — Ready is False (TriggerError)" in message["text"]
    assert "job-broken* (ScaledJob): Degraded" in json.dumps(message["blocks"])
    assert (
        "3001 objects in 100 namespaces: 1 Degraded · 100 Suspended · 2900 Healthy"
        in (message["text"])
    )
    assert "Not shown one by one: 2900 Healthy (in ns-000, ns-001," in message["text"]
    assert "`/kai scaledjobs NAMESPACE` lists one namespace." in message["text"]


def _section_texts(message: dict[str, Any]) -> list[str]:
    return [b["text"]["text"] for b in message["blocks"] if b["type"] == "section"]


def test_an_empty_listing_says_so() -> None:
    message = render_keda.listing_message([], cluster="prod", scope="namespace x", now=NOW)

    assert message["text"] == "No ScaledJobs or ScaledObjects in namespace x on prod."


def test_the_confirmation_lists_the_exact_annotations_to_set() -> None:
    plan = pause(JOB, None, reason="node drain", duration=timedelta(hours=2))

    lines = render_changes.confirm_lines(plan, duration=timedelta(hours=2), now=NOW)

    assert lines == [
        "Now: not paused (KEDA's Paused condition: False).",
        "KEDA stops starting new Jobs for it; Jobs already running finish.",
        "Annotations to set:",
        f'  {PAUSED}: "true"',
        '  kai-chatops/paused-by: "U0OPS"',
        '  kai-chatops/paused-at: "2026-08-24T08:00:00Z" (the time you confirm)',
        '  kai-chatops/pause-reason: "node drain"',
        '  kai-chatops/pause-until: "2026-08-24T10:00:00Z" (2h after you confirm)',
        "After 2h kai-chatops resumes it by itself.",
    ]


def test_the_resume_confirmation_lists_what_is_removed_with_its_value() -> None:
    plan = plan_resume(SO, obj(SO, {REPLICAS: "0", keda.PAUSED_BY: "U0123ABCD"}, paused="True"))

    lines = render_changes.confirm_lines(plan, duration=None, now=NOW)

    assert lines[-3:] == [
        "Annotations to remove:",
        f'  {REPLICAS} (now "0")',
        '  kai-chatops/paused-by (now "U0123ABCD")',
    ]


def written(acknowledged: bool, annotations: dict[str, str] | None = None) -> PauseOutcome:
    plan = pause(JOB, None, duration=timedelta(hours=2))
    after = keda.read_pause_state(obj(JOB, annotations or {PAUSED: "true"}, paused="False"))
    return PauseOutcome(plan, after, acknowledged, 10.0)


def test_a_result_without_keda_acknowledging_does_not_claim_success() -> None:
    text = render_changes.result_message(written(False), wait_timeout=10, now=NOW)["text"]

    assert text.startswith("The pause is written on ScaledJob annia/annia-worker on prod")
    assert "KEDA has not acknowledged it yet: after 10s its Paused condition is False" in text


def test_an_acknowledged_result_says_paused_and_until_when() -> None:
    text = render_changes.result_message(written(True), wait_timeout=10, now=NOW)["text"]

    assert text == (
        "ScaledJob annia/annia-worker on prod is paused: it now carries "
        f'{PAUSED}: "true", until 2026-08-24 10:00 UTC (resumed automatically). '
        "KEDA acknowledged it (its Paused condition is True)."
    )


def test_a_result_overtaken_by_a_concurrent_change_says_so() -> None:
    outcome = written(False, {PAUSED: "false"})

    text = render_changes.result_message(outcome, wait_timeout=10, now=NOW)["text"]

    assert f'now reads {PAUSED}: "false"' in text
    assert "someone changed it at the same time" in text


@pytest.mark.parametrize(
    ("outcome", "audit_outcome", "note"),
    [
        pytest.param(written(True), "ok", "done", id="acknowledged"),
        pytest.param(written(False), "ok", "not acknowledged by KEDA", id="not-acknowledged"),
        pytest.param(
            written(False, {PAUSED: "false"}), "ok", "changed by someone else meanwhile", id="raced"
        ),
        pytest.param(
            dataclasses.replace(written(False), read_error="503 unavailable"),
            "unknown",
            "written, but not read back: 503 unavailable",
            id="not-read-back",
        ),
    ],
)
def test_a_written_change_is_unknown_only_when_it_could_not_be_read_back(
    outcome: PauseOutcome, audit_outcome: str, note: str
) -> None:
    assert (outcome.audit_outcome, outcome.audit_note) == (audit_outcome, note)


def test_a_result_not_read_back_says_it_was_written_and_that_keda_is_not_known() -> None:
    outcome = dataclasses.replace(written(False), read_error="503 unavailable")

    text = render_changes.result_message(outcome, wait_timeout=10, now=NOW)["text"]
    announced = render_changes.announcement_text(
        outcome, user="U0123ABCD", requested_by="", now=NOW
    )

    assert text == (
        "The pause is written on ScaledJob annia/annia-worker on prod (the API server accepted "
        "the patch), but it could not be read back afterwards (503 unavailable), so whether "
        "KEDA acknowledged it is not known. List it again to see where it stands."
    )
    assert blocks.neutralise(announced).startswith(
        ":grey_question: <@U0123ABCD> paused ScaledJob annia/annia-worker on prod"
    )
    assert blocks.neutralise(announced).endswith(
        "It could not be read back after the change, so KEDA's answer is not known."
    )


def test_the_automatic_resume_names_its_length_who_paused_it_and_why() -> None:
    expired = find_expired_pause(obj(JOB, {PAUSED: "true", **RECORD}, "True"), "prod", NOW)
    assert expired is not None
    outcome = PauseOutcome(
        plan_resume(JOB, obj(JOB, {PAUSED: "true"}, "True")), expired.state, True
    )

    text = blocks.neutralise(render_changes.auto_resume_text(expired, outcome))

    assert text == (
        ":arrow_forward: ScaledJob annia/annia-worker on prod resumed automatically after 2h "
        "(paused by <@U0123ABCD> at 2026-08-24 06:00 UTC: node drain). KEDA acknowledged it."
    )


def test_a_missing_object_points_at_the_other_kind_of_the_same_name() -> None:
    assert render_keda.missing_text(JOB, other_exists=True).endswith(
        "There is a ScaledObject of that name: write `pause scaledobject annia/annia-worker` "
        "(or `resume scaledobject ...`)."
    )


SCALE_IN, SCALE_OUT = keda.PAUSED_SCALE_IN, keda.PAUSED_SCALE_OUT


@pytest.mark.parametrize(
    ("target", "annotations", "removed", "remaining"),
    [
        pytest.param(SO, {PAUSED: "true", SCALE_IN: "true"}, [PAUSED], [SCALE_IN], id="in"),
        pytest.param(SO, {PAUSED: "true", SCALE_OUT: "1"}, [PAUSED], [SCALE_OUT], id="out"),
        pytest.param(
            SO,
            {REPLICAS: "0", SCALE_IN: "true", SCALE_OUT: "true", **RECORD},
            [REPLICAS, *RECORD],
            [SCALE_IN, SCALE_OUT],
            id="both-after-paused-replicas",
        ),
        pytest.param(SO, {PAUSED: "true", SCALE_IN: "false"}, [PAUSED], [], id="in-false"),
        pytest.param(JOB, {PAUSED: "true", SCALE_IN: "true"}, [PAUSED], [], id="scaledjob"),
    ],
)
def test_keda_one_direction_pause_is_named_and_resume_removes_only_what_pause_writes(
    target: KedaTarget, annotations: dict[str, str], removed: list[str], remaining: list[str]
) -> None:
    plan = plan_resume(target, obj(target, annotations, paused="True"))
    assert sorted(plan.annotations) == sorted(removed)
    assert set(plan.annotations.values()) == {None}

    left = {k: v for k, v in annotations.items() if k not in removed}
    after = keda.read_pause_state(obj(target, left, paused="True" if remaining else "False"))
    outcome = PauseOutcome(plan, after, acknowledged=True)
    text = render_changes.result_message(outcome, wait_timeout=10, now=NOW)["text"]
    announced = str(render_changes.announcement_text(outcome, user="U1", requested_by="", now=NOW))

    assert after.paused is False
    assert keda.expects_paused_condition(after) is bool(remaining)
    assert "has not acknowledged" not in text
    for key in remaining:
        assert key in text and key in announced
        assert key in "\n".join(render_changes.confirm_lines(plan, duration=None, now=NOW))
    if not remaining:
        assert "Still paused" not in text


def test_keda_one_direction_pause_alone_is_named_and_not_resumed() -> None:
    plan = plan_resume(SO, obj(SO, {SCALE_OUT: "true"}, paused="True"))

    assert plan.nothing_to_do == (
        "it is not paused (only scale-out is paused by its own annotation, which resume leaves)"
    )
    verdict = keda.evaluate_keda_object(obj(SO, {SCALE_OUT: "true"}, paused="True"))
    assert "scale-out paused by annotation" in verdict.message
    assert "KEDA has not caught up" not in verdict.message
