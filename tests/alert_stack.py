"""The alert test bed with faults: a stack on a moved clock, short Slack timeouts, no backoff
waits, Lease holders logged per post, and the steps a test or the soak takes.

Checks are run by calling the job (`jobs_alerts.check_cluster`) with the service's own deps; the
scheduler's interval is an hour, so it never runs a check behind a test's back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from alert_invariants import HolderLog, Verdict, check_channel, kept_messages, payload
from clocks import Clock

from bot.service import jobs_alerts
from bot.service.server import Service
from testbed.sim import Simulator, breakage
from testbed.slackemu import Hold, PostedMessage, metadata_by
from testbed.slackemu.records import Fault
from testbed.stack import ALERT_CHANNEL, CLUSTER, Stack, running_stack

HOLD = 60
SLACK_TIMEOUT = 0.3  # the service's Slack client timeout: a late answer costs this much
LEASE = ("coordination.k8s.io/v1", "Lease", "kai-chatops-alerts", "kai-chatops")
# Two replicas sharing the ConfigMap state and a 15 s Lease; API calls that fail fast (no retry)
SHARED_15S = {"state": {"backend": "configmap"}, "lease": {"duration": "15s"}}
FAST_FAILING = {"kubernetes": {"request_timeout": "2s", "retries": 0}}


class Gate(asyncio.Event):
    """Holds a Slack call on its way (emulator fault `delay_before`) until the test sets it;
    `arrived` is set once a call is held."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = asyncio.Event()

    async def wait(self) -> bool:  # type: ignore[override]
        self.arrived.set()
        return await super().wait()


