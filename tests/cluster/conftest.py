"""The cluster tier: one real control plane per pytest session (see controlplane.py).

The binaries and CRDs are built/fetched by cluster_build.py into a per-machine cache; when they are
missing the `control_plane` fixture builds them first (minutes on a new machine, nothing on a warm
one). The tests skip, saying why, only where Go is absent.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from testbed.sim import Simulator
from testbed.stack import ServiceStack, running_service

if TYPE_CHECKING:
    from clocks import Clock

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import botcalls  # noqa: E402
import cluster_build as build  # noqa: E402
import crds  # noqa: E402
import metrics_api as metrics  # noqa: E402
from controlplane import BOT_NAMESPACE, BOT_SERVICE_ACCOUNT, ControlPlane, poll  # noqa: E402
from metrics_api import MetricsApi  # noqa: E402
from seeding import Seeder  # noqa: E402
from upstream.cluster import Upstream, why_not_here  # noqa: E402
from upstream.workloads import Workloads  # noqa: E402

METRICS_APISERVICE = "v1beta1.external.metrics.k8s.io"

# The context of the kubeconfig `ControlPlane.mint_bot_kubeconfig` writes: named after its user.
BOT_CONTEXT = f"system:serviceaccount:{BOT_NAMESPACE}:{BOT_SERVICE_ACCOUNT}"

# The first test of the tier starts the control plane (and may build it): give it the time that
# takes, not the 60 s of the unit tests.
START_TIMEOUT_S = 300
BUILD_TIMEOUT_S = 3600


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "cluster: needs the real control plane of tests/cluster (etcd, kube-apiserver)"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # First, so that `-m "not cluster"` (run after this) deselects the tier.
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.cluster)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    # After every deselection (-k, -m): the first test that will run starts the control plane,
    # and the first of the upstream tier's tests starts its own (building what is missing).
    ours = [i for i in session.items if HERE in Path(str(i.path)).parents]
    if ours:
        timeout = BUILD_TIMEOUT_S if needs_build() else START_TIMEOUT_S
        ours[0].add_marker(pytest.mark.timeout(timeout))
    upstream = [i for i in ours if Path(str(i.path)).name.startswith(UPSTREAM_TESTS)]
    if upstream:
        # Cold, KEDA's operator alone is about half an hour on 2 busy cores (README).
        timeout = 2 * BUILD_TIMEOUT_S if needs_build(upstream=True) else START_TIMEOUT_S
        upstream[0].add_marker(pytest.mark.timeout(timeout))


UPSTREAM_TESTS = "test_upstream_"


def needs_build(*, upstream: bool = False) -> bool:
    binaries = build.BINARIES + build.UPSTREAM_BINARIES if upstream else build.BINARIES
    return bool(build.missing(binaries)) or not crds.is_fetched(build.cache_dir() / "crds")


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    if needs_build() and shutil.which("go") is None:
        pytest.skip("Go is not installed: the cluster tier builds kube-apiserver and etcd with it")
    started = time.monotonic()
    bin_dir = build.build()
    crd_dir = crds.fetch_all(build.cache_dir() / "crds")
    built_s = time.monotonic() - started
    run_dir = tmp_path_factory.mktemp("control-plane")
    plane = ControlPlane(
        bin_dir=bin_dir,
        crd_dir=crd_dir,
        run_dir=run_dir,
        kwok_bin=build.kwok_bin(),
        kwok_stages=build.kwok_stages(),
    )
    plane.timings["build_check_s"] = built_s
    plane.start()
    announce("control plane", plane.url, plane.timings, run_dir)
    try:
        yield plane
    finally:
        plane.stop()


# What KAI Scheduler's and KEDA's own installs create: the base reads there.
PRODUCT_NAMESPACES = ("kai-scheduler", "keda")


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A control plane of the module's own, with nothing applied (etcd and kube-apiserver, a few
    seconds): deploy/ installed on it as on a cluster with only KAI Scheduler and KEDA."""
    if build.missing() and shutil.which("go") is None:
        pytest.skip("Go is not installed: the cluster tier builds kube-apiserver and etcd with it")
    plane = ControlPlane(
        bin_dir=build.build(),
        crd_dir=build.cache_dir() / "crds",
        run_dir=tmp_path_factory.mktemp("bare-control-plane"),
        controller_manager=False,
        bare=True,
    )
    with plane:
        for namespace in PRODUCT_NAMESPACES:
            plane.ensure_namespace(namespace)
        yield plane


def announce(what: str, url: str, timings: dict[str, float], run_dir: Path) -> None:
    shown = ", ".join(f"{k} {v:.1f}" for k, v in timings.items())
    print(f"\n{what} at {url} ({shown}); logs in {run_dir / 'logs'}")


