"""The protocol a feature's change kinds implement, and the words it is spoken in.

A kind says what a change is (`describe`), reads and decides before it is made (`prepare`: the
Confirm to show, an answer instead, or nothing to ask), and makes it (`apply`: the reply and the
record). This module sits below the features, so a feature's `change` module names these types
without importing the pipeline (`bot.changes.pipeline`), which does the rest: Confirm, claim
once, the approval gate, the person's identity, the record.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, TypeVar

from bot.access.audit import Change
from bot.config.settings import Settings
from bot.core import errors
from bot.kube.kinds import ResourceRef
from bot.kube.ports import KubeWriter
from bot.slack.blocks import Message, Text

P = TypeVar("P")


@dataclass(frozen=True)
class Described:
    """A change in words, and the object it changes.

    `word` is the command's verb (`pause`, `resume`, `reconcile`); `flags` the options that
    change what it does (`--force`); `action` how the audit line names it when that is not the
    word (`reconcile --force`, `hard refresh`); `user_prefix` how the audit line names a person
    (GitOps requests say `slack:<ID>`, as their annotations do).
    """

    word: str
    ref: ResourceRef
    namespace: str
    name: str
    cluster: str
    flags: str = ""
    action: str = ""
    reason: str = ""
    duration: timedelta | None = None
    user_prefix: str = ""

    @property
    def subject(self) -> str:
        """`ScaledJob annia/annia-worker`; a cluster-scoped object: `Node gpu-node-1`."""
        if not self.ref.namespaced:
            return f"{self.ref.kind} {self.name}"
        return f"{self.ref.kind} {self.namespace}/{self.name}"

    @property
    def where(self) -> str:
        """`ScaledJob annia/annia-worker on prod`."""
        return f"{self.subject} on {self.cluster}"

    @property
    def operation(self) -> str:
        """What an operator is allowed to do: `pause ScaledJob annia/annia-worker`."""
        return f"{self.word} {self.subject}"

    @property
    def line(self) -> str:
        """The change in one line: `reconcile HelmRelease flux-system/kai on prod --force`."""
        return f"{self.word} {self.where}" + (f" {self.flags}" if self.flags else "")

    @property
    def audit_action(self) -> str:
        return self.action or self.word

    def failure(self, user: str, now: datetime) -> Change:
        """The record of this change by `user` when it ended in an error at `now` (its outcome
        and note follow from the error)."""
        who = f"{self.user_prefix}{user}"
        return Change(who, self.audit_action, self.where, "failed", now, self.reason)


@dataclass(frozen=True)
class Ask:
    """`prepare`'s answer for a change that asks Confirm first: what it will do."""

    title: str
    lines: list[str]


@dataclass(frozen=True)
class Done:
    """What `apply` did: the reply, and the record (`change` None: nothing was written, nothing
    to record; `refused`: the cluster refused it, its log line alone, the person sees why)."""

    reply: Message
    change: Change | None = None
    text: Text = ""  # the announcement of a change said in the channel
    refused: bool = False


class Underway:
    """The objects with a request under way, and who asked: one request per object at a time
    (two reconciles of one object would each wait for the other's answer)."""

    def __init__(self) -> None:
        self._running: dict[str, str] = {}

    def holder(self, key: str) -> str | None:
        """Who asked for the request under way for `key` (an object: `Described.where`)."""
        return self._running.get(key)

    @contextmanager
    def claim(self, key: str, user_id: str) -> Iterator[None]:
        """Hold `key` for the enclosed work (check `holder` first, with no await between).

        Raises:
            UserError: `key` is held already.
        """
        if key in self._running:
            raise errors.UserError(f"{key} already has a request under way.")
        self._running[key] = user_id
        try:
            yield
        finally:
            self._running.pop(key, None)


async def _nothing(_: object) -> None:
    """Nothing to post: a change prepared at the command, or run with no reply to update."""


@dataclass(frozen=True)
class Run:
    """One change being prepared or made, and what the pipeline lends it.

    `kube` is the cluster's gateway: the bot's own in `prepare`, with its patches sent as the
    person in `apply` (reads stay the bot's). `started` posts the progress reply of a change
    made at once (and from then on an error is on the record); `announce` says something in
    the channel now, before the change ends.
    """

    settings: Settings
    kube: KubeWriter
    user: str  # who makes it: the clicker, or the requester of an approved change
    requested_by: str  # who asked for it
    channel_id: str  # where it was asked
    clock: Callable[[], datetime]
    underway: Underway
    started: Callable[[Message], Awaitable[None]] = _nothing
    announce: Callable[[Text], Awaitable[None]] = _nothing


class ChangeKind(Protocol[P]):
    """One kind of change (`pause`, `sync`, ...), with its typed parameters `P`: a frozen
    dataclass that `bot.changes.params` carries in a Confirm button and an approval record.

    `announced`: its record is said in the channel (a confirmed change); else its public reply
    is the channel's record, said in the alert channel only when asked in a direct message.
    """

    @property
    def action(self) -> str: ...

    @property
    def params(self) -> type[P]: ...

    @property
    def announced(self) -> bool: ...

    def describe(self, params: P) -> Described: ...

    async def prepare(self, params: P, run: Run) -> Ask | Message | None:
        """At the command: `Ask` to show Confirm, a message to answer instead (nothing to do,
        refused), or None: nothing to ask, make it (once approved where that is needed)."""
        ...

    async def apply(self, params: P, run: Run) -> Done:
        """Make the change as the object now stands; what raises is recorded as its failure."""
        ...
