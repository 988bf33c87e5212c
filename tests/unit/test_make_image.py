"""`make image` and `make push`: the image from deploy/Dockerfile with the container tool at hand.

No container engine runs here, so the tool is a stand-in script on PATH that records how it was
called; with none of docker, podman or buildah on PATH, `make image` names them and fails.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "registry.example.com/kai-chatops:0.2.0"
MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def make(*args: str, path: str) -> subprocess.CompletedProcess[str]:
    assert MAKE is not None
    return subprocess.run(
        [MAKE, "--no-print-directory", "-C", str(ROOT), *args],
        env={"PATH": path},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def stand_in(directory: Path, tool: str) -> Path:
    """An executable `tool` that appends its arguments to `directory/calls`."""
    directory.mkdir(exist_ok=True)
    script = directory / tool
    script.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{directory / "calls"}"\n')
    script.chmod(0o755)
    return directory / "calls"


def test_make_n_image_prints_the_build_of_deploy_dockerfile_with_image_and_version() -> None:
    done = make("-n", "image", f"IMAGE={IMAGE}", "VERSION=0.2.0", "CONTAINER_TOOL=podman", path="")
    assert done.returncode == 0, done.stderr
    build = done.stdout.strip().splitlines()[-1]
    assert build == f"podman build -f deploy/Dockerfile --build-arg VERSION='0.2.0' -t '{IMAGE}' ."


@pytest.mark.parametrize(
    ("tools", "used"),
    [(["podman"], "podman"), (["buildah"], "buildah"), (["buildah", "podman", "docker"], "docker")],
)
def test_make_push_builds_then_pushes_with_the_first_tool_on_path(
    tmp_path: Path, tools: list[str], used: str
) -> None:
    bin_dir = tmp_path / "bin"
    for tool in tools:
        calls = stand_in(bin_dir, tool)
    done = make("push", f"IMAGE={IMAGE}", "VERSION=0.2.0", path=str(bin_dir))
    assert done.returncode == 0, done.stderr
    assert calls.read_text().splitlines() == [
        f"{used} build -f deploy/Dockerfile --build-arg VERSION=0.2.0 -t {IMAGE} .",
        f"{used} push {IMAGE}",
    ]


def test_without_docker_podman_or_buildah_make_image_names_them_and_fails(tmp_path: Path) -> None:
    done = make("image", f"IMAGE={IMAGE}", "VERSION=0.2.0", path=str(tmp_path))
    assert done.returncode != 0
    assert "make image: none of docker, podman or buildah is on the PATH" in done.stderr
    assert "CONTAINER_TOOL=" in done.stderr


def test_the_image_tag_defaults_to_the_version_a_tag_can_carry() -> None:
    # setuptools-scm's local versions carry a `+`, which an image tag may not.
    done = make("-n", "image", "VERSION=0.2.1.dev3+gabc1234", "CONTAINER_TOOL=docker", path="")
    assert "-t 'kai-chatops:0.2.1.dev3-gabc1234'" in done.stdout
