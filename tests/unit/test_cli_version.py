"""`kai-chatops --version` prints the installed version, which setuptools-scm took from git."""

from __future__ import annotations

from importlib import metadata

import pytest

import bot
from bot.cli import main


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"kai-chatops {metadata.version('kai-chatops')}\n"


def test_the_version_is_a_version_not_a_placeholder() -> None:
    assert bot.version()[0].isdigit()
