"""The cluster tier: one real control plane per pytest session (see controlplane.py).

The binaries and CRDs are built/fetched by cluster_build.py into a per-machine cache; when they are
missing the `control_plane` fixture builds them first (minutes on a new machine, nothing on a warm
one). The tests skip, saying why, only where Go is absent.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import cluster_build as build  # noqa: E402
import crds  # noqa: E402
from controlplane import ControlPlane  # noqa: E402

# The first test of the tier starts the control plane (and may build it): give it the time that
# takes, not the 60 s of the unit tests.
START_TIMEOUT_S = 120
BUILD_TIMEOUT_S = 3600


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "cluster: needs the real control plane of tests/cluster (etcd, kube-apiserver)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [i for i in items if HERE in Path(str(i.path)).parents]
    for item in ours:
        item.add_marker(pytest.mark.cluster)
    if ours:
        timeout = BUILD_TIMEOUT_S if needs_build() else START_TIMEOUT_S
        ours[0].add_marker(pytest.mark.timeout(timeout))


def needs_build() -> bool:
    return bool(build.missing()) or not (build.cache_dir() / "crds" / crds.STAMP).is_file()


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    if needs_build() and shutil.which("go") is None:
        pytest.skip("Go is not installed: the cluster tier builds kube-apiserver and etcd with it")
    started = time.monotonic()
    bin_dir = build.build()
    crd_dir = crds.fetch_all(build.cache_dir() / "crds")
    built_s = time.monotonic() - started
    run_dir = tmp_path_factory.mktemp("control-plane")
    plane = ControlPlane(bin_dir=bin_dir, crd_dir=crd_dir, run_dir=run_dir)
    plane.timings["build_check_s"] = built_s
    plane.start()
    timings = ", ".join(f"{k} {v:.1f}" for k, v in plane.timings.items())
    print(f"\ncontrol plane at {plane.url} ({timings}); logs in {run_dir / 'logs'}")
    try:
        yield plane
    finally:
        plane.stop()
