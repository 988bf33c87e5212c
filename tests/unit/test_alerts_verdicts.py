"""What a check finds bad in a snapshot, reused while neither the snapshot nor the clock can
change it (`bot.alerts.verdicts`): the answer must be the one judging afresh would give."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from health_snapshots import kai_snapshot
from objects import apiservice, deployment, kai_conditions, kai_config, shard

from bot.alerts import rules
from bot.alerts.model import Observation
from bot.alerts.verdicts import Verdicts, unchanged_until
from bot.core.models import ClusterSnapshot
from bot.health import report as health

NOW = datetime(2026, 8, 10, 12, 0, tzinfo=UTC)
TIMEOUT = timedelta(minutes=15)
RECENT = "2026-08-10T11:55:00Z"  # 5 minutes before NOW: Progressing, no alert for 10 minutes
OLD = "2026-08-10T11:35:00Z"  # 25 minutes before NOW: past the timeout
NEVER = None


def judge(cluster: str, snapshot: ClusterSnapshot, now: datetime) -> list[Observation]:
    report = health.build_report(snapshot, cluster=cluster, now=now, progressing_timeout=TIMEOUT)
    return rules.detect(
        snapshot,
        report,
        now=now,
        progressing_timeout=TIMEOUT,
        apiservice_name=health.EXTERNAL_METRICS_APISERVICE,
        command="/kai",
    )


class Counted:
    """`judge`, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, cluster: str, snapshot: ClusterSnapshot, now: datetime) -> list[Observation]:
        self.calls += 1
        return judge(cluster, snapshot, now)


SNAPSHOTS = [
    pytest.param(kai_snapshot(), NEVER, id="healthy"),
    pytest.param(kai_snapshot(kai_config=None), NEVER, id="config-missing"),
    pytest.param(
        kai_snapshot(
            kai_config=kai_config(
                generation=2, conditions=kai_conditions(2, DependenciesFulfilled=("False", "x"))
            )
        ),
        NEVER,
        id="dependencies-missing",
    ),
    pytest.param(
        kai_snapshot(deployments=(deployment("kai-operator", operand=False, available="False"),)),
        NEVER,
        id="operator-down",
    ),
    pytest.param(
        kai_snapshot(apiservice=apiservice("False", "MissingEndpoints", "no endpoints")),
        NEVER,
        id="apiservice",
    ),
    pytest.param(
        kai_snapshot(kai_config=kai_config(generation=5, conditions=kai_conditions(4, at=RECENT))),
        NOW + timedelta(minutes=10),
        id="config-progressing-within-timeout",
    ),
    pytest.param(
        kai_snapshot(
            shards=(
                shard(conditions=kai_conditions(3)),
                shard("gpu", generation=2, conditions=kai_conditions(1, at=RECENT)),
            )
        ),
        NOW + timedelta(minutes=10),
        id="shard-progressing-within-timeout",
    ),
    pytest.param(
        kai_snapshot(kai_config=kai_config(generation=5, conditions=kai_conditions(4, at=OLD))),
        NOW - timedelta(minutes=10),
        id="config-progressing-past-timeout",
    ),
]


@pytest.mark.parametrize(("snapshot", "until"), SNAPSHOTS)
def test_judging_a_snapshot_gives_the_same_answer_at_every_moment_until_it_may_change(
    snapshot: ClusterSnapshot, until: datetime | None
) -> None:
    assert unchanged_until(snapshot, TIMEOUT) == until
    first = judge("prod", snapshot, NOW)
    last = until or NOW + timedelta(days=365)
    moments = (NOW - timedelta(minutes=1), NOW, last - timedelta(seconds=1))
    for moment in [m for m in moments if m <= last]:
        assert judge("prod", snapshot, moment) == judge("prod", snapshot, last), moment
    if until is not None and until >= NOW:
        assert judge("prod", snapshot, until + timedelta(seconds=1)) != first


@pytest.mark.parametrize(("snapshot", "until"), SNAPSHOTS)
def test_the_answer_reused_at_each_check_is_the_one_judging_afresh_gives(
    snapshot: ClusterSnapshot, until: datetime | None
) -> None:
    verdicts = Verdicts(Counted(), TIMEOUT)
    for minutes in range(0, 40, 5):
        moment = NOW + timedelta(minutes=minutes)
        same = copy.deepcopy(snapshot)  # each check reads its own (equal) objects
        assert verdicts.seen("prod", same, moment) == judge("prod", snapshot, moment), minutes


def test_an_unchanged_healthy_cluster_is_judged_once() -> None:
    counted = Counted()
    verdicts = Verdicts(counted, TIMEOUT)
    for hours in range(24):
        assert verdicts.seen("prod", kai_snapshot(), NOW + timedelta(hours=hours)) == []
    assert counted.calls == 1


def test_a_changed_snapshot_is_judged_again_and_each_cluster_on_its_own() -> None:
    counted = Counted()
    verdicts = Verdicts(counted, TIMEOUT)
    broken = kai_snapshot(kai_config=None)

    assert verdicts.seen("prod", kai_snapshot(), NOW) == []
    assert [o.key.condition for o in verdicts.seen("prod", broken, NOW)] == ["Missing"]
    assert verdicts.seen("staging", kai_snapshot(), NOW) == []
    [missing] = verdicts.seen("prod", broken, NOW + timedelta(minutes=1))

    assert missing.key.cluster == "prod"
    assert counted.calls == 3


def test_a_stuck_operator_is_alerted_once_its_timeout_passes_though_nothing_changed() -> None:
    counted = Counted()
    verdicts = Verdicts(counted, TIMEOUT)
    stuck = kai_snapshot(
        kai_config=kai_config(generation=5, conditions=kai_conditions(4, at=RECENT))
    )

    assert verdicts.seen("prod", stuck, NOW) == []
    assert verdicts.seen("prod", stuck, NOW + timedelta(minutes=10)) == []
    [late] = verdicts.seen("prod", stuck, NOW + timedelta(minutes=11))
    [later] = verdicts.seen("prod", stuck, NOW + timedelta(minutes=25))

    assert late.title == "operator not reconciling: Progressing for 16m"
    assert later.title == "operator not reconciling: Progressing for 30m"
    assert counted.calls == 3


def versioned(obj: dict[str, Any], version: str, **metadata: Any) -> dict[str, Any]:
    """`obj` as the API server gives it: with its uid and resourceVersion (and `metadata`)."""
    meta = {**obj["metadata"], "uid": f"uid-{obj['metadata']['name']}"}
    return {**obj, "metadata": {**meta, "resourceVersion": version, **metadata}}


def test_a_snapshot_is_known_by_its_objects_versions_not_by_what_a_copy_left_out() -> None:
    counted = Counted()
    verdicts = Verdicts(counted, TIMEOUT)
    config = kai_config(conditions=kai_conditions(3))
    as_read = versioned(config, "41", managedFields=[{"manager": "kai", "fieldsV1": {"f:a": {}}}])
    as_kept = versioned(config, "41", managedFields=[{"manager": "kai"}])  # slimmed, same version
    written = versioned(kai_config(conditions=kai_conditions(3, Available=("False", "no"))), "42")

    assert verdicts.seen("prod", kai_snapshot(kai_config=as_read), NOW) == []
    assert verdicts.seen("prod", kai_snapshot(kai_config=as_kept), NOW) == []
    assert counted.calls == 1
    assert verdicts.seen("prod", kai_snapshot(kai_config=written), NOW) == judge(
        "prod", kai_snapshot(kai_config=written), NOW
    )
    assert counted.calls == 2
