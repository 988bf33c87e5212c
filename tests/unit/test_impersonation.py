"""Whom a change is sent as (`access.impersonate`), its headers, and the simulator's reading of
them: pure tables."""

from __future__ import annotations

import base64

import pytest

from bot.access.identity import impersonation, resolve
from bot.core import errors
from bot.kube.identity import Impersonation, is_sendable, token_subject
from bot.slack.gateway import Email, SlackUnavailable
from testbed.sim.impersonation import Acting, read_headers

ALICE = Email("alice@example.com", scope_missing=False)


@pytest.mark.parametrize(
    ("mode", "email", "handles", "expected"),
    [
        ("none", ALICE, ["oncall"], None),
        ("id", None, [], Impersonation("slack:U1", (), "U1")),
        ("id", None, ["b", "a", "a"], Impersonation("slack:U1", ("slack:a", "slack:b"), "U1")),
        ("email", ALICE, ["oncall"], Impersonation("alice@example.com", ("slack:oncall",), "U1")),
    ],
)
def test_the_identity_of_each_mode(
    mode: str, email: Email | None, handles: list[str], expected: Impersonation | None
) -> None:
    assert impersonation(mode, "U1", email, handles) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("email", "said"),
    [
        (Email("alice@example.com", scope_missing=True), "lacks the users:read.email scope"),
        (Email("", scope_missing=False), "Slack has no email for your account"),
        (None, "lacks the users:read.email scope"),
    ],
)
def test_email_mode_without_an_address_is_refused_never_the_bot(
    email: Email | None, said: str
) -> None:
    with pytest.raises(errors.NotAllowed) as refused:
        impersonation("email", "U1", email, ["oncall"])
    assert said in str(refused.value)
    assert "nothing was changed" in str(refused.value)


def test_the_headers_repeat_the_group_line_and_encode_the_extra_key() -> None:
    person = Impersonation("alice@example.com", ("slack:a,b", "slack:c"), "U1")
    assert person.headers() == [
        ("Impersonate-User", "alice@example.com"),
        ("Impersonate-Group", "slack:a,b"),
        ("Impersonate-Group", "slack:c"),
        ("Impersonate-Extra-kai-chatops%2Fslack-user", "U1"),
    ]
    assert read_headers(person.headers()) == Acting(
        "alice@example.com", ("slack:a,b", "slack:c"), {"kai-chatops/slack-user": ("U1",)}
    )


def test_a_request_without_impersonation_headers_is_the_bots_own() -> None:
    assert read_headers([("Authorization", "Bearer x"), ("Accept", "application/json")]) is None


def jwt(claims: str) -> str:
    encoded = base64.urlsafe_b64encode(claims.encode()).decode().rstrip("=")
    return f"Bearer eyJhbGciOiJSUzI1NiJ9.{encoded}.c2lnbmF0dXJl"


@pytest.mark.parametrize(
    ("bearer", "subject"),
    [
        (jwt('{"sub":"system:serviceaccount:kai-chatops:kai-chatops"}'),
         "system:serviceaccount:kai-chatops:kai-chatops"),
        (jwt('{"iss":"x"}'), ""),
        (jwt("not json"), ""),
        ("Bearer 0123456789abcdef", ""),
        ("", ""),
    ],
)  # fmt: skip
def test_the_bots_own_identity_is_its_service_account_tokens_subject(
    bearer: str, subject: str
) -> None:
    assert token_subject(bearer) == subject


@pytest.mark.parametrize(
    ("value", "sendable"),
    [
        ("alice@example.com", True),
        ("slack:on call", True),  # a space inside is carried
        ("slack:~!#$%&'*+/=?^_`{|}", True),
        ("", False),
        ("slack:équipe", False),  # Latin-1: sent as other bytes than client-go sends
        ("slack:チーム", False),  # not Latin-1: http.client cannot send it
        ("slack:on\r\ncall", False),
        ("slack:on\ncall", False),
        ("slack:on\tcall", False),
        ("slack:on\x00call", False),
        ("slack:on\x7fcall", False),
        (" slack:oncall", False),  # HTTP strips spaces at the ends
        ("slack:oncall ", False),
    ],
    ids=[
        "email",
        "inner-space",
        "punctuation",
        "empty",
        "latin-1",
        "beyond-latin-1",
        "crlf",
        "lf",
        "tab",
        "nul",
        "del",
        "leading-space",
        "trailing-space",
    ],
)
def test_a_header_value_is_sendable_only_as_printable_ascii_without_space_at_its_ends(
    value: str, sendable: bool
) -> None:
    assert is_sendable(value) is sendable


def test_the_first_unsendable_header_is_named_in_the_order_they_are_sent() -> None:
    fine = Impersonation("alice@example.com", ("slack:a",), "U1")
    assert fine.unsendable() is None
    both = Impersonation("jörg@example.com", ("slack:a", "slack:é"), "U1")
    assert both.unsendable() == ("Impersonate-User", "jörg@example.com")
    group = Impersonation("alice@example.com", ("slack:a", "slack:é", "slack:ü"), "U1")
    assert group.unsendable() == ("Impersonate-Group", "slack:é")
    extra = Impersonation("alice@example.com", (), "U\n1")
    assert extra.unsendable() == ("Impersonate-Extra-kai-chatops%2Fslack-user", "U\n1")


