"""What `make demo` and `make test` install into .venv, and when (the Makefile's stamps).

The Makefile runs in a copy of the repository's Makefile and pyproject.toml with stand-ins for
Python and uv on PATH, which record how they were called: no network, no real install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")

# `python3 -m venv` makes .venv/bin/python (and the entry point); `-m pip ... install uv==...`
# (the host's pip, or .venv's after `-m ensurepip`) puts uv there. Every call is recorded.
PYTHON = """#!/bin/sh
echo "$(basename "$0") $*" >> "{calls}"
case "$*" in
  "-m venv --without-pip .venv")
    mkdir -p .venv/bin && cp "$0" .venv/bin/python && cp "{bin}/kai-chatops" .venv/bin/ ;;
  "-m pip --python .venv/bin/python install --quiet uv=="*)
    [ -n "{host_pip}" ] || exit 1; cp "{bin}/uv" .venv/bin/ ;;
  "-m pip install --quiet uv=="*) cp "{bin}/uv" .venv/bin/ ;;
esac
"""
DEMO_INSTALL = "uv pip install --python .venv/bin/python --quiet pip -e ."
TEST_INSTALL = "uv pip install --python .venv/bin/python --quiet --compile-bytecode pip -e .[test]"
RECORDER = '#!/bin/sh\necho "$(basename "$0") $*" >> "{calls}"\n'


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    where = tmp_path / "clone"
    where.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, where / name)
    return where


def stand_ins(clone: Path, *, host_pip: bool = True) -> Path:
    bin_dir, calls = clone.parent / "bin", clone.parent / "calls"
    bin_dir.mkdir(exist_ok=True)
    scripts = {
        "python3": PYTHON.format(calls=calls, bin=bin_dir, host_pip="yes" if host_pip else ""),
        "uv": RECORDER.format(calls=calls),
        "kai-chatops": RECORDER.format(calls=calls),
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return calls


def make(clone: Path, target: str) -> list[str]:
    """Run `make target` in the clone; the calls it made, each emptied from `calls` after."""
    assert MAKE is not None
    calls = clone.parent / "calls"
    path = f"{clone.parent / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin"
    done = subprocess.run(
        [MAKE, "--no-print-directory", target, f"PYTHON={clone.parent / 'bin' / 'python3'}"],
        cwd=clone, env={"PATH": path}, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    made = calls.read_text().splitlines() if calls.exists() else []
    calls.unlink(missing_ok=True)
    return made


def installs(calls: list[str]) -> list[str]:
    return [call for call in calls if call.startswith("uv pip install")]


@pytest.mark.parametrize(
    ("target", "install"),
    [("demo", DEMO_INSTALL), (".venv/.installed-stamp", TEST_INSTALL)],
    ids=["make-demo-without-the-test-tools", "make-test-with-them"],
)
def test_a_fresh_clone_gets_its_venv_uv_and_one_install_and_then_the_demo_installs_nothing(
    clone: Path, target: str, install: str
) -> None:
    stand_ins(clone)
    calls = make(clone, target)
    assert calls[0] == "python3 -m venv --without-pip .venv"
    assert calls[1].startswith("python3 -m pip --python .venv/bin/python install --quiet uv==")
    assert installs(calls) == [install]
    assert make(clone, "demo") == ["kai-chatops demo"]


def test_make_test_after_make_demo_installs_the_test_extras_compiled(clone: Path) -> None:
    stand_ins(clone)
    make(clone, "demo")
    calls = make(clone, ".venv/.installed-stamp")
    assert not any("-m venv" in call or "uv==" in call for call in calls)  # .venv and uv kept
    assert installs(calls) == [TEST_INSTALL]
    assert make(clone, ".venv/.installed-stamp") == []
    assert make(clone, "demo") == ["kai-chatops demo"]


def test_a_changed_pyproject_installs_again(clone: Path) -> None:
    stand_ins(clone)
    make(clone, ".venv/.installed-stamp")
    later = (clone / ".venv" / ".installed-stamp").stat().st_mtime + 10
    os.utime(clone / "pyproject.toml", (later, later))
    assert installs(make(clone, "demo")) == [DEMO_INSTALL]
    assert len(installs(make(clone, ".venv/.installed-stamp"))) == 1


def test_without_pip_beside_python_uv_comes_through_the_pip_of_ensurepip(clone: Path) -> None:
    stand_ins(clone, host_pip=False)
    calls = make(clone, "demo")
    assert "python -m ensurepip --default-pip" in calls
    assert any(call.startswith("python -m pip install --quiet uv==") for call in calls)
    assert installs(calls) == [DEMO_INSTALL]
