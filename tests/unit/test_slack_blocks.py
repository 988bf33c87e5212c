"""The one place every message passes through: escaping, the bot's own mentions, the shapes."""

from __future__ import annotations

import re

import pytest

from bot.core import errors
from bot.core.rich import rich_text
from bot.slack import blocks


def test_escape_shows_text_exactly_and_cannot_end_a_code_block() -> None:
    assert blocks.escape("a & b <c> &amp;") == "a &amp; b &lt;c&gt; &amp;amp;"
    assert blocks.escape("x ``` y") == "x ``\u200b` y"
    assert blocks.escape("`one` ``two``") == "`one` ``two``"


@pytest.mark.parametrize(
    ("entry", "shown"),
    [
        ("U0123ABC", "<@U0123ABC>"),
        ("W0123ABC", "<@W0123ABC>"),
        ("S0ONCALL", "<!subteam^S0ONCALL>"),
        ("@platform-oncall", "@platform-oncall"),
        ("u0lower", "u0lower"),
        ("U", "U"),
        ("U0<!channel>", "U0&lt;!channel&gt;"),
        ("!channel", "!channel"),
    ],
)
def test_only_user_and_group_ids_become_mentions(entry: str, shown: str) -> None:
    text = rich_text("by ", blocks.mention(entry))
    assert blocks.text_message(text)["text"] == f"by {shown}"


def test_neutralise_escapes_what_is_not_escaped_and_keeps_what_is() -> None:
    text = rich_text("<!here> &lt;ok&gt; & &amp; ", blocks.mention("U0OP"))
    once = blocks.neutralise(text)
    assert once == "&lt;!here&gt; &lt;ok&gt; &amp; &amp; <@U0OP>"
    assert blocks.neutralise(blocks.neutralise("<!here> & x")) == blocks.neutralise("<!here> & x")


FORGERIES = [
    "<@U0EVIL>",
    "<!channel>",
    "<!subteam^S0EVIL>",
    "<https://evil.example|Re-authenticate>",
    "\x02abcdef012345:@U0EVIL\x03",
    "\x02:!channel\x03",
    "&lt;@U0EVIL&gt;",
]


@pytest.mark.parametrize("forged", FORGERIES)
def test_text_imitating_a_mention_or_a_marker_stays_text_in_blocks_and_fallback(
    forged: str,
) -> None:
    text = rich_text(forged, " asked by ", blocks.mention("U0OP"), " ", forged)
    message = blocks.text_message(text, mrkdwn=rich_text(":warning: ", text))
    for shown in (message["text"], message["blocks"][0]["text"]["text"]):
        assert [m for m in re.findall(r"<[^>]*>", shown)] == ["<@U0OP>"], shown
        assert "\x02" not in shown and "\x03" not in shown


def test_no_string_holds_a_mention_before_the_last_step() -> None:
    text = rich_text("by ", blocks.mention("U0OP"))
    assert str(text) == "by @U0OP"  # what an error note or a log line gets: plain, no marker
    with pytest.raises(TypeError):
        format(text)  # an f-string would drop the mention: refused, not lost
    error = errors.UserError(rich_text("taken by ", blocks.mention("U0OP")))
    assert str(error) == "taken by @U0OP"
    shown = blocks.error_message(error)
    assert shown["text"] == "taken by <@U0OP>"
    assert shown["blocks"][0]["text"]["text"] == ":warning: taken by <@U0OP>"


def test_invisible_and_reordering_characters_are_removed_from_shown_text() -> None:
    hidden = "a\u202eb\u2066c\u200bd\u200ce\u200df\u2060g\ufeffh\u200ei\u200fj\u061ck\x07l"
    assert blocks.escape(hidden) == "abcdefghijkl"
    # The safety net keeps U+200B, with which `escape` breaks a code fence; the rest goes.
    assert blocks.text_message(hidden)["text"] == "abc\u200bdefghijkl"
    for title in (hidden, rich_text(hidden, blocks.mention("U0OP"))):
        header = blocks.fit_message({"text": "", "blocks": [blocks.header(title)]})["blocks"][0]
        assert header["text"]["text"].startswith("abc\u200bdefghijkl")


def test_every_mrkdwn_text_is_escaped_and_plain_text_shows_ids_without_markup() -> None:
    who = blocks.mention("U0OP")
    message = blocks.fit_message(
        {
            "text": rich_text("<!channel> ", who),
            "blocks": [
                blocks.header(rich_text("header ", who, " <b>")),
                blocks.section(rich_text("<https://x|y> ", who)),
                blocks.context(rich_text("<!here> ", who)),
                {"type": "section", "fields": [{"type": "mrkdwn", "text": "<@U0EVIL>"}]},
                {"type": "actions", "elements": [blocks.button("Go", "a", "<value>")]},
            ],
        }
    )
    assert message["text"] == "&lt;!channel&gt; <@U0OP>"
    header, section, context, fields, actions = message["blocks"]
    assert header["text"]["text"] == "header U0OP <b>"
    assert section["text"]["text"] == "&lt;https://x|y&gt; <@U0OP>"
    assert context["elements"][0]["text"] == "&lt;!here&gt; <@U0OP>"
    assert fields["fields"][0]["text"] == "&lt;@U0EVIL&gt;"
    assert actions["elements"][0]["value"] == "<value>"
    assert actions["elements"][0]["text"]["text"] == "Go"


def test_a_group_mention_in_plain_text_is_its_id() -> None:
    message = blocks.fit_message({"text": "", "blocks": [blocks.header(blocks.mention("S0X"))]})
    assert message["blocks"][0]["text"]["text"] == "S0X"