@pytest.mark.parametrize(
    ("mode", "email", "handles", "said"),
    [
        (
            "email",
            Email("jörg@example.com", scope_missing=False),
            ["oncall"],
            "but your Kubernetes user 'jörg@example.com' cannot be sent as a Kubernetes user: "
            "an impersonation header carries printable ASCII only, with no space at either "
            "end. Your email in Slack needs changing; nothing was changed.",
        ),
        (
            "id",
            None,
            ["oncall", "チーム"],
            "but your Slack user group 'チーム' cannot be sent as a Kubernetes group: an "
            "impersonation header carries printable ASCII only, with no space at either end. "
            "A workspace admin can rename its handle; nothing was changed.",
        ),
    ],
    ids=["email", "group"],
)
def test_a_value_no_header_can_carry_refuses_the_change_naming_it(
    mode: str, email: Email | None, handles: list[str], said: str
) -> None:
    with pytest.raises(errors.NotAllowed) as refused:
        impersonation(mode, "U1", email, handles)  # type: ignore[arg-type]

    assert str(refused.value) == (
        f"Changes here are made as you in Kubernetes (access.impersonate), {said}"
    )


# Issue 36 (make mutate): every word of a refusal, and the identity's accounts of itself.
def test_email_mode_refusals_say_in_full_why_and_what_to_do() -> None:
    said = {}
    for email in (Email("a@example.com", scope_missing=True), Email("", scope_missing=False)):
        with pytest.raises(errors.NotAllowed) as refused:
            impersonation("email", "U1", email, [])
        said[email.scope_missing] = str(refused.value)

    assert said[True] == (
        "Changes here are made as you in Kubernetes, by your email (access.impersonate: "
        "email), but this Slack app may not read emails: it lacks the users:read.email scope. "
        "Add it to the app and reinstall it; nothing was changed."
    )
    assert said[False] == (
        "Changes here are made as you in Kubernetes, by your email (access.impersonate: "
        "email), but Slack has no email for your account (a bot or a guest without one?); "
        "nothing was changed."
    )


def test_an_identity_says_whom_a_change_was_sent_as_and_by_whom() -> None:
    person = Impersonation("alice@example.com", ("slack:a", "slack:b"), "U1")

    assert person.describe() == "alice@example.com (groups slack:a, slack:b)"
    assert Impersonation("slack:U1", (), "U1").describe() == "slack:U1 (no groups)"
    assert person.audit_details("system:serviceaccount:x:y") == {
        "kubernetes_user": "alice@example.com",
        "kubernetes_groups": "slack:a,slack:b",
        "impersonated_by": "system:serviceaccount:x:y",
    }
    assert person.audit_details("")["impersonated_by"] == "kai-chatops (its own credentials)"


class People:
    """What Slack says of U1: an address, two groups; or that it cannot be asked."""

    def __init__(self, reachable: bool = True) -> None:
        self.reachable, self.asked = reachable, list[str]()

    async def email_of(self, user_id: str) -> Email:
        self.asked.append(f"email {user_id}")
        if not self.reachable:
            raise SlackUnavailable("Slack answered 503")
        return ALICE

    async def handles_of(self, user_id: str) -> tuple[str, ...]:
        self.asked.append(f"handles {user_id}")
        return ("oncall", "gpu")


async def test_resolve_asks_slack_what_the_mode_needs_and_nothing_for_none() -> None:
    people = People()
    assert await resolve("none", "U1", people) is None
    assert people.asked == []
    assert await resolve("id", "U1", people) == Impersonation(
        "slack:U1", ("slack:gpu", "slack:oncall"), "U1"
    )
    assert await resolve("email", "U1", people) == Impersonation(
        "alice@example.com", ("slack:gpu", "slack:oncall"), "U1"
    )
    assert people.asked == ["handles U1", "email U1", "handles U1"]


async def test_resolve_when_slack_cannot_be_asked_refuses_and_never_sends_as_the_bot() -> None:
    with pytest.raises(errors.UserError) as refused:
        await resolve("email", "U1", People(reachable=False))

    assert str(refused.value) == (
        "Cannot tell who you are in Kubernetes right now (Slack answered 503); nothing was "
        "changed. Try again in a moment."
    )


@pytest.mark.parametrize(
    ("bearer", "subject"),
    [
        ("bearer " + jwt('{"sub":"a"}').removeprefix("Bearer "), "a"),
        (jwt('{"sub":"a"}').removeprefix("Bearer "), "a"),
        (jwt('{"sub":"ab"}'), "ab"),  # a payload whose base64 needs one "=" of padding
        (jwt('{"sub":"abc"}'), "abc"),  # ... and two
        (jwt('["sub", "a"]'), ""),
        (jwt('{"sub": 7}'), ""),
    ],
    ids=["lowercase-scheme", "no-scheme", "padding-1", "padding-2", "not-an-object", "not-text"],
)
def test_a_tokens_subject_is_read_whatever_its_scheme_word_and_padding(
    bearer: str, subject: str
) -> None:
    assert token_subject(bearer) == subject
