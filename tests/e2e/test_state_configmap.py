"""A ConfigMap as one stored document, against the simulator through the official client:
compare-and-set on the resourceVersion, a change redone on conflict, and the one retry policy."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pytest
from sim_gateway import AnswerLost

from bot.kube.gateway import KubeGateway
from bot.state.configmap import Changes, ConfigMapDocument, Snapshot
from bot.state.retry import NEW, Raises, RetryPolicy, StateConflict, StateUnavailable
from testbed.sim import Simulator

CM = ("v1", "ConfigMap", "notes", "kai-chatops")


pytestmark = pytest.mark.sim(scenarios=["kai-healthy"])


class NotesUnavailable(StateUnavailable):
    """A store's own error, as its callers catch it."""


class NotesConflict(StateConflict):
    """A store's own conflict."""


RAISES = Raises("notes ConfigMap", NotesUnavailable, NotesConflict)
AT_ONCE = RetryPolicy(backoffs=(0.0,))  # one resend, without waiting


class Waits(list[float]):
    """The pauses a write waited, in seconds (none of them waited in tests)."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def document(kube: Any, **kw: Any) -> ConfigMapDocument:
    return ConfigMapDocument(kube, "kai-chatops", "notes", RAISES, **kw)


def stored(sim: Simulator) -> Mapping[str, Any]:
    found = sim.get(*CM)
    assert found is not None
    return found


async def test_a_missing_configmap_reads_as_new_and_its_first_write_creates_it_as_ours(
    gateway: KubeGateway, sim: Simulator
) -> None:
    notes = document(gateway)
    assert await notes.read() == Snapshot({}, NEW)
    version = await notes.write({"a": "1", "gone": None}, NEW)
    configmap = stored(sim)
    assert configmap["data"] == {"a": "1"}
    assert configmap["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "kai-chatops"}
    assert version == configmap["metadata"]["resourceVersion"]


async def test_a_write_names_the_version_read_and_none_drops_a_key(
    gateway: KubeGateway, sim: Simulator
) -> None:
    notes = document(gateway)
    first = await notes.write({"a": "1", "b": "2"}, NEW)
    second = await notes.write({"a": "3", "b": None}, first)
    found = await notes.read()
    assert (found.data, found.version) == ({"a": "3"}, second)
    with pytest.raises(NotesConflict, match=r"^notes ConfigMap changed meanwhile: "):
        await notes.write({"a": "4"}, first)
    assert stored(sim)["data"] == {"a": "3"}


async def test_two_first_writes_conflict(gateway: KubeGateway) -> None:
    await document(gateway).write({"a": "1"}, NEW)
    with pytest.raises(NotesConflict):
        await document(gateway).write({"a": "2"}, NEW)


async def test_a_configmap_deleted_since_it_was_read_is_a_conflict(
    gateway: KubeGateway, sim: Simulator
) -> None:
    notes = document(gateway)
    version = await notes.write({"a": "1"}, NEW)
    sim.delete(*CM)
    with pytest.raises(NotesConflict):
        await notes.write({"a": "2"}, version)


def add_one(data: Mapping[str, str]) -> tuple[Changes, int]:
    count = int(data.get("count", "0")) + 1
    return {"count": str(count)}, count


async def test_a_change_that_conflicts_is_read_and_redone(
    gateway: KubeGateway, sim: Simulator
) -> None:
    notes = document(gateway)
    assert await notes.change(add_one, gave_up="gave up") == 1
    sim.faults.add(409, resource="configmaps", verb="patch", times=2)
    assert await notes.change(add_one, gave_up="gave up") == 2
    patches = [r for r in sim.requests if r.verb == "patch" and r.resource == "configmaps"]
    assert len(patches) == 3


async def test_a_change_that_keeps_conflicting_is_given_up_in_the_stores_words(
    gateway: KubeGateway, sim: Simulator
) -> None:
    notes = document(gateway)
    await notes.write({"count": "1"}, NEW)
    sim.faults.add(409, resource="configmaps", verb="patch", times=None)
    with pytest.raises(NotesUnavailable, match=r"^notes kept changing$"):
        await notes.change(add_one, gave_up="notes kept changing")
    patches = [r for r in sim.requests if r.verb == "patch" and r.resource == "configmaps"]
    assert len(patches) == RetryPolicy().tries


async def test_a_change_that_changes_nothing_writes_nothing(
    gateway: KubeGateway, sim: Simulator
) -> None:
    notes = document(gateway)
    assert await notes.change(lambda data: ({}, "nothing"), gave_up="gave up") == "nothing"
    assert sim.get(*CM) is None
    assert not [r for r in sim.requests if r.verb in ("create", "patch")]


async def test_a_write_that_got_a_503_is_sent_again_after_the_policys_pauses_and_logged(
    gateway: KubeGateway, sim: Simulator, caplog: pytest.LogCaptureFixture
) -> None:
    waits = Waits()
    notes = document(
        gateway,
        policy=RetryPolicy(backoffs=(0.5, 1.0)),
        sleep=waits,
        log=logging.getLogger("notes.store"),
    )
    version = await notes.write({"a": "1"}, NEW)
    sim.faults.add(503, resource="configmaps", verb="patch", times=1)
    await notes.write({"a": "2"}, version)
    assert (waits, stored(sim)["data"]) == ([0.5], {"a": "2"})
    [said] = [r.getMessage() for r in caplog.records if r.name == "notes.store"]
    assert said.startswith("notes ConfigMap: ") and said.endswith("; writing again in 0.5s")


async def test_by_default_a_write_that_got_a_503_fails_at_once(
    gateway: KubeGateway, sim: Simulator
) -> None:
    notes = document(gateway)
    version = await notes.write({"a": "1"}, NEW)
    sim.faults.add(503, resource="configmaps", verb="patch", times=1)
    with pytest.raises(NotesUnavailable, match=r"^notes ConfigMap: .*503"):
        await notes.write({"a": "2"}, version)
    assert stored(sim)["data"] == {"a": "1"}


async def test_a_write_whose_answer_was_lost_counts_once_found_stored(
    gateway: KubeGateway, sim: Simulator
) -> None:
    notes = document(AnswerLost(gateway), policy=AT_ONCE)
    first = await notes.write({"a": "1"}, NEW)
    version = await notes.write({"a": "2", "b": None}, first)
    configmap = stored(sim)
    assert (version, configmap["data"]) == (configmap["metadata"]["resourceVersion"], {"a": "2"})


async def test_a_write_whose_answer_was_lost_and_then_overwritten_conflicts(
    gateway: KubeGateway, sim: Simulator
) -> None:
    async def another_writer(seconds: float) -> None:
        theirs = document(gateway)
        await theirs.write({"a": "theirs"}, (await theirs.read()).version)

    policy = RetryPolicy(backoffs=(0.5,))
    notes = document(AnswerLost(gateway), policy=policy, sleep=another_writer)
    first = await notes.write({"a": "1"}, NEW)
    with pytest.raises(NotesConflict):
        await notes.write({"a": "mine"}, first)
    assert stored(sim)["data"] == {"a": "theirs"}


async def test_a_refused_read_or_write_is_the_stores_error_not_retried(
    gateway: KubeGateway, sim: Simulator
) -> None:
    notes = document(gateway, policy=AT_ONCE)
    version = await notes.write({"a": "1"}, NEW)
    sim.faults.add(403, resource="configmaps", verb="patch", times=1)
    with pytest.raises(NotesUnavailable, match=r"^notes ConfigMap: .*forbidden"):
        await notes.write({"a": "2"}, version)
    sim.faults.add(403, resource="configmaps", verb="get", times=1)
    with pytest.raises(NotesUnavailable, match=r"^notes ConfigMap: .*forbidden"):
        await notes.read()


async def test_a_missing_namespace_is_named_not_taken_for_a_conflict(
    gateway: KubeGateway, sim: Simulator
) -> None:
    sim.faults.add(
        404, resource="configmaps", verb="create", message='namespaces "kai-chatops" not found'
    )
    with pytest.raises(NotesUnavailable, match=r"^notes ConfigMap: namespace kai-chatops: "):
        await document(gateway).write({"a": "1"}, NEW)


async def test_a_write_applied_then_answered_503_fails_yet_is_in_the_configmap(
    gateway: KubeGateway, sim: Simulator
) -> None:
    notes = document(gateway)
    version = await notes.write({"a": "1"}, NEW)
    sim.faults.add(503, resource="configmaps", verb="patch", times=1, applied=True)
    with pytest.raises(NotesUnavailable, match="may or may not have been applied"):
        await notes.write({"a": "2"}, version)
    assert stored(sim)["data"] == {"a": "2"}  # the simulator carried it out all the same
