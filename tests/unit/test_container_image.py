"""The container image holds the product and nothing else, and builds without .git.

`deploy/Dockerfile` copies `bot/` and `handlers/` (never the test bed nor the tests), and passes
its `VERSION` build argument to setuptools-scm, since the build context has no git history.
What the image leaves out is said clearly: `kai-chatops demo` in an install without `testbed`
exits 2 with a line naming what is missing, shown here by running the command line in a process
where `testbed` cannot be imported.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")


def copied_sources() -> list[str]:
    """The build-context paths of every COPY (`COPY --from=...` copies between stages)."""
    sources: list[str] = []
    for line in DOCKERFILE.splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not any(w.startswith("--from=") for w in words):
            sources += [w.rstrip("/").removeprefix("./") for w in words[1:-1]]
    return sources


def test_the_image_copies_the_product() -> None:
    assert {"bot", "handlers", "pyproject.toml", "README.md"} <= set(copied_sources())


@pytest.mark.parametrize("left_out", ["testbed", "tests", "bench", "tools", ".git", "."])
def test_the_image_never_copies_the_test_bed_or_the_tests(left_out: str) -> None:
    assert left_out not in copied_sources()


def test_the_image_takes_its_version_from_a_build_argument() -> None:
    assert re.search(r"^ARG VERSION\b", DOCKERFILE, re.MULTILINE)
    assert 'SETUPTOOLS_SCM_PRETEND_VERSION="${VERSION}"' in DOCKERFILE


def test_a_source_tree_without_git_still_has_a_version() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r"^fallback_version = \"[^\"]+\"", pyproject, re.MULTILINE)
    assert 'dynamic = ["version"]' in pyproject


BLOCK_TESTBED = textwrap.dedent(
    """
    import sys
    from importlib.abc import MetaPathFinder

    class NoTestbed(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "testbed" or name.startswith("testbed."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoTestbed())
    from bot.cli import main
    sys.exit(main(["demo"]))
    """
)


def test_demo_without_the_test_bed_says_so_and_exits_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_TESTBED],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "the demo needs the test bed" in done.stderr
    assert "make demo" in done.stderr
    assert "Traceback" not in done.stderr
