"""What the README and docs/ point a reader at is there; the README starts where a newcomer does.

tests/unit/test_docs_citations.py checks paths under our top-level folders (`docs/keda.md`,
`deploy/Dockerfile`); this adds what it does not see: Markdown links relative to the page, file
names cited alone in backticks (`config.example.yaml`, `keda-rbac.yaml`), the `make` targets.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from bot.subcommands import GRAMMAR

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README = (ROOT / "README.md").read_text(encoding="utf-8")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# A file name alone in backticks: `name.yaml`, `.pre-commit-config.yaml`, `Makefile`.
_FILE = re.compile(r"`(\.?[\w.-]+\.(?:md|ya?ml|toml|py|txt)|Makefile|Dockerfile)`")
# `make X` in the text, or a line of a shell block that starts with it.
_MAKE = re.compile(r"(?:`|^)make(?: -n)? ([\w-]+)", re.MULTILINE)
# Names the docs use for files a reader makes or a tool writes elsewhere, not files of ours.
NOT_OURS = {"my-config.yaml", "gitrepository.yaml"}
SKIPPED_DIRS = {".git", ".venv", "node_modules", ".mypy_cache", ".ruff_cache", ".pytest_cache"}


def repository_file_names() -> set[str]:
    names: set[str] = set()
    for _folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]  # never into the virtualenv
        names.update(files)
    return names


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue  # a URL or an anchor on the same page
        if not (page.parent / target.split("#")[0]).exists():
            broken.append(f"{page.relative_to(ROOT)}: ({target})")
    return broken


def test_every_relative_link_in_the_readme_and_docs_resolves() -> None:
    assert [b for page in PAGES for b in broken_links(page)] == []


def test_every_file_named_alone_in_the_readme_and_docs_exists_in_the_repository() -> None:
    names = repository_file_names()
    missing = [
        f"{page.relative_to(ROOT)}: {name}"
        for page in PAGES
        for name in _FILE.findall(page.read_text(encoding="utf-8"))
        if name not in names and name not in NOT_OURS
    ]
    assert missing == []


def test_every_make_target_the_readme_and_docs_name_is_in_the_makefile() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+):", makefile, re.MULTILINE))
    named = {t for page in PAGES for t in _MAKE.findall(page.read_text(encoding="utf-8"))}
    assert {"demo", "test", "image", "push", "keda-rbac"} <= named
    assert named - targets == set()


def sections() -> list[str]:
    return re.findall(r"^## (.+)$", README, re.MULTILINE)


def test_the_readme_starts_with_the_quick_start_then_installs_in_order() -> None:
    assert sections()[0] == "Quick start"
    quick_start = README[: README.index("\n## ", README.index("## Quick start") + 1)]
    assert "make demo" in quick_start and "make test" in quick_start
    assert len(README.split("\n## ")[0].strip().splitlines()) <= 5, "what it is, in 3 lines"
    install = README[README.index("## Install") :]
    steps = re.findall(r"^### \d\. (.+)$", install, re.MULTILINE)
    assert steps[:5] == [
        "Install the Slack app",
        "Build and push the image",
        "Choose an overlay",
        "Configure",
        "Deploy",
    ]
    assert install.index("**What you need**") < install.index("### 1.")


@pytest.mark.parametrize(
    "need",
    ["container registry", "Slack workspace admin", "Kubernetes ≥ 1.30", "Flux or Argo CD", "Git"],
)
def test_what_you_need_names_each_thing_before_the_first_step(need: str) -> None:
    box = README[README.index("**What you need**") : README.index("### 1.")]
    assert need in box


def test_internals_live_in_docs_linked_from_one_contributors_section() -> None:
    assert "For contributors" in sections()
    contributors = README[README.index("## For contributors") :]
    for page in ("docs/testing.md", "docs/internals.md", "docs/ARCHITECTURE.md"):
        assert page in contributors
    for internal in ("## Benchmarks", "## Mutation testing", "## How it is built"):
        assert internal not in README


def command_table_words(text: str, heading: str) -> set[str]:
    """The subcommands of the first column of the table under `heading`."""
    start = text.index(heading)
    rows = [line for line in text[start:].split("\n\n", 3)[2].splitlines() if line.startswith("|")]
    return set(re.findall(r"`/kai (\w+)", "\n".join(row.split(" | ")[0] for row in rows)))


def test_every_slash_command_has_its_line_in_the_readme_and_its_row_in_docs_commands() -> None:
    words = set(GRAMMAR.words)
    assert command_table_words(README, "## Every command") == words
    commands = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    assert command_table_words(commands, "## In Slack") == words


def test_the_private_fork_credentials_are_the_ones_the_gitops_examples_use() -> None:
    flux = (ROOT / "deploy" / "gitops" / "flux-kustomization.yaml").read_text(encoding="utf-8")
    [secret] = re.findall(r"# secretRef: \{name: ([\w-]+)\}", flux)
    assert f"-n flux-system create secret generic {secret}" in README
    argo = (ROOT / "deploy" / "gitops" / "argocd-application.yaml").read_text(encoding="utf-8")
    [url] = re.findall(r"repoURL: (\S+)", argo)
    assert f"--from-literal=url={url}" in README
    assert "argocd.argoproj.io/secret-type=repository" in README