def test_a_long_text_with_mentions_is_cut_keeping_each_mention_whole() -> None:
    text = rich_text("x" * 50, blocks.mention("U0OPERATOR"), "y" * 50)
    assert blocks.neutralise(blocks.truncate(text, 60)) == "x" * 47 + blocks.TRUNCATED
    assert blocks.neutralise(blocks.truncate(text, 80)) == (
        "x" * 50 + "<@U0OPERATOR>" + "y" * 4 + blocks.TRUNCATED
    )


def test_the_messages_every_feature_uses_have_their_shapes() -> None:
    assert blocks.text_message("hi") == {
        "text": "hi", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}],
    }  # fmt: skip
    assert blocks.text_message("a", mrkdwn="*a*")["blocks"][0]["text"]["text"] == "*a*"
    assert blocks.help_message("use <x>")["blocks"][0]["text"]["text"] == "```use &lt;x&gt;```"
    error = blocks.error_message(ValueError("bad <x>"))
    assert (error["text"], error["blocks"][0]["text"]["text"]) == (
        "bad &lt;x&gt;", ":warning: bad &lt;x&gt;",
    )  # fmt: skip
    usage = blocks.usage_message("wrong", "/kai pause NS/NAME")
    assert usage["text"] == "wrong\n/kai pause NS/NAME"
    assert usage["blocks"][0]["text"]["text"] == ":warning: wrong\n```/kai pause NS/NAME```"


def test_a_confirmation_offers_confirm_and_cancel_carrying_the_sealed_request() -> None:
    message = blocks.confirmation_message("Pause x?", ["line <1>", "line 2"], "sealed")
    section, actions, note = message["blocks"]
    assert message["text"] == "Pause x?: confirm or cancel"
    assert section["text"]["text"] == "*Pause x?*\nline &lt;1&gt;\nline 2"
    assert actions["block_id"] == "kai_confirmation"
    confirm, cancel = actions["elements"]
    assert (confirm["text"]["text"], confirm["action_id"], confirm["value"]) == (
        "Confirm", blocks.CONFIRM_ACTION, "sealed",
    )  # fmt: skip
    assert confirm["style"] == "primary" and "style" not in cancel
    assert (cancel["text"]["text"], cancel["action_id"], cancel["value"]) == (
        "Cancel", blocks.CANCEL_ACTION, "sealed",
    )  # fmt: skip
    assert note["elements"][0]["text"] == "Expires in 5 minutes."


def test_truncation_keeps_limits_says_so_and_closes_code_blocks() -> None:
    assert blocks.truncate("abc", 3) == "abc"
    cut = blocks.truncate("x" * 100, 50)
    assert len(cut) == 50 and cut.endswith(blocks.TRUNCATED)
    assert blocks.truncate_mrkdwn("abc", 3) == "abc"
    code = blocks.truncate_mrkdwn("```" + "y" * 100 + "```", 60)
    assert len(code) <= 60 and code.endswith("```") and code.count("```") == 2


def test_fifty_blocks_fit_and_more_are_cut_to_fifty_saying_how_many_are_hidden() -> None:
    fifty = blocks.fit_message({"text": "t", "blocks": [blocks.section("x")] * 50})
    assert len(fifty["blocks"]) == 50 and fifty["blocks"][-1] == blocks.section("x")
    cut = blocks.fit_message({"text": "t", "blocks": [blocks.section("x")] * 52})
    assert len(cut["blocks"]) == 50
    assert cut["blocks"][-1] == blocks.context(
        "… 3 more not shown here (Slack shows at most 50 blocks)."
    )


def test_a_message_without_text_or_blocks_is_still_a_message() -> None:
    assert blocks.fit_message({}) == {"text": "", "blocks": []}


def test_a_long_header_is_cut_within_slacks_limit_and_other_elements_pass() -> None:
    image = {"type": "image", "image_url": "https://x/y.png", "alt_text": "y"}
    message = blocks.fit_message(
        {"text": "", "blocks": [blocks.header("h" * 200), {"type": "context", "elements": [image]}]}
    )
    header, context = message["blocks"]
    assert header == {
        "type": "header",
        "text": {"type": "plain_text", "text": header["text"]["text"]},
    }
    assert len(header["text"]["text"]) == 150 and header["text"]["text"].endswith(blocks.TRUNCATED)
    assert context == {"type": "context", "elements": [image]}


def test_help_is_the_text_and_a_code_block() -> None:
    assert blocks.help_message("/kai help")["text"] == "/kai help"


def test_the_confirmation_buttons_are_exactly_what_slack_expects() -> None:
    _, actions, _ = blocks.confirmation_message("t", [], "v")["blocks"]
    assert actions == {
        "type": "actions",
        "block_id": "kai_confirmation",
        "elements": [
            {
                "type": "button",
                "text": {"type": "plain_text", "text": "Confirm"},
                "action_id": blocks.CONFIRM_ACTION,
                "value": "v",
                "style": "primary",
            },
            {
                "type": "button",
                "text": {"type": "plain_text", "text": "Cancel"},
                "action_id": blocks.CANCEL_ACTION,
                "value": "v",
            },
        ],
    }


def test_a_cut_mrkdwn_text_is_exactly_at_the_limit_closing_only_an_open_code_block() -> None:
    plain = blocks.truncate_mrkdwn("x" * 100, 60)
    assert len(plain) == 57 and plain.endswith(blocks.TRUNCATED) and "```" not in plain
    closed = blocks.truncate_mrkdwn("```a``` " + "x" * 100, 60)
    assert len(closed) == 57 and closed.count("```") == 2
    code = blocks.truncate_mrkdwn("```" + "y" * 100, 60)
    assert len(code) == 60 and code.endswith(blocks.TRUNCATED + "```")
