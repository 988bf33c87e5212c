"""The repository stands alone: what its docs and code cite is in the repository.

Three rules over every py, md, yaml and toml file of the product, the test bed, the tests, the
docs, deploy/, bench/, tools/ and the README:
- nothing names the product design that lives outside the repository (the sibling folder it was
  drafted in, that document's own name and numbering, or the notes folder beside it):
  `docs/design.md` is the design, `docs/*.md` hold the facts;
- every path of this repository that is cited (`docs/keda.md`, `bot/cli.py`, `tests/unit/...`)
  exists, unless its line says it is planned; paths of upstream projects
  (`pkg/scheduler/...`, `internal/controller/...`) are not ours to check, and only paths that
  begin with one of our top-level folders are;
- every `docs/design.md §N` names a numbered heading of docs/design.md, and a quoted name after
  the number (§2 then "Safety") a heading of that name.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("bot", "handlers", "testbed", "tests", "docs", "deploy", "bench", "tools")
SUFFIXES = (".py", ".md", ".yaml", ".yml", ".toml")
TOP_FILES = ("README.md", "CHANGELOG.md", "pyproject.toml", "config.example.yaml")
# Paths the README tells the reader to make (their own overlay), not paths of the repository.
MADE_BY_THE_READER = ("deploy/overlays/our-team",)
# A test tier declared in pyproject.toml (its marker) may be cited before it holds a test.
_MARKERS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
TIER_FOLDERS = tuple(f"tests/{marker.split(':')[0]}" for marker in _MARKERS["markers"])
DESIGN = ROOT / "docs" / "design.md"

# Built from pieces so that this file does not match itself.
_OUTSIDE = re.compile(
    "|".join(
        (
            r"\.\./" + "shared" + r"\b",  # the sibling folder the design was drafted in
            r"\bDESIGN(?:\.md\b|\s*§|\s+\d)",  # that document's name and numbering
            r"(?<![\w./-])" + "reference" + r"/[\w-]+\.md",  # the notes beside it
        )
    )
)
_PATH = re.compile(r"(?<![\w./~$-])((?:" + "|".join(FOLDERS) + r")/[\w./*-]*)")
_SECTION = re.compile(r"§\s*(\d+(?:\.\d+)*)(?:'s)?(?:\s+\"([^\"]+)\")?")
_HEADING = re.compile(r"^#+\s+(?:(\d+(?:\.\d+)*)\.?\s+)?(.+?)\s*$", re.MULTILINE)


def scanned_files() -> Iterator[Path]:
    """The files the rules hold for (virtual environments and caches left out)."""
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and "__pycache__" not in path.parts:
                yield path
    for name in TOP_FILES:
        if (ROOT / name).is_file():
            yield ROOT / name


@functools.cache
def numbered_lines(path: Path) -> tuple[tuple[int, str], ...]:
    return tuple(enumerate(path.read_text(encoding="utf-8").splitlines(), start=1))


def lines_of(path: Path) -> Iterator[tuple[int, str]]:
    yield from numbered_lines(path)


def outside_mentions(path: Path) -> list[str]:
    """`file:line: text` for each line that names the design outside the repository."""
    where = path.relative_to(ROOT)
    return [f"{where}:{n}: {line.strip()}" for n, line in lines_of(path) if _OUTSIDE.search(line)]


def cited_paths(line: str) -> Iterator[str]:
    """Repository paths a line cites: placeholders (`bot/<feature>/`) and templates
    (`deploy/overlays/{name}`) are not paths; a glob (`tests/e2e/test_*.py`) is one; Go files
    are upstream's (`tools/pager/pager.go` of client-go); `kubectl ... deploy/NAME` is a
    Deployment."""
    for match in _PATH.finditer(line):
        cited = match.group(1).rstrip(".")
        following = line[match.end() : match.end() + 1]
        if following in ("<", "{", "[") or cited.endswith(".go"):
            continue
        if "kubectl" in line and re.fullmatch(r"deploy/[\w-]+", cited):
            continue
        yield cited


def exists(cited: str) -> bool:
    """On disk (a glob: something matches; a module may be named without `.py`)."""
    if "*" in cited:
        return any(ROOT.glob(cited))
    if cited.startswith(MADE_BY_THE_READER) or cited.rstrip("/") in TIER_FOLDERS:
        return True
    return (ROOT / cited).exists() or (ROOT / f"{cited}.py").is_file()


def missing_paths(path: Path) -> list[str]:
    """`file:line: path` for each cited repository path that does not exist (a line saying
    "planned" may name what is not there yet)."""
    where = path.relative_to(ROOT)
    return [
        f"{where}:{n}: {cited}"
        for n, line in lines_of(path)
        if "planned" not in line.lower()
        for cited in cited_paths(line)
        if not exists(cited)
    ]


def design_headings() -> tuple[set[str], set[str]]:
    """The numbers and the names of docs/design.md's headings."""
    numbers: set[str] = set()
    names: set[str] = set()
    for number, name in _HEADING.findall(DESIGN.read_text(encoding="utf-8")):
        if number:
            numbers.add(number)
        names.add(name)
    return numbers, names


