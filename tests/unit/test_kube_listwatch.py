"""The one list-then-watch route (`bot.kube.listwatch.ListThenWatch`): what it asks, what it
hands on, and where the next watch starts after each way a watch can end.

A fake cluster that answers one list and scripted watch streams; the handlers record.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from bot.core import errors
from bot.core.models import RawObject
from bot.kube import kinds
from bot.kube.listwatch import ListThenWatch
from bot.kube.ports import WatchEvent


def event(kind: str, version: str, name: str = "e") -> WatchEvent:
    return kind, {"metadata": {"name": name, "resourceVersion": version}}


class Cluster:
    """One list (at version "10"), then each watch streams the next script in turn: its
    events, then the exception it ends with (None: the server ended it)."""

    cluster = "sim"

    def __init__(self, *scripts: tuple[list[WatchEvent], Exception | None]) -> None:
        self.scripts = list(scripts)
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self.closed = 0

    async def list_versioned(self, ref: Any, namespace: Any = None, **query: Any) -> Any:
        self.asked.append(("list", query))
        return [event("ADDED", "9")[1]], "10"

    async def watch_collection(
        self, ref: Any, namespace: Any = None, **query: Any
    ) -> AsyncGenerator[WatchEvent, None]:
        self.asked.append(("watch", query))
        events, ending = self.scripts.pop(0)
        try:
            for change in events:
                yield change
            if ending is not None:
                raise ending
        finally:
            self.closed += 1


class Handed:
    """The handlers: what each was handed; `fail_on` makes `changed` raise for that version."""

    def __init__(self, fail_on: str = "") -> None:
        self.listed: list[list[RawObject]] = []
        self.changed: list[tuple[str, str]] = []
        self.fail_on = fail_on

    async def on_listed(self, items: list[RawObject]) -> None:
        self.listed.append(items)

    async def on_changed(self, kind: str, obj: RawObject) -> None:
        version = obj["metadata"]["resourceVersion"]
        if version == self.fail_on:
            raise RuntimeError("the state could not be saved")
        self.changed.append((kind, version))


def follower(cluster: Cluster, handed: Handed) -> ListThenWatch:
    return ListThenWatch(
        cluster,  # type: ignore[arg-type]
        kinds.EVENT,
        listed=handed.on_listed,
        changed=handed.on_changed,
        field_selector="reason=Evict",
        page_size=500,
    )


async def test_a_list_then_watches_resume_from_the_last_version_seen_bookmarks_too() -> None:
    cluster = Cluster(
        ([event("ADDED", "11"), event("BOOKMARK", "15")], None),
        ([event("MODIFIED", "16")], None),
    )
    handed = Handed()
    events = follower(cluster, handed)
    await events.list()
    await events.watch(30)
    await events.watch(30)

    assert [len(items) for items in handed.listed] == [1]
    assert handed.changed == [("ADDED", "11"), ("BOOKMARK", "15"), ("MODIFIED", "16")]
    assert [(verb, q.get("resource_version")) for verb, q in cluster.asked] == [
        ("list", None),
        ("watch", "10"),
        ("watch", "15"),
    ]
    assert cluster.asked[0][1] == {
        "field_selector": "reason=Evict",
        "metadata_only": False,
        "page_size": 500,
    }
    assert events.version == "16" and events.watched


@pytest.mark.parametrize(
    ("ending", "kept"),
    [
        (errors.KubeExpired("410: too old"), ""),
        (errors.KubeUnavailable("the stream broke"), "11"),
        (errors.KubeForbidden("403"), "11"),
    ],
    ids=["expired-lists-again", "broken-resumes", "forbidden-resumes"],
)
async def test_a_410_forgets_the_version_any_other_failure_keeps_it(
    ending: Exception, kept: str
) -> None:
    events = follower(Cluster(([event("ADDED", "11")], ending)), Handed())
    await events.list()
    with pytest.raises(type(ending)):
        await events.watch(30)
    assert events.version == kept


async def test_a_handler_that_fails_forgets_the_version_so_nothing_handed_is_lost() -> None:
    cluster = Cluster(([event("ADDED", "11"), event("ADDED", "12")], None))
    handed = Handed(fail_on="12")
    events = follower(cluster, handed)
    await events.list()
    with pytest.raises(RuntimeError):
        await events.watch(30)
    assert events.version == ""  # listed again: the Event of version 12 with it
    assert cluster.closed == 1


async def test_stop_ends_the_request_after_the_event_it_held_for() -> None:
    cluster = Cluster(([event("ADDED", "11"), event("ADDED", "12")], None))
    handed = Handed()
    events = follower(cluster, handed)
    await events.list()
    await events.watch(30, stop=lambda: True)
    assert handed.changed == [("ADDED", "11")]
    assert events.version == "11" and cluster.closed == 1
