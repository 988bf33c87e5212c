"""The pre-commit hooks run what `make lint` runs, with the same tools, and need no network."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def lint_commands() -> list[str]:
    """The recipe of `make lint`, with `$(BIN)` spelled out and the `.` target dropped."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^lint:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe is not None
    lines = [line.strip().replace("$(BIN)", ".venv/bin") for line in recipe.group(1).splitlines()]
    return [line.removesuffix(" .") for line in lines]


def hooks() -> list[dict[str, object]]:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    return [hook for repo in config["repos"] for hook in repo["hooks"]]


def test_every_check_of_make_lint_is_a_hook() -> None:
    entries = {hook["entry"] for hook in hooks()}
    assert set(lint_commands()) <= entries


def test_the_hooks_are_local_and_download_nothing() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert [repo["repo"] for repo in config["repos"]] == ["local"]
    assert {hook["language"] for hook in hooks()} == {"system"}
