"""Confirm buttons: what was asked travels sealed in the button, for 5 minutes, used once."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.access import confirmations
from bot.core import errors

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
KEY = confirmations.derive_key("xoxb-secret")
PARAMS = {"kind": "ScaledJob", "namespace": "annia", "name": "annia-worker", "reason": "drain"}


def pending() -> confirmations.AskedChange:
    return confirmations.new_pending("pause", PARAMS, user_id="U1", channel_id="C1", now=T0)


def test_a_sealed_request_comes_back_exactly_as_asked() -> None:
    asked = pending()
    back = confirmations.unseal(confirmations.seal(asked, KEY), KEY, T0)
    assert back == asked
    assert (back.action, dict(back.params), back.requested_by, back.channel_id) == (
        "pause", PARAMS, "U1", "C1",
    )  # fmt: skip
    assert back.expires_at == T0 + timedelta(minutes=5)


def test_the_button_value_is_compact_json_and_a_32_character_signature() -> None:
    payload, _, signature = confirmations.seal(pending(), KEY).rpartition(".")
    assert len(signature) == 32 and int(signature, 16) >= 0
    body = base64.urlsafe_b64decode(payload)
    assert b", " not in body and b": " not in body  # every byte counts in a button's value


def test_each_request_has_its_own_nonce_and_once_key() -> None:
    first, second = pending(), pending()
    assert first.nonce != second.nonce and len(first.nonce) == 16
    assert confirmations.once_key(first) == f"confirm-{first.nonce}"


@pytest.mark.parametrize(
    "forge",
    [
        lambda sealed: sealed.rpartition(".")[0] + ".0" * 16,
        lambda sealed: sealed.rpartition(".")[0],
        lambda sealed: "." + sealed.rpartition(".")[2],
        lambda sealed: confirmations.seal(pending(), confirmations.derive_key("other")),
    ],
    ids=["wrong signature", "no signature", "no payload", "another key"],
)
def test_a_value_we_did_not_sign_is_refused(forge: object) -> None:
    forged = forge(confirmations.seal(pending(), KEY))  # type: ignore[operator]
    with pytest.raises(errors.UserError) as refused:
        confirmations.unseal(forged, KEY, T0)
    assert str(refused.value) == "This confirmation is not valid; nothing was changed."


def test_an_edited_payload_keeps_no_signature() -> None:
    payload, _, signature = confirmations.seal(pending(), KEY).rpartition(".")
    body = json.loads(base64.urlsafe_b64decode(payload))
    body["u"] = "U0ATTACKER"
    edited = base64.urlsafe_b64encode(json.dumps(body).encode()).decode()
    with pytest.raises(errors.UserError, match="not valid"):
        confirmations.unseal(f"{edited}.{signature}", KEY, T0)


def test_an_expired_confirmation_says_so_and_how_long_they_last() -> None:
    sealed = confirmations.seal(pending(), KEY)
    with pytest.raises(errors.UserError) as expired:
        confirmations.unseal(sealed, KEY, T0 + timedelta(minutes=5))
    assert str(expired.value) == (
        "This confirmation has expired (they last 5 minutes); nothing was changed. "
        "Run the command again."
    )


def test_the_key_is_derived_per_secret_and_stable() -> None:
    assert confirmations.derive_key("xoxb-secret") == KEY
    assert confirmations.derive_key("xoxb-other") != KEY
    assert len(KEY) == 32