def overrides(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {
        "alerts": {"hold": f"{HOLD}s", "interval": "1h", "repeat": "4h"},
        "state": {"path": str(tmp_path / "state.sqlite")},
        **extra,
    }


@asynccontextmanager
async def alert_stack(
    tmp_path: Path, clock: Clock, **extra: Any
) -> AsyncIterator[tuple[Stack, HolderLog]]:
    """A stack for fault tests, and the log of who held the Lease at every post."""
    async with running_stack(
        tmp_path,
        clock=clock,
        monotonic=clock.monotonic,
        config_overrides=overrides(tmp_path, **extra),
        slack_timeout=SLACK_TIMEOUT,
        slack_backoffs=(0.0, 0.0, 0.0),
    ) as stack:
        holders = HolderLog(lambda: lease_holder(stack.sim))
        stack.slack.observers.append(holders)
        yield stack, holders


@asynccontextmanager
async def two_replicas(stack: Stack) -> AsyncIterator[tuple[Service, Service]]:
    """The stack's service and a second replica sharing its state, both having tried the Lease
    (the first got it). Their schedulers are stopped: the test runs the Lease and check jobs
    itself on its own clock, and a renewal in real time behind its back would change holders."""
    first, second = stack.service, stack.make_service()
    await second.start()
    try:
        for replica in (first, second):
            await replica.schedule.stop()
        await renew(first, second)
        yield first, second
    finally:
        await second.stop()


async def take_over(stack: Stack, clock: Clock, new: Service, lease_seconds: float = 15) -> None:
    """`new` takes the Lease from a holder that stopped renewing (it saw the record unchanged
    for longer than the Lease lasts); the clocks move `lease_seconds + 2`.

    Raises:
        AssertionError: `new` does not hold the Lease after all.
    """
    clock.advance(1)
    await renew(new)
    clock.advance(lease_seconds + 1)
    await renew(new)
    assert lease_holder(stack.sim) == identity(new), "the Lease did not move"


def hold_posts_of(stack: Stack, service: Service) -> Hold:
    """Every post `service` makes is held on the wire (its client gives up) until released."""
    return stack.slack.hold_calls(
        lambda method, params: (
            method == "chat.postMessage" and metadata_by(params) == identity(service)
        )
    )


def identity(service: Service) -> str:
    """The replica's Lease identity (what its messages' metadata names as `by`)."""
    assert service.deps.lease is not None, "the Lease is off"
    return service.deps.lease.identity


# How the thread's second reply begins (bot/timeline/render.py `before_alert_message`).
CHANGES_REPLY = "What changed on "


def thread(stack: Stack, root: PostedMessage) -> list[PostedMessage]:
    return stack.slack.thread(ALERT_CHANNEL, root.ts)


def evidence_and_rest(
    stack: Stack, root: PostedMessage
) -> tuple[PostedMessage, list[PostedMessage]]:
    """The root's diagnosis, and the replies after its second, what changed in the hour before
    (checked to be there)."""
    diagnosis, changes, *rest = thread(stack, root)
    assert changes.text.startswith(CHANGES_REPLY), changes.text
    return diagnosis, rest


def words(message: PostedMessage) -> str:
    """Everything a reader sees: fallback text, blocks' texts and context elements."""
    parts = [message.text]
    for block in message.blocks:
        if isinstance(block.get("text"), dict):
            parts.append(block["text"]["text"])
        parts += [e["text"] for e in block.get("elements") or [] if isinstance(e.get("text"), str)]
    return "\n".join(parts)


def lease_holder(sim: Simulator) -> str | None:
    lease = sim.get(*LEASE)
    return None if lease is None else (lease.get("spec") or {}).get("holderIdentity")


async def kept(service: Service) -> set[str]:
    """The ts of every message `service`'s alert state keeps."""
    return kept_messages((await service.deps.alerts.list_alerts(CLUSTER))[0])


async def check(service: Service) -> None:
    await jobs_alerts.check_cluster(service.deps, CLUSTER)


async def renew(*services: Service) -> None:
    for service in services:
        await jobs_alerts.keep_lease(service.deps)


def roots(stack: Stack) -> list[PostedMessage]:
    return [m for m in stack.slack.root_messages(ALERT_CHANNEL) if m.text.startswith("[")]


def alert_id(root: PostedMessage) -> str:
    """The alert ID a root's buttons carry (`ack:<id>` style values)."""
    return str(root.blocks[-1]["elements"][0]["value"]).split(":")[1]


def notes_in_thread(stack: Stack, root: PostedMessage) -> list[str]:
    """What each reply in the root's thread says, by its metadata note (`diagnosis`,
    `acknowledged`, `resolved`, ...); replies without one are left out."""
    notes = (payload(m).get("note") for m in stack.slack.thread(ALERT_CHANNEL, root.ts))
    return [str(n) for n in notes if n]


class Outage:
    """An emulator fault rule: the named Slack methods answer 503 while `on`."""

    def __init__(self, *methods: str) -> None:
        self.methods = methods
        self.on = True
        self.failed = 0

    def __call__(self, method: str) -> Fault | None:
        if not self.on or method not in self.methods:
            return None
        self.failed += 1
        return Fault(503, 0, "service_unavailable")


def live_roots(stack: Stack) -> list[PostedMessage]:
    """Alert roots that still show buttons (a page someone could act on)."""
    return [m for m in roots(stack) if any(b.get("type") == "actions" for b in m.blocks)]


def thread_texts(stack: Stack, root: PostedMessage) -> list[str]:
    """The replies in the root's thread after the evidence: the first two, checked to be the
    diagnosis and what changed in the hour before (every alert but "cannot check cluster" has
    a component to look at)."""
    texts = [m.text for m in stack.slack.thread(ALERT_CHANNEL, root.ts)]
    if "Cannot check cluster" in root.text:
        return texts
    assert texts and texts[0].startswith(("Diagnosis of ", "Could not diagnose ")), texts
    assert len(texts) > 1 and texts[1].startswith(CHANGES_REPLY), texts
    return texts[2:]


async def fire(
    stack: Stack,
    clock: Clock,
    service: Service | None = None,
    *,
    breaking: Callable[[Simulator], None] = breakage.dependencies_missing,
) -> None:
    """Break the cluster (DependenciesFulfilled) and check until the hold has passed."""
    service = service or stack.service
    breaking(stack.sim)
    await check(service)
    clock.advance(HOLD)
    await check(service)


async def resolve(stack: Stack, clock: Clock, service: Service | None = None) -> None:
    service = service or stack.service
    breakage.heal(stack.sim)
    await check(service)
    clock.advance(HOLD)
    await check(service)


def verdict(
    stack: Stack, holders: HolderLog | None = None, kept: Collection[str] = frozenset()
) -> Verdict:
    return check_channel(stack.slack, ALERT_CHANNEL, holders=holders, kept=kept)


def assert_one_clean_incident(
    stack: Stack, holders: HolderLog | None = None, kept: Collection[str] = frozenset()
) -> None:
    """The channel holds exactly one incident, with one root, and every invariant holds
    (`kept`: what the state keeps, for a late copy the holder adopted)."""
    found = verdict(stack, holders, kept)
    assert found.ok and found.incidents == 1 and len(roots(stack)) == 1, found.problems