@pytest.fixture(scope="session")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    """The upstream tier (upstream/cluster.py): its own control plane with kwok GPU nodes and
    the real KAI Scheduler, KEDA and Flux controllers, started once for the session."""
    why = why_not_here()
    if why is not None:
        pytest.skip(f"the upstream tier cannot run here: {why}")
    if needs_build(upstream=True) and shutil.which("go") is None:
        pytest.skip("Go is not installed: the upstream tier builds KAI, KEDA and Flux with it")
    started = time.monotonic()
    build.build(upstream=True)
    crds.fetch_all(build.cache_dir() / "crds-upstream", crds.UPSTREAM_SHIPPED, ())
    built_s = time.monotonic() - started
    run_dir = tmp_path_factory.mktemp("upstream")
    cluster = Upstream(run_dir)
    cluster.timings["build_check_s"] = built_s
    cluster.start()
    announce("upstream tier", cluster.plane.url, cluster.timings, run_dir)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def made(upstream: Upstream) -> Iterator[Workloads]:
    """GPU pods and Jobs a test makes in `annia` for KAI's scheduler, deleted after it."""
    ours = Workloads(upstream.plane, "annia")
    try:
        yield ours
    finally:
        ours.delete_all()


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    """A simulator with the default scenario and its imitated KEDA and Flux controllers
    running: the other side of the upstream tier's differential tests."""
    async with Simulator(scenarios=["default"]) as running:
        running.start_controllers(keda=True)
        yield running


@pytest.fixture(scope="session")
def controllers(control_plane: ControlPlane) -> Iterator[subprocess.Popen[str]]:
    """Flux, Argo CD and KEDA played by `testbed.apicontrollers`, as the admin, all session."""
    log = (control_plane.run_dir / "logs" / "apicontrollers.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "testbed.apicontrollers",
            "--kubeconfig",
            str(control_plane.admin_kubeconfig),
            "--keda",
        ],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # the process says `ready` once it follows every type
    assert line.strip() == "ready", f"apicontrollers did not start: {line!r}"
    yield process
    process.terminate()
    process.wait(timeout=15)
    log.close()


@pytest.fixture(scope="session")
def metrics_api(control_plane: ControlPlane) -> Iterator[MetricsApi | None]:
    """KEDA's metrics API served from a network namespace of the run's own (None, and the
    APIService left unavailable, where this machine cannot make one: see `metrics_api.py`)."""
    if metrics.available() is not None:
        yield None
        return
    served = MetricsApi(control_plane.run_dir)
    served.start()
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture
def scenario(control_plane: ControlPlane, metrics_api: MetricsApi | None) -> list[dict[str, Any]]:
    """The default scenario's objects, reset to what its files say before each test, with
    KEDA's metrics API served and Available where the machine allows."""
    seeder = Seeder(control_plane.admin())
    docs = seeder.scenario()
    if metrics_api is not None:
        serve_metrics(control_plane, metrics_api)
    return docs


def serve_metrics(control_plane: ControlPlane, served: MetricsApi) -> None:
    """Point the metrics Service at the served API, and wait for the aggregator to agree."""
    seeder = Seeder(control_plane.admin())
    seeder.replace(served.endpoint_slice())
    seeder.patch(
        "apiregistration.k8s.io/v1",
        "APIService",
        METRICS_APISERVICE,
        None,
        {"spec": {"caBundle": served.ca_bundle}},
    )
    poll("the metrics APIService Available", lambda: metrics_available(seeder), 60)


def metrics_available(seeder: Seeder) -> bool | None:
    found = seeder.read("apiregistration.k8s.io/v1", "APIService", METRICS_APISERVICE)
    conditions = (found or {}).get("status", {}).get("conditions") or []
    return (
        True
        if any(c["type"] == "Available" and c["status"] == "True" for c in conditions)
        else None
    )


@pytest.fixture
async def stack(
    control_plane: ControlPlane,
    controllers: subprocess.Popen[str],
    scenario: list[dict[str, Any]],
    tmp_path: Path,
) -> AsyncIterator[ServiceStack]:
    """The service, configured as in the e2e tier, talking to the real API server with its
    ServiceAccount's token, driven through the Slack emulator."""
    kubeconfig = str(control_plane.bot_kubeconfig)
    async with running_service(tmp_path, kubeconfig, context=BOT_CONTEXT) as served:
        yield served


def serving_as_bot(
    control_plane: ControlPlane, workdir: Path, clock: Clock, config: dict[str, Any]
) -> AbstractAsyncContextManager[ServiceStack]:
    """The service with its ServiceAccount's token and `config`, on the test's clock (the
    checks measure what the API server stamps by it)."""
    return running_service(
        workdir,
        str(control_plane.bot_kubeconfig),
        context=BOT_CONTEXT,
        clock=clock,
        monotonic=clock.monotonic,
        config_overrides=config,
    )


# The RBAC and admission tests' identities and objects of their own (tests/cluster/botcalls.py).
@pytest.fixture(scope="module")
def bot(control_plane: ControlPlane) -> botcalls.Caller:
    return botcalls.bot_caller(control_plane)


@pytest.fixture(scope="module")
def admin(control_plane: ControlPlane) -> botcalls.Caller:
    return botcalls.admin_caller(control_plane)


@pytest.fixture
def seeder(control_plane: ControlPlane) -> Iterator[botcalls.Seeder]:
    made = botcalls.Seeder(control_plane)
    try:
        yield made
    finally:
        made.cleanup()
