"""Files shared the way Slack takes them now: `files.getUploadURLExternal`, a POST of the bytes
to the upload URL it gave, then `files.completeUploadExternal` (Slack's method reference pages,
docs.slack.dev/reference/methods/files.getUploadURLExternal and
files.completeUploadExternal; Tier 4 both, `bot.slack.tiers`).

As documented: the first takes `filename` and `length` (the size in bytes) and answers an
`upload_url` and a `file_id`; the upload URL takes the file "as raw bytes or multipart form
encoded" and answers HTTP 200 when it took it, anything else when it did not; the second takes
`files` (a JSON array of `{"id", "title"}`), and optionally `channel_id`, `thread_ts` (a parent's
ts) and `initial_comment`, shares the files there (a message carrying them) and answers
`{"ok": true, "files": [{"id", "title"}]}`; it "can only be called once". Both need the bot
token's `files:write` scope (else `missing_scope`, with `needed` and `provided`, as their answer
types declare). Where the pages name no error code, the emulator answers `invalid_arguments`
for arguments missing or malformed, and `file_not_found` for a file never uploaded or already
completed; and, stricter than a page says, an upload whose size is not the `length` announced
is refused at the upload URL (400), so a client that counts characters for bytes is caught.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from testbed.slackemu.workspace import MessageNotFoundError, Workspace

SCOPE = "files:write"
UPLOAD_PATH = "/upload/v1/"


@dataclass
class SharedFile:
    """One file: as announced, its bytes once uploaded, where it was shared once completed."""

    id: str
    filename: str
    length: int
    content: bytes | None = None
    title: str = ""
    channel: str = ""
    thread_ts: str | None = None
    completed: bool = False

    @property
    def text(self) -> str:
        return (self.content or b"").decode("utf-8", errors="replace")


class Files:
    """Every file of the workspace, by ID; `base_url` is where its upload URLs point."""

    def __init__(self) -> None:
        self.by_id: dict[str, SharedFile] = {}
        self.base_url = ""

    def get_upload_url(self, ws: Workspace, params: Mapping[str, Any]) -> dict[str, Any]:
        """`files.getUploadURLExternal`."""
        refused = _scope_missing(ws)
        if refused is not None:
            return refused
        filename, length = str(params.get("filename") or ""), _length(params.get("length"))
        if not filename or length is None:
            return _error("invalid_arguments")
        file_id = f"F{len(self.by_id) + 1:09d}"
        self.by_id[file_id] = SharedFile(file_id, filename, length)
        return {
            "ok": True,
            "upload_url": f"{self.base_url}{UPLOAD_PATH}{file_id}",
            "file_id": file_id,
        }

    def receive(self, file_id: str, body: bytes, form_file: bytes | None) -> tuple[int, str]:
        """A POST to an upload URL: (HTTP status, body)."""
        shared = self.by_id.get(file_id)
        if shared is None or shared.completed or shared.content is not None:
            return 404, "upload URL unknown or already used"
        content = form_file if form_file is not None else body
        if len(content) != shared.length:
            return 400, f"expected {shared.length} bytes, got {len(content)}"
        shared.content = content
        return 200, f"OK - {len(content)}"

    def complete(self, ws: Workspace, params: Mapping[str, Any]) -> dict[str, Any]:
        """`files.completeUploadExternal`: shares the files in `channel_id` (in the thread
        `thread_ts`) as one message saying `initial_comment`."""
        refused = _scope_missing(ws)
        if refused is not None:
            return refused
        wanted = _files(params.get("files"))
        if not wanted:
            return _error("invalid_arguments")
        found = [self.by_id.get(str(f.get("id") or "")) for f in wanted]
        if any(f is None or f.content is None or f.completed for f in found):
            return _error("file_not_found")
        shared = [f for f in found if f is not None]
        channel, thread = str(params.get("channel_id") or ""), params.get("thread_ts") or None
        if channel:
            listed = [
                {"id": f.id, "name": f.filename, "title": _title(w, f)}
                for f, w in zip(shared, wanted, strict=True)
            ]
            try:
                ws.post(
                    channel,
                    text=str(params.get("initial_comment") or ""),
                    thread_ts=thread,
                    files=listed,
                )
            except MessageNotFoundError:
                return _error("thread_not_found")
        for f, w in zip(shared, wanted, strict=True):
            f.completed, f.title, f.channel, f.thread_ts = True, _title(w, f), channel, thread
        return {"ok": True, "files": [{"id": f.id, "title": f.title} for f in shared]}


def _scope_missing(ws: Workspace) -> dict[str, Any] | None:
    if SCOPE in ws.scopes:
        return None
    return _error("missing_scope", needed=SCOPE, provided=",".join(sorted(ws.scopes)))


def _length(value: Any) -> int | None:
    try:
        length = int(str(value))
    except ValueError:
        return None
    return length if length >= 0 else None


def _files(value: Any) -> list[Mapping[str, Any]]:
    """`files` as a JSON array (a form sends it as a string) of objects with an `id`."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return []
    if not isinstance(value, list) or not all(isinstance(f, dict) and f.get("id") for f in value):
        return []
    return value


def _title(wanted: Mapping[str, Any], shared: SharedFile) -> str:
    return str(wanted.get("title") or shared.filename)


def _error(code: str, **extra: Any) -> dict[str, Any]:
    return {"ok": False, "error": code, **extra}
