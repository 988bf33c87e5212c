"""Slack's signatures, replays and response_urls, decided before anything runs (docs/design.md
§2)."""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime

import pytest

from bot.access import once
from bot.access.once import MemoryOnce, OnceUnavailable
from bot.service import signing

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
NOW = 1_700_000_000.0
BODY = b"token=x&command=%2Fkai&text=health"


def sign(timestamp: str, body: bytes = BODY, secret: str = SECRET) -> str:
    base = f"v0:{timestamp}:".encode() + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@pytest.mark.parametrize("offset", [-300, 0, 300], ids=["5 minutes old", "now", "5 min ahead"])
def test_a_request_signed_within_five_minutes_is_verified(offset: int) -> None:
    timestamp = str(int(NOW) + offset)
    assert signing.is_verified(SECRET, BODY, timestamp, sign(timestamp), NOW)


@pytest.mark.parametrize(
    ("timestamp", "signature"),
    [
        (None, sign(str(int(NOW)))),
        (str(int(NOW)), None),
        ("not-a-number", sign("not-a-number")),
        ("١٧٠٠٠٠٠٠٠٠", sign("١٧٠٠٠٠٠٠٠٠")),
        ("1700000000.5", sign("1700000000.5")),
        ("-1", sign("-1")),
        ("1" * 13, sign("1" * 13)),
        (str(int(NOW) - 301), sign(str(int(NOW) - 301))),
        (str(int(NOW) + 301), sign(str(int(NOW) + 301))),
        (str(int(NOW)), sign(str(int(NOW)), secret="another-secret")),
        (str(int(NOW)), sign(str(int(NOW)), body=b"text=pause")),
        (str(int(NOW)), sign(str(int(NOW))).upper().replace("V0=", "v0=")),
        (str(int(NOW)), "v1=" + sign(str(int(NOW)))[3:]),
        (str(int(NOW)), sign(str(int(NOW))) + "0"),
    ],
    ids=[
        "no timestamp", "no signature", "timestamp not a number", "other digits",
        "fractional", "negative", "too many digits", "stale", "too far ahead", "other secret",
        "other body", "upper-case hex", "v1", "longer signature",
    ],
)  # fmt: skip
def test_anything_else_is_not_verified_and_nothing_raises(
    timestamp: str | None, signature: str | None
) -> None:
    assert not signing.is_verified(SECRET, BODY, timestamp, signature, NOW)


def test_an_empty_secret_verifies_nothing() -> None:
    timestamp = str(int(NOW))
    assert not signing.is_verified("", BODY, timestamp, sign(timestamp, secret=""), NOW)


async def test_a_request_is_first_once_on_every_replica_sharing_the_memory() -> None:
    shared = MemoryOnce()
    here, there = signing.SeenRequests(shared), signing.SeenRequests(shared)
    signature = sign(str(int(NOW)))
    assert await here.is_first(signature, str(int(NOW)), NOW)
    assert not await here.is_first(signature, str(int(NOW)), NOW + 1)
    assert not await there.is_first(signature, str(int(NOW)), NOW + 1)
    assert await there.is_first(sign(str(int(NOW) - 1)), str(int(NOW) - 1), NOW)


async def test_a_request_is_remembered_until_its_timestamp_can_no_longer_verify() -> None:
    seen = signing.SeenRequests(MemoryOnce())
    timestamp = str(int(NOW))
    assert await seen.is_first(sign(timestamp), timestamp, NOW)
    assert not await seen.is_first(sign(timestamp), timestamp, NOW + 359)


class Recording:
    def __init__(self) -> None:
        self.claims: list[tuple[str, datetime, datetime]] = []

    async def claim(self, key: str, until: datetime, now: datetime) -> bool:
        self.claims.append((key, until, now))
        return True

    def close(self) -> None:
        pass


