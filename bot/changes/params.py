"""A change's typed parameters as the strings a Confirm button and an approval record carry.

Encoded and decoded here alone. A kind's parameters are a frozen dataclass whose fields are
`str`, `bool`, `timedelta | None`, or a frozen dataclass of those (a target), flattened into one
mapping of names to strings. Decoding refuses a mapping with a name more or one fewer than the
type has, or a value not in its field's form: what we did not write for this version changes
nothing. A reason is checked to fit in the button before it is asked (`check_reason`). Pure.
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from collections.abc import Iterator, Mapping
from datetime import timedelta
from typing import Any, TypeVar

from bot.core import errors

P = TypeVar("P")
YES = "yes"
# A reason rides in the signed Confirm button, whose value Slack caps at 2000 characters.
MAX_REASON = 500
_SECONDS = re.compile(r"[0-9]{1,12}")


def encode(params: object) -> dict[str, str]:
    """`params` as names and strings (a flag not given is "", a duration its seconds)."""
    encoded: dict[str, str] = {}
    for name, hint, value in _values(params):
        if dataclasses.is_dataclass(hint):
            encoded |= encode(value)
        elif hint is bool:
            encoded[name] = YES if value else ""
        elif hint is str:
            encoded[name] = value
        else:  # a duration, or none
            encoded[name] = "" if value is None else str(int(value.total_seconds()))
    return encoded


def decode(kind: type[P], raw: Mapping[str, str]) -> P:
    """The parameters of type `kind` that `encode` made into `raw`.

    Raises:
        UserError: a name is missing or unknown, or a value is not of its field's form.
    """
    expected, given = set(names(kind)), set(raw)
    if given != expected:
        odd = sorted(given ^ expected)
        raise _refused(f"{', '.join(odd)} {'is' if len(odd) == 1 else 'are'} not what it carries")
    return _build(kind, raw)


def names(kind: type) -> tuple[str, ...]:
    """Every name `encode` writes for parameters of type `kind`, in order."""
    found: list[str] = []
    for name, hint in _hints(kind):
        found += (
            names(hint) if isinstance(hint, type) and dataclasses.is_dataclass(hint) else [name]
        )
    if len(set(found)) != len(found):
        raise TypeError(f"{kind.__name__}: two fields flatten to one name ({found})")
    return tuple(found)


def check_reason(reason: str) -> None:
    """Raises UserError for a reason too long to carry in a Confirm button."""
    # JSON-escaped length: non-ASCII characters take up to 12 characters each in the button.
    if len(json.dumps(reason)) - 2 > MAX_REASON:
        raise errors.UserError(
            f"The reason is too long ({len(reason)} characters); keep it under {MAX_REASON} "
            "(fewer with emoji or non-Latin letters). Nothing was changed."
        )


def _build(kind: type[P], raw: Mapping[str, str]) -> P:
    values: dict[str, Any] = {}
    for name, hint in _hints(kind):
        text = raw.get(name, "")
        if dataclasses.is_dataclass(hint):
            values[name] = _build(typing.cast(type, hint), raw)
        elif hint is bool:
            if text not in (YES, ""):
                raise _refused(f"{name} is {text!r}, not a flag")
            values[name] = text == YES
        elif hint is str:
            values[name] = text
        elif text and not _SECONDS.fullmatch(text):
            raise _refused(f"{name} is {text!r}, not a number of seconds")
        else:
            values[name] = timedelta(seconds=int(text)) if text else None
    return kind(**values)


def _hints(kind: type) -> Iterator[tuple[str, Any]]:
    """Each field's name and type (resolved: the modules use postponed annotations)."""
    hints = typing.get_type_hints(kind)
    for field in dataclasses.fields(kind):
        hint = hints[field.name]
        if not (hint in (str, bool, timedelta | None) or dataclasses.is_dataclass(hint)):
            raise TypeError(f"{kind.__name__}.{field.name}: {hint} cannot ride in a Confirm")
        yield field.name, hint


def _values(params: object) -> Iterator[tuple[str, Any, Any]]:
    for name, hint in _hints(type(params)):
        yield name, hint, getattr(params, name)


def _refused(why: str) -> errors.UserError:
    return errors.UserError(
        f"This change cannot be carried out by this version of kai-chatops ({why}); nothing "
        "was changed. Run the command again."
    )
