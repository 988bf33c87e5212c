"""Positions in the simulated cluster's history: committed changes, watch views, continue tokens.

Pure helpers for the store: what a watcher with a namespace and selectors sees of a change
(an object entering or leaving the selection becomes ADDED or DELETED), and the opaque
`continue` token of a paginated list.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from testbed.sim import objects
from testbed.sim import status as st
from testbed.sim.resources import ResourceType
from testbed.sim.selectors import Selector

WatchCallback = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class Change:
    """One committed write, as kept in the watch history."""

    rv: int
    type: str  # ADDED, MODIFIED, DELETED
    storage_key: tuple[str, str]
    old: dict[str, Any] | None
    new: dict[str, Any]


@dataclass(eq=False)
class Watcher:
    """One open watch: what it selects and where its events go."""

    rtype: ResourceType
    namespace: str | None
    selector: Selector
    callback: WatchCallback


def view_change(watcher: Watcher, change: Change) -> tuple[str, dict[str, Any]] | None:
    """The (type, object) a watcher sees for a change, or None when it selects neither side."""
    if change.storage_key != watcher.rtype.storage_key:
        return None
    namespace = change.new["metadata"].get("namespace", "")
    if watcher.namespace is not None and namespace != watcher.namespace:
        return None
    if change.type == "DELETED":
        kind = "DELETED" if watcher.selector.matches(change.new) else None
    else:
        was = change.old is not None and watcher.selector.matches(change.old)
        now = watcher.selector.matches(change.new)
        kind = _TRANSITIONS.get((was, now))
    return None if kind is None else (kind, objects.render(watcher.rtype, change.new))


_TRANSITIONS = {(True, True): "MODIFIED", (False, True): "ADDED", (True, False): "DELETED"}


INITIAL_EVENTS_END = "k8s.io/initial-events-end"


def bookmark(rtype: ResourceType, rv: int, *, initial_events_end: bool = False) -> dict[str, Any]:
    """A BOOKMARK event's object: only the kind and the resourceVersion it marks (and, ending a
    watch list's initial events, the `k8s.io/initial-events-end` annotation)."""
    metadata: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_events_end:
        metadata["annotations"] = {INITIAL_EVENTS_END: "true"}
    return {"kind": rtype.kind, "apiVersion": rtype.api_version, "metadata": metadata}


def parse_rv(text: str) -> int:
    """A resourceVersion query parameter as a number.

    Raises:
        ApiError: 400 when it is not one.
    """
    if not text.isdigit():
        raise st.ApiError(400, f'invalid resource version "{text}"')
    return int(text)


def encode_continue(key: tuple[str, str], rv: int) -> str:
    """The opaque token that resumes a list after `key` at resourceVersion `rv` (a snapshot);
    `rv` -1 resumes at the current state (the "inconsistent" token of an expired one)."""
    raw = json.dumps({"rv": rv, "start": list(key)}).encode()
    return base64.urlsafe_b64encode(raw).decode()


def decode_continue(token: str) -> tuple[tuple[str, str], int]:
    """The (namespace, name) a continue token resumes after, and its snapshot's resourceVersion.

    Raises:
        ApiError: 400 for a token this server did not hand out.
    """
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        namespace, name = data["start"]
        return (str(namespace), str(name)), int(data["rv"])
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        message = f"invalid continue token: continue key is not valid: {exc}"
        raise st.ApiError(400, message) from exc


def roll_back(
    bucket: dict[tuple[str, str], dict[str, Any]],
    storage_key: tuple[str, str],
    changes: Iterable[Change],
    rv: int,
) -> dict[tuple[str, str], dict[str, Any]]:
    """One type's objects as they were at `rv`: the current `bucket` with every later change of
    that type undone, newest first (`changes` in commit order, all kept since `rv`)."""
    past = dict(bucket)
    for change in reversed([c for c in changes if c.rv > rv and c.storage_key == storage_key]):
        metadata = change.new["metadata"]
        key = (str(metadata.get("namespace", "")), str(metadata["name"]))
        if change.type == "ADDED":
            past.pop(key, None)
        elif change.old is not None:
            past[key] = change.old
    return past