def unresolved_sections(path: Path, numbers: set[str], names: set[str]) -> list[str]:
    """`file:line: §N "Name"` for each design citation whose section or name is not a heading.
    In docs/design.md itself every § is a citation; elsewhere only `docs/design.md §...`."""
    where = path.relative_to(ROOT)
    found = []
    for n, line in lines_of(path):
        text = line if path == DESIGN else "".join(line.split("design.md")[1:])
        for match in _SECTION.finditer(text):
            number, name = match.groups()
            if number not in numbers or (name is not None and name not in names):
                found.append(f"{where}:{n}: {match.group(0)}")
    return found


ALL_FILES = list(scanned_files())


def test_the_files_scanned_include_code_docs_and_deploy() -> None:
    scanned = {path.relative_to(ROOT).parts[0] for path in ALL_FILES}
    assert {"bot", "handlers", "testbed", "tests", "docs", "deploy", "README.md"} <= scanned


def test_nothing_names_the_design_outside_the_repository() -> None:
    found = [line for path in ALL_FILES for line in outside_mentions(path)]
    assert not found, "cite docs/design.md instead:\n" + "\n".join(found)


def test_every_cited_repository_path_exists() -> None:
    found = [
        line for path in ALL_FILES if path.name not in TOP_FILES[1:] for line in missing_paths(path)
    ]
    assert not found, "cited but not in the repository:\n" + "\n".join(found)


def test_every_design_section_cited_is_a_heading_of_the_design() -> None:
    numbers, names = design_headings()
    found = [line for path in ALL_FILES for line in unresolved_sections(path, numbers, names)]
    assert not found, "no such heading in docs/design.md:\n" + "\n".join(found)


def test_the_design_keeps_the_numbers_and_sections_the_code_cites() -> None:
    numbers, names = design_headings()
    assert {"1", "1.1", "1.2", "1.3", "1.4", "2", "3"} <= numbers
    for name in ("KEDA pause", "Flux reconcile", "Argo CD", "Alerts", "Delivery", "Safety"):
        assert name in names


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("see docs/keda.md and `bot/cli.py`.", ["docs/keda.md", "bot/cli.py"]),
        ("upstream pkg/scheduler/cache/status_updater and internal/controller/x.go", []),
        ("https://github.com/org/repo/tree/main/docs/x.md", []),
        ("a package `bot/<feature>/commands.py`, `deploy/overlays/{name}`", []),
        ("`tests/e2e/test_e2e_*.py`", ["tests/e2e/test_e2e_*.py"]),
        ("~/docs/notes.md and $HOME/bench/x", []),
        ("client-go tools/pager/pager.go; `kubectl -n x logs deploy/kai-operator`", []),
    ],
    ids=["repo paths", "upstream paths", "urls", "placeholders", "globs", "home paths", "upstream"],
)
def test_what_counts_as_a_cited_repository_path(line: str, expected: list[str]) -> None:
    assert list(cited_paths(line)) == expected


@pytest.mark.parametrize(
    "line",
    [
        "see ../" + "shared/",
        "as " + "DESIGN" + " §2 says",
        "DESIGN" + " 1.3's grammar",
        "(" + "reference/" + "kai-workloads.md)",
    ],
    ids=["sibling folder", "section sign", "section number", "notes beside it"],
)
def test_what_counts_as_naming_the_design_outside(line: str) -> None:
    assert _OUTSIDE.search(line)


def test_slack_reference_urls_are_not_outside_notes() -> None:
    assert not _OUTSIDE.search("docs.slack.dev/" + "reference/methods/views.publish.md")
