"""Slack's message limits as named constants, and `check_message` that lists every violation.

Pure: no I/O imports, no clock. The renderer sizes its output with these constants; the local
Slack emulator rejects what `check_message` flags, the way Slack answers `invalid_blocks`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

MAX_BLOCKS = 50
MAX_MESSAGE_TEXT = 40_000
MAX_SECTION_TEXT = 3000
MAX_SECTION_FIELDS = 10
MAX_SECTION_FIELD_TEXT = 2000
MAX_HEADER_TEXT = 150
MAX_MARKDOWN_BLOCK_TEXT = 12_000
MAX_ACTIONS_ELEMENTS = 25
MAX_CONTEXT_ELEMENTS = 10
MAX_TEXT_OBJECT = 3000
MAX_BLOCK_ID = 255
MAX_ACTION_ID = 255
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_BUTTON_URL = 3000
MAX_CONFIRM_TITLE = 100
MAX_CONFIRM_TEXT = 300
MAX_CONFIRM_BUTTON_TEXT = 30
MAX_IMAGE_ALT_TEXT = 2000
MAX_IMAGE_URL = 3000

BUTTON_STYLES = frozenset({"primary", "danger"})
KNOWN_BLOCK_TYPES = frozenset(
    {
        "actions",
        "context",
        "divider",
        "file",
        "header",
        "image",
        "input",
        "markdown",
        "rich_text",
        "section",
        "video",
    }
)

Problems = list[str]


def check_message(payload: Mapping[str, Any]) -> list[str]:
    """Every way a message payload breaks Slack's limits, one readable line per problem.

    Covers `chat.postMessage`, `chat.update`, `chat.postEphemeral` and response_url bodies. A
    response_url body with `delete_original` set carries no message and is never a problem.

    Args:
        payload: the message as sent (`text`, `blocks`, `attachments`, ...); `blocks` must
            already be decoded from JSON.

    Returns:
        Lines like `blocks[3].text.text: 3120 characters (limit 3000)`; empty when valid.
    """
    if payload.get("delete_original") in (True, "true"):
        return []
    problems: Problems = []
    text = payload.get("text")
    blocks = payload.get("blocks")
    has_text = isinstance(text, str) and text != ""
    if not has_text and not blocks and not payload.get("attachments"):
        return ["message: empty (a message needs text or blocks)"]
    if isinstance(text, str):
        _check_length(problems, "text", text, MAX_MESSAGE_TEXT)
    if blocks is not None:
        _check_blocks(problems, blocks)
        if blocks and not has_text:
            problems.append("text: missing (a message with blocks needs a fallback text)")
    return problems


def _check_blocks(
    problems: Problems, blocks: Any, *, limit: int = MAX_BLOCKS, path: str = "blocks"
) -> None:
    if not isinstance(blocks, list):
        problems.append(f"{path}: must be a list, got {type(blocks).__name__}")
        return
    if len(blocks) > limit:
        problems.append(f"{path}: {len(blocks)} blocks (limit {limit})")
    for index, block in enumerate(blocks):
        _check_block(problems, f"{path}[{index}]", block)
    block_ids = [b.get("block_id") for b in blocks if isinstance(b, Mapping) and b.get("block_id")]
    for block_id, count in Counter(block_ids).items():
        if count > 1:
            problems.append(f"{path}: block_id {block_id!r} used {count} times (must be unique)")


def _check_block(problems: Problems, path: str, block: Any) -> None:
    if not isinstance(block, Mapping):
        problems.append(f"{path}: must be an object, got {type(block).__name__}")
        return
    block_type = block.get("type")
    if block_type not in KNOWN_BLOCK_TYPES:
        problems.append(f"{path}.type: unknown block type {block_type!r}")
        return
    _check_optional_length(problems, f"{path}.block_id", block.get("block_id"), MAX_BLOCK_ID)
    checker = _BLOCK_CHECKERS.get(str(block_type))
    if checker is not None:
        checker(problems, path, block)


def _check_section(problems: Problems, path: str, block: Mapping[str, Any]) -> None:
    text, fields = block.get("text"), block.get("fields")
    if text is None and not fields:
        problems.append(f"{path}: a section needs text or fields")
    if text is not None:
        _check_text_object(problems, f"{path}.text", text, MAX_SECTION_TEXT)
    if fields is not None:
        _check_fields(problems, f"{path}.fields", fields)
    accessory = block.get("accessory")
    if accessory is not None:
        _check_element(problems, f"{path}.accessory", accessory)


def _check_fields(problems: Problems, path: str, fields: Any) -> None:
    if not isinstance(fields, list):
        problems.append(f"{path}: must be a list")
        return
    if len(fields) > MAX_SECTION_FIELDS:
        problems.append(f"{path}: {len(fields)} fields (limit {MAX_SECTION_FIELDS})")
    for index, field in enumerate(fields):
        _check_text_object(problems, f"{path}[{index}]", field, MAX_SECTION_FIELD_TEXT)


def _check_header(problems: Problems, path: str, block: Mapping[str, Any]) -> None:
    text = block.get("text")
    if isinstance(text, Mapping) and text.get("type") != "plain_text":
        problems.append(f"{path}.text.type: a header takes plain_text, got {text.get('type')!r}")
    _check_text_object(problems, f"{path}.text", text, MAX_HEADER_TEXT)


def _check_markdown(problems: Problems, path: str, block: Mapping[str, Any]) -> None:
    text = block.get("text")
    if not isinstance(text, str) or text == "":
        problems.append(f"{path}.text: missing (a markdown block needs a text string)")
        return
    _check_length(problems, f"{path}.text", text, MAX_MARKDOWN_BLOCK_TEXT)


def _check_context(problems: Problems, path: str, block: Mapping[str, Any]) -> None:
    elements = _element_list(problems, f"{path}.elements", block, MAX_CONTEXT_ELEMENTS)
    for index, element in enumerate(elements):
        element_path = f"{path}.elements[{index}]"
        if isinstance(element, Mapping) and element.get("type") in ("mrkdwn", "plain_text"):
            _check_text_object(problems, element_path, element, MAX_TEXT_OBJECT)
        elif isinstance(element, Mapping) and element.get("type") == "image":
            _check_image_fields(problems, element_path, element)
        else:
            problems.append(f"{element_path}: a context element must be text or an image")


def _check_actions(problems: Problems, path: str, block: Mapping[str, Any]) -> None:
    elements = _element_list(problems, f"{path}.elements", block, MAX_ACTIONS_ELEMENTS)
    for index, element in enumerate(elements):
        _check_element(problems, f"{path}.elements[{index}]", element)
    action_ids = [e.get("action_id") for e in elements if isinstance(e, Mapping)]
    for action_id, count in Counter(a for a in action_ids if a).items():
        if count > 1:
            problems.append(f"{path}: action_id {action_id!r} used {count} times in one block")


def _check_image(problems: Problems, path: str, block: Mapping[str, Any]) -> None:
    _check_image_fields(problems, path, block)


def _element_list(problems: Problems, path: str, block: Mapping[str, Any], limit: int) -> list[Any]:
    elements = block.get("elements")
    if not isinstance(elements, list) or not elements:
        problems.append(f"{path}: missing (needs at least one element)")
        return []
    if len(elements) > limit:
        problems.append(f"{path}: {len(elements)} elements (limit {limit})")
    return elements


def _check_element(problems: Problems, path: str, element: Any) -> None:
    if not isinstance(element, Mapping):
        problems.append(f"{path}: must be an object")
        return
    _check_optional_length(problems, f"{path}.action_id", element.get("action_id"), MAX_ACTION_ID)
    if element.get("type") == "button":
        _check_button(problems, path, element)
    elif element.get("type") == "image":
        _check_image_fields(problems, path, element)


def _check_button(problems: Problems, path: str, button: Mapping[str, Any]) -> None:
    text = button.get("text")
    if isinstance(text, Mapping) and text.get("type") != "plain_text":
        problems.append(f"{path}.text.type: a button takes plain_text, got {text.get('type')!r}")
    _check_text_object(problems, f"{path}.text", text, MAX_BUTTON_TEXT)
    _check_optional_length(problems, f"{path}.value", button.get("value"), MAX_BUTTON_VALUE)
    _check_optional_length(problems, f"{path}.url", button.get("url"), MAX_BUTTON_URL)
    style = button.get("style")
    if style is not None and style not in BUTTON_STYLES:
        problems.append(f"{path}.style: {style!r} (must be 'primary' or 'danger')")
    confirm = button.get("confirm")
    if confirm is not None:
        _check_confirm(problems, f"{path}.confirm", confirm)


def _check_confirm(problems: Problems, path: str, confirm: Any) -> None:
    if not isinstance(confirm, Mapping):
        problems.append(f"{path}: must be an object")
        return
    _check_text_object(problems, f"{path}.title", confirm.get("title"), MAX_CONFIRM_TITLE)
    _check_text_object(problems, f"{path}.text", confirm.get("text"), MAX_CONFIRM_TEXT)
    for key in ("confirm", "deny"):
        _check_text_object(problems, f"{path}.{key}", confirm.get(key), MAX_CONFIRM_BUTTON_TEXT)


def _check_image_fields(problems: Problems, path: str, image: Mapping[str, Any]) -> None:
    alt_text = image.get("alt_text")
    if not isinstance(alt_text, str) or alt_text == "":
        problems.append(f"{path}.alt_text: missing (an image needs alt_text)")
    else:
        _check_length(problems, f"{path}.alt_text", alt_text, MAX_IMAGE_ALT_TEXT)
    _check_optional_length(problems, f"{path}.image_url", image.get("image_url"), MAX_IMAGE_URL)


def _check_text_object(problems: Problems, path: str, text_object: Any, limit: int) -> None:
    if not isinstance(text_object, Mapping):
        problems.append(f"{path}: missing (needs a text object)")
        return
    text = text_object.get("text")
    if not isinstance(text, str) or text == "":
        problems.append(f"{path}.text: empty (needs at least 1 character)")
        return
    _check_length(problems, f"{path}.text", text, limit)


def _check_optional_length(problems: Problems, path: str, value: Any, limit: int) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        problems.append(f"{path}: must be a string, got {type(value).__name__}")
        return
    _check_length(problems, path, value, limit)


def _check_length(problems: Problems, path: str, value: str, limit: int) -> None:
    if len(value) > limit:
        problems.append(f"{path}: {len(value)} characters (limit {limit})")


_BLOCK_CHECKERS: dict[str, Callable[[Problems, str, Mapping[str, Any]], None]] = {
    "actions": _check_actions,
    "context": _check_context,
    "header": _check_header,
    "image": _check_image,
    "markdown": _check_markdown,
    "section": _check_section,
}


# Views (the Home tab, modals): Slack's "Views" reference (docs.slack.dev/reference/views) allows
# up to 100 blocks, `private_metadata` up to 3000 characters and `callback_id` up to 255;
# views.publish answers `view_too_large` past 250 kB.
MAX_VIEW_BLOCKS = 100
MAX_VIEW_PRIVATE_METADATA = 3000
MAX_VIEW_CALLBACK_ID = 255
MAX_VIEW_BYTES = 250_000
VIEW_TYPES = frozenset({"home", "modal"})


def check_view(view: Any) -> list[str]:
    """Every way a view (`views.publish`, `views.open`) breaks Slack's limits, one line each."""
    if not isinstance(view, Mapping):
        return [f"view: must be an object, got {type(view).__name__}"]
    problems: Problems = []
    if view.get("type") not in VIEW_TYPES:
        problems.append(f"view.type: {view.get('type')!r} (expected home or modal)")
    _check_blocks(problems, view.get("blocks"), limit=MAX_VIEW_BLOCKS, path="view.blocks")
    metadata, callback = view.get("private_metadata"), view.get("callback_id")
    _check_optional_length(problems, "view.private_metadata", metadata, MAX_VIEW_PRIVATE_METADATA)
    _check_optional_length(problems, "view.callback_id", callback, MAX_VIEW_CALLBACK_ID)
    size = len(json.dumps(view, default=str))
    if size > MAX_VIEW_BYTES:
        problems.append(f"view: {size} bytes of JSON, more than {MAX_VIEW_BYTES} (view_too_large)")
    return problems
