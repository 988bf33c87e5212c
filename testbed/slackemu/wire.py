"""Reading Slack Web API requests off the wire: params from query and body, and the token.

slack_sdk sends some methods as GET with a query string, others as POST with a form or a JSON
body; Slack itself accepts all of them, and so does the emulator.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

JSON_ENCODED_PARAMS = ("blocks", "attachments", "metadata", "view")
"""Params that a form body carries as JSON strings and the emulator records decoded."""


class BadRequestBodyError(ValueError):
    """The body is not the JSON or form it claims to be."""


async def read_params(request: web.Request) -> dict[str, Any]:
    """The request's params: query string, then body (form or JSON) on top, JSON fields decoded.

    Raises:
        BadRequestBodyError: a JSON body (or a JSON-encoded `blocks` field) does not parse.
    """
    params: dict[str, Any] = {key: request.query[key] for key in request.query}
    if request.body_exists:
        params.update(await _read_body(request))
    for key in JSON_ENCODED_PARAMS:
        if isinstance(params.get(key), str) and params[key]:
            params[key] = _decode_json(params[key], key)
    return params


def take_token(request: web.Request, params: dict[str, Any]) -> str | None:
    """The request's token (bearer header first, else a `token` param), removed from params."""
    from_param = params.pop("token", None)
    header = request.headers.get("Authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return str(from_param) if from_param else None


async def _read_body(request: web.Request) -> dict[str, Any]:
    if request.content_type == "application/json":
        body = _decode_json(await request.text(), "body")
        if not isinstance(body, dict):
            raise BadRequestBodyError("body: a JSON body must be an object")
        return body
    form = await request.post()
    return {key: form[key] for key in form if isinstance(form[key], str)}


def _decode_json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadRequestBodyError(f"{where}: invalid JSON ({exc.msg})") from exc
