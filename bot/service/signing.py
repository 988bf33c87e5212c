"""Slack's request signatures, replays and response_urls, checked before Bolt acts (docs/design.md
§2).

HTTP mode: a request that cannot be verified, for any reason (missing, malformed or stale
headers, a wrong signature), is answered 401 here and nothing else happens: Bolt never sees it,
so no listener, no error handler and no response_url post can follow. A verified request seen
before (same signature, i.e. same timestamp and body) inside Slack's 5-minute window runs nothing,
on any replica (`bot.access.once`): this replica's memory answers at once (200, Bolt never sees
it); the shared memory is asked while the ack leaves, and the work after the ack waits for its
answer (`InFlight.spawn(..., first_time=...)`), so a claim in a ConfigMap never slows an ack.
Both modes: a response_url that is not Slack's is refused, so the bot never posts where a
payload tells it to.
See https://api.slack.com/authentication/verifying-requests-from-slack.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from slack_sdk.signature import Clock, SignatureVerifier

from bot.access.once import MemoryOnce, OnceStore, OnceUnavailable

log = logging.getLogger(__name__)

WINDOW_SECONDS = 300  # Slack's: a timestamp further than this from now is refused
SLACK_HOOKS = "https://hooks.slack.com/"
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")


class _FixedClock(Clock):
    """slack_sdk's clock, at the instant the request is checked."""

    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now


def is_verified(
    secret: str, body: bytes, timestamp: str | None, signature: str | None, now: float
) -> bool:
    """Whether Slack signed `body` with `secret` at `timestamp`, within 5 minutes of `now`.

    Header values are checked for shape before any arithmetic, and every failure is False:
    verification never raises.
    """
    if timestamp is None or signature is None:
        return False
    if not _TIMESTAMP.fullmatch(timestamp) or not _SIGNATURE.fullmatch(signature):
        return False
    try:
        verifier = SignatureVerifier(secret, clock=_FixedClock(now))
        return verifier.is_valid(body, timestamp, signature)
    except Exception:  # whatever the verifier trips on, the request is not verified
        return False


class SeenRequests:
    """Verified requests already handled, remembered for the window on every replica.

    This replica's own memory is asked first, so a replay to it is caught even while the shared
    memory cannot be reached; then whether another replica handled it is unknown, and the claim
    raises OnceUnavailable: the work after the ack refuses a change and runs a read
    (`InFlight.spawn`, docs/design.md §2 "Safety").
    """

    def __init__(self, shared: OnceStore) -> None:
        self._local = MemoryOnce()
        self._shared = shared
        self._claims: dict[str, _Claim] = {}  # by signature, while Bolt handles the request

    async def begin(self, signature: str, timestamp: str, now: float) -> bool:
        """False when this replica has seen the request; else True, and its claim in the shared
        memory is ready for the work after the ack to wait on (`claim_of`): it is made only then,
        so the store is never written while an ack is on its way, nor for a request that runs
        nothing after its ack (a usage text, the help)."""
        key = "req-" + signature.removeprefix("v0=")
        until = _at(int(timestamp) + WINDOW_SECONDS + 60)  # a minute more for clock skew
        if not await self._local.claim(key, until, _at(now)):
            return False
        self._claims[signature] = _Claim(lambda: self._claim_shared(key, until, now))
        return True

    def claim_of(self, signature: str | None) -> Awaitable[bool] | None:
        """Whether the request is the first on every replica, once the shared memory answers
        (raises OnceUnavailable when it cannot)."""
        return self._claims.get(signature or "")

    def end(self, signature: str) -> None:
        """The request is handled: its claim belongs to the work it started, if any."""
        self._claims.pop(signature, None)

    async def is_first(self, signature: str, timestamp: str, now: float) -> bool:
        """`begin`, then the shared memory's answer."""
        if not await self.begin(signature, timestamp, now):
            return False
        claim = self._claims.pop(signature)
        return await claim

    async def _claim_shared(self, key: str, until: datetime, now: float) -> bool:
        try:
            return await self._shared.claim(key, until, _at(now))
        except OnceUnavailable as e:
            log.warning(
                "replays to other replicas cannot be ruled out just now (changes are refused, "
                "reads run): %s",
                e,
            )
            raise


class _Claim:
    """A claim in the shared memory, made when it is first awaited (and only once)."""

    def __init__(self, make: Callable[[], Coroutine[Any, Any, bool]]) -> None:
        self._make = make
        self._task: asyncio.Task[bool] | None = None

    def __await__(self) -> Generator[Any, None, bool]:
        if self._task is None:
            self._task = asyncio.ensure_future(self._make())
        return self._task.__await__()


def allowed_hooks(api_url: str | None) -> tuple[str, ...]:
    """Where response_urls may point: Slack's hooks, and the origin of `SLACK_API_URL` when one
    is set (the local emulator in tests and the demo serves its response_urls there)."""
    if not api_url:
        return (SLACK_HOOKS,)
    parts = urlsplit(api_url)
    return (SLACK_HOOKS, f"{parts.scheme}://{parts.netloc}/")


def response_urls(body: Mapping[str, Any]) -> list[str]:
    """Every response_url a Slack payload carries (commands, actions, view submissions)."""
    urls = [body.get("response_url")]
    urls += [item.get("response_url") for item in body.get("response_urls") or [] if item]
    return [str(url) for url in urls if url]


def names_foreign_hook(body: Mapping[str, Any], allowed: Iterable[str]) -> bool:
    """Whether a payload names a response_url that is not Slack's (said in the log): it is then
    refused before anything runs, so the bot never posts where a payload tells it to."""
    if all(is_allowed_hook(url, allowed) for url in response_urls(body)):
        return False
    log.warning("refused a Slack payload whose response_url is not Slack's")
    return True


def is_allowed_hook(url: str, allowed: Iterable[str]) -> bool:
    """Whether `url` starts with one of the allowed prefixes (each ends with `/`, so the host
    cannot be extended: `https://hooks.slack.com.evil/` does not match)."""
    return any(url.startswith(prefix) for prefix in allowed)


def _at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)
