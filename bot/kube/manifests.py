"""Parses the YAML or JSON that `kai-chatops evaluate` reads into raw objects.

Accepts one document, a multi-document YAML stream, or a `kind: List` (any `*List` with
`items`, as `kubectl get -o yaml` prints), flattened to its items. Pure: the caller reads the
file's bytes; this module only decodes and parses them, and raises `UserError` (one line naming
the source) for anything it cannot read, never another exception.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from bot.core.errors import UserError
from bot.core.models import RawObject


class _Loader(yaml.SafeLoader):
    """A safe loader that keeps timestamps as the strings the API server wrote."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


_WIDE_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def decode_text(data: bytes, source: str) -> str:
    """The text of a dump: UTF-8, with or without a byte-order mark.

    Raises:
        UserError: the bytes are not UTF-8 (a binary file, Latin-1, UTF-16 as PowerShell's `>`
            writes), naming the source, the first bad byte and its line.
    """
    # UTF-32 LE's mark begins with UTF-16 LE's: test the longer marks first.
    if data.startswith(_WIDE_BOMS):
        raise UserError(
            f"cannot read {source}: it is UTF-16 or UTF-32 text, and evaluate reads UTF-8"
            " (convert it first, e.g. iconv -f UTF-16 -t UTF-8)"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise UserError(
            f"cannot read {source}: not UTF-8 text (byte 0x{data[error.start]:02x} on line"
            f" {line}); evaluate reads YAML or JSON in UTF-8"
        ) from None


def parse_documents(text: str, source: str) -> list[RawObject]:
    """Every object in `text`, in order, with List kinds flattened and empty documents skipped.

    Args:
        text: YAML (one or more documents) or JSON.
        source: the file name (or "-" / "<stdin>") used in error messages.

    Raises:
        UserError: the text is not valid YAML/JSON, or a document is not an object.
    """
    objects: list[RawObject] = []
    for index, document in enumerate(_load_documents(text, source), start=1):
        objects.extend(_flatten(document, source, index))
    return objects


def _load_documents(text: str, source: str) -> list[Any]:
    """The parsed documents; what the parsers raise besides their own errors becomes a
    `UserError` too: a number of more than 4300 digits (Python's `int` limit raises
    ValueError) and nesting deeper than the interpreter's recursion limit."""
    try:
        return _parse_json_or_yaml(text, source)
    except RecursionError:
        raise UserError(f"{source}: nested too deeply to read") from None
    except ValueError as error:
        # Python's own advice after ";" (sys.set_int_max_str_digits) is not the user's to take.
        what = str(error).split(";")[0].splitlines()[0] if str(error) else "unreadable"
        raise UserError(f"{source}: cannot read a value: {what}") from None


def _parse_json_or_yaml(text: str, source: str) -> list[Any]:
    if text.lstrip().startswith(("{", "[")):
        try:
            return [json.loads(text)]
        except ValueError:
            pass  # maybe YAML flow style; the YAML parser gives the better error
    try:
        return list(yaml.load_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as error:
        raise UserError(_describe_yaml_error(error, source)) from error
    except yaml.YAMLError as error:
        line = _line_of_position(text, getattr(error, "position", None))
        first_line = str(error).splitlines()[0] if str(error) else "unreadable"
        raise UserError(f"{source}: invalid YAML at line {line}: {first_line}") from error


def _flatten(document: Any, source: str, index: int) -> Iterator[RawObject]:
    if document is None:
        return
    if isinstance(document, list):
        for item in document:
            yield from _flatten(item, source, index)
        return
    if not isinstance(document, Mapping):
        shown = type(document).__name__
        raise UserError(f"{source}: document {index} is a bare value ({shown}), not an object")
    items = document.get("items")
    if _is_list_kind(document) and isinstance(items, list):
        for item in items:
            yield from _flatten(item, source, index)
        return
    yield document


def _is_list_kind(document: Mapping[str, Any]) -> bool:
    kind = document.get("kind")
    return isinstance(kind, str) and kind.endswith("List")


def _describe_yaml_error(error: yaml.MarkedYAMLError, source: str) -> str:
    mark = error.problem_mark or error.context_mark
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = error.problem or error.context or "unreadable"
    return f"{source}: invalid YAML{where}: {problem}"


def _line_of_position(text: str, position: object) -> int:
    return text.count("\n", 0, position) + 1 if isinstance(position, int) else 1
