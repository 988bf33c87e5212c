"""The fields a slash command's ack reads from its form body (bot/service/endpoint.py): decoded
exactly as the standard library's form parser decodes them, the rest left alone."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

import pytest

from bot.service.endpoint import ACK_FIELDS, form_fields

COMMAND = urlencode(
    {
        "token": "x",
        "team_id": "T0001",
        "channel_id": "C0123456789",
        "user_id": "U0OPERATOR",
        "command": "/kai",
        "text": "pause annia/annia-worker for 2h node drain & reboot 100% <@U1>",
        "response_url": "https://hooks.slack.com/commands/T0001/1234/abc+def",
        "trigger_id": "1234.5678.abcdef",
    }
)

BODIES = {
    "a command as Slack sends it": COMMAND,
    "plus signs and percent escapes": "command=%2Fkai&text=a+b%2Bc%20d&response_url=x",
    "a field given twice: the last wins": "text=first&command=%2Fkai&text=second",
    "blank values and a name without '='": "command=&text&ssl_check=1&response_url=",
    "empty pairs": "&&command=%2Fkai&&text=health&",
    "escaped names": "comm%61nd=%2Fkai&te%78t=health&response%5Furl=u&ssl+check=1",
    "invalid UTF-8 and a stray percent": "text=%FF%FE+%zz&command=%2",
    "nothing": "",
}


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_the_acks_fields_are_decoded_as_parse_qsl_decodes_them(body: str) -> None:
    everything = dict(parse_qsl(body, keep_blank_values=True))
    expected = {name: value for name, value in everything.items() if name in ACK_FIELDS}
    assert form_fields(body, ACK_FIELDS) == expected


def test_fields_the_ack_does_not_read_are_left_out() -> None:
    fields = form_fields(COMMAND, ACK_FIELDS)
    assert set(fields) == {"command", "text", "response_url"}
    assert fields["text"] == "pause annia/annia-worker for 2h node drain & reboot 100% <@U1>"
