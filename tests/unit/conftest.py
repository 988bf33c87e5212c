"""The unit tier: pure tables and in-process objects, no sockets (docs/CONVENTIONS.md).

A test here that opens an Internet socket is in the wrong tier: the guard below refuses it at
once, so the tier stays fast and a misfiled test is named by its failure.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _no_internet_sockets(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(original: Any) -> Any:
        def guarded(self: socket.socket, address: Any, *rest: Any) -> Any:
            if self.family in (socket.AF_INET, socket.AF_INET6):
                raise RuntimeError(f"a unit test opened a socket to {address!r}: move it to e2e/")
            return original(self, address, *rest)

        return guarded

    for name in ("bind", "connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, refuse(getattr(socket.socket, name)))
    yield