async def test_a_request_is_remembered_by_its_signature_for_the_window_and_a_minute() -> None:
    shared = Recording()
    timestamp = str(int(NOW))
    signature = sign(timestamp)
    assert await signing.SeenRequests(shared).is_first(signature, timestamp, NOW + 2)
    assert shared.claims == [
        (
            "req-" + signature.removeprefix("v0="),
            datetime.fromtimestamp(NOW + 360, UTC),
            datetime.fromtimestamp(NOW + 2, UTC),
        )
    ]


class Unreachable:
    async def claim(self, key: str, until: datetime, now: datetime) -> bool:
        raise OnceUnavailable("request memory ConfigMap: the API server answered 503")

    def close(self) -> None:
        pass


async def test_while_the_shared_memory_is_unreachable_a_first_request_is_unknown_and_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen = signing.SeenRequests(Unreachable())
    signature = sign(str(int(NOW)))
    with pytest.raises(OnceUnavailable):  # whether another replica had it cannot be known
        await seen.is_first(signature, str(int(NOW)), NOW)
    assert not await seen.is_first(signature, str(int(NOW)), NOW)  # this replica remembers
    assert caplog.messages == [
        "replays to other replicas cannot be ruled out just now (changes are refused, reads "
        "run): request memory ConfigMap: the API server answered 503"
    ]


def test_response_urls_must_be_slacks_or_the_configured_apis_origin() -> None:
    assert signing.allowed_hooks(None) == ("https://hooks.slack.com/",)
    hooks = signing.allowed_hooks("http://127.0.0.1:4000/api/")
    assert hooks == ("https://hooks.slack.com/", "http://127.0.0.1:4000/")
    assert signing.is_allowed_hook("https://hooks.slack.com/commands/T1/2/x", hooks)
    assert signing.is_allowed_hook("http://127.0.0.1:4000/hooks/abc", hooks)
    for foreign in (
        "https://hooks.slack.com.evil.example/x",
        "http://hooks.slack.com/commands/x",
        "http://127.0.0.1:4001/hooks/abc",
        "https://evil.example/https://hooks.slack.com/",
    ):
        assert not signing.is_allowed_hook(foreign, hooks), foreign


def test_every_response_url_of_a_payload_is_checked() -> None:
    body = {
        "response_url": "https://hooks.slack.com/a",
        "response_urls": [{"response_url": "https://evil.example/b"}, {}],
    }
    assert signing.response_urls(body) == ["https://hooks.slack.com/a", "https://evil.example/b"]
    assert signing.response_urls({}) == []


def test_a_payload_naming_a_foreign_response_url_is_refused_and_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    allowed = signing.allowed_hooks(None)
    ours = {"response_url": "https://hooks.slack.com/commands/T/1/x"}
    foreign = {**ours, "response_urls": [{"response_url": "https://evil.example/x"}]}
    assert not signing.names_foreign_hook(ours, allowed)
    assert caplog.messages == []
    assert signing.names_foreign_hook(foreign, allowed)
    assert caplog.messages == ["refused a Slack payload whose response_url is not Slack's"]


async def test_a_requests_claim_is_there_for_its_work_until_the_request_ends() -> None:
    shared = Recording()
    seen = signing.SeenRequests(shared)
    signature = sign(str(int(NOW)))
    assert seen.claim_of(signature) is None and seen.claim_of(None) is None
    assert await seen.begin(signature, str(int(NOW)), NOW)
    claim = seen.claim_of(signature)
    assert claim is not None and await claim and shared.claims  # made when awaited, once
    seen.end(signature)
    assert seen.claim_of(signature) is None
    seen.end(signature)  # ending twice is harmless


def test_the_request_memory_counts_its_bytes_as_compact_json() -> None:
    assert once.stored_bytes({}) == len("{}")
    assert once.stored_bytes({"req-a": "1.5", "req-b": "2.0"}) == len(
        '{"req-a":"1.5","req-b":"2.0"}'
    )
