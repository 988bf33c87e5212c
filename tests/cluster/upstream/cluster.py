"""The upstream tier's cluster: a control plane of its own, kwok GPU nodes, kube-scheduler, and the
real KAI Scheduler, KEDA and Flux controllers started against it and stopped with it.

A control plane of its own, because the other tests of tests/cluster write the statuses these
controllers own (the scenarios, `testbed.apicontrollers`): two writers would fight. This one adds
what real controllers need (README "The upstream tier"): kube-controller-manager's deployment and
replicaset controllers and kube-scheduler (operand pods run on kwok nodes, so KAI's `Available` is
real), the API server's front-proxy flags (the aggregator's client certificate, which KEDA's
adapter trusts), TaintNodesByCondition off (no node lifecycle controller lifts its `not-ready`
taint; kwok makes nodes Ready at once), and a veth address of this host as the kwok nodes' IP (the
KEDA adapter's pod uses the host network, and the API server refuses loopback endpoints).

Every process has its log in the run directory (`logs/NAME.log`); stop() ends them in reverse
order. Waiting is polling with deadlines. One tier runs on a machine at a time (a lock file in
the cache): KAI v0.12's podgroupcontroller listens on every address's port 8080 whatever its
`--metrics-bind-address` says (cmd/podgroupcontroller/app/app.go never passes it on).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cluster_build as build
import crds
import metrics_api
from controlplane import ControlPlane, Process, free_port, poll
from seeding import Seeder

from upstream import flux, kai, keda, pki

CONTROLLERS = "garbagecollector,namespace,serviceaccount,endpointslice,deployment,replicaset,job"
GPU_NODES = (("gpu-node-0", 4),)
WORKLOAD_NAMESPACES = ("annia", "vision")


def why_not_here() -> str | None:
    """Why this machine cannot run the tier (None when it can): the adapter's address needs a
    veth link (root and `ip`), as metrics_api.py's network namespace does."""
    return metrics_api.available("veth links")


@dataclass
class HostAddress:
    """An address of this host that is not loopback: one end of a veth pair, the other end
    unused (nothing leaves the machine; connections to it stay on this host)."""

    subnet: int = os.getpid() % 250

    @property
    def address(self) -> str:
        return f"10.251.{self.subnet}.1"

    @property
    def link(self) -> str:
        return f"kcu{self.subnet}h"

    def start(self) -> None:
        self.stop()
        for command in (
            f"link add {self.link} type veth peer name kcu{self.subnet}n",
            f"addr add {self.address}/30 dev {self.link}",
            f"link set {self.link} up",
        ):
            subprocess.run(["ip", *command.split()], check=True, capture_output=True)

    def stop(self) -> None:
        subprocess.run(["ip", "link", "del", self.link], capture_output=True, check=False)


def bins() -> dict[str, Path]:
    return {b.name: b.path() for b in build.UPSTREAM_BINARIES}


@dataclass
class Upstream:
    """start(), then the admin's `seeder`, the processes by name, stop()."""

    run_dir: Path
    host: HostAddress = field(default_factory=HostAddress)
    plane: ControlPlane = field(init=False)
    git_url: str = ""
    keda_grpc_port: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def kubeconfig(self) -> Path:
        """The identity every upstream controller runs as (the admin: system:masters)."""
        return self.plane.admin_kubeconfig

    @property
    def seeder(self) -> Seeder:
        return Seeder(self.plane.admin())

    @property
    def keda_certs(self) -> Path:
        return self.run_dir / "keda-certs"

    def start(self, lock_deadline_s: float = 240) -> Upstream:
        started = time.monotonic()
        self._lock(lock_deadline_s)
        self.timings["lock_s"] = time.monotonic() - started
        self.host.start()
        try:
            self.plane = self._control_plane()
            self.plane.start()
            self.timings["control_plane_s"] = time.monotonic() - started
            self._start_everything()
            self.timings["ready_s"] = time.monotonic() - started
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        plane = getattr(self, "plane", None)
        if plane is not None:
            plane.stop()
        self.host.stop()
        lock = getattr(self, "_lock_file", None)
        if lock is not None:
            lock.close()  # releases the flock

    def _lock(self, deadline_s: float) -> None:
        """Take the machine's upstream-tier lock, waiting while another run holds it."""
        path = build.cache_root() / "upstream.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_file = path.open("a")

        def taken() -> bool | None:
            with contextlib.suppress(BlockingIOError):
                fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            return None

        poll(f"the upstream tier's lock {path} (another run holds it)", taken, deadline_s, 0.5)

    def process(self, name: str) -> Process:
        return self.plane.process(name)

    # -------------------------------------------------------------------------- starting
    def _control_plane(self) -> ControlPlane:
        front = self.run_dir / "front-proxy"
        ca = pki.make_ca(front, "front-proxy-ca")
        client = pki.make_leaf(front, "front-proxy-client", ca, "front-proxy-client")
        return ControlPlane(
            bin_dir=build.bin_dir(),
            crd_dir=crds.fetch_all(build.cache_dir() / "crds"),
            extra_crd_dirs=(
                crds.fetch_all(build.cache_dir() / "crds-upstream", crds.UPSTREAM_SHIPPED, ()),
            ),
            run_dir=self.run_dir,
            controllers=CONTROLLERS,
            apiserver_args=(
                f"--requestheader-client-ca-file={ca.crt}",
                "--requestheader-allowed-names=front-proxy-client",
                "--requestheader-username-headers=X-Remote-User",
                "--requestheader-group-headers=X-Remote-Group",
                "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                f"--proxy-client-cert-file={client.crt}",
                f"--proxy-client-key-file={client.key}",
                "--disable-admission-plugins=TaintNodesByCondition",
            ),
            kwok_bin=build.kwok_bin(),
            kwok_stages=build.kwok_stages(),
            kwok_node_ip=self.host.address,
        )

    def _start_everything(self) -> None:
        paths = bins()
        plane = self.plane
        plane.spawn(
            "kube-scheduler",
            [
                str(paths["kube-scheduler"]),
                f"--kubeconfig={self.kubeconfig}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
            ],
        )
        for name, gpus in GPU_NODES:
            plane.add_gpu_node(name, gpus)
        for namespace in WORKLOAD_NAMESPACES:
            plane.ensure_namespace(namespace)
        # KAI: what the chart installs, then the operator.
        chart = kai.chart_objects(crds.module_dir(build.KAI, kai.VERSION))
        for obj in (*chart, *kai.workload_queues()):
            plane.apply(obj)
        kai.start_operator(plane, paths["kai-operator"], self.kubeconfig)
        # KEDA: certificates, what the chart installs, the operator and the adapter.
        ca = keda.certificates(self.keda_certs, self.host.address)
        for obj in keda.chart_objects(ca):
            plane.apply(obj)
        _, self.keda_grpc_port = keda.start_operator(
            plane, paths["keda-operator"], self.kubeconfig, self.keda_certs
        )
        self.start_keda_adapter()
        # Flux: the Git server, the controllers, the objects.
        self.git_url = flux.start_git_server(plane, paths["gittestserver"])
        flux.start_controllers(plane, paths, self.kubeconfig)
        for obj in flux.objects(self.git_url):
            plane.apply(obj)
        # KAI's operands once the operator made them, then everything ready.
        kai.start_operands(plane, paths, self.kubeconfig)
        kai.wait_healthy(plane)
        self.wait_apiservice("True")
        wait_flux_ready(self.seeder, flux.APPS)

    def start_keda_adapter(self) -> Process:
        """Start the adapter (again, after a test stopped it)."""
        try:
            process = self.process("keda-adapter")
        except ValueError:
            return keda.start_adapter(
                self.plane,
                bins()["keda-adapter"],
                self.kubeconfig,
                self.keda_certs,
                self.host.address,
                self.keda_grpc_port,
            )
        process.start()
        return process

    def nudge_aggregator(self) -> None:
        """Make the aggregator check the APIService now rather than at its next 30 s resync
        (kube-aggregator pkg/controllers/status/remote/remote_available_controller.go: any
        update of the APIService queues it), as after restarting the adapter."""
        self.seeder.patch(
            "apiregistration.k8s.io/v1",
            "APIService",
            keda.APISERVICE,
            None,
            {"metadata": {"annotations": {"kai-chatops.test/nudged": str(time.monotonic_ns())}}},
        )

    def apiservice(self) -> dict[str, Any]:
        found: dict[str, Any] = self.seeder.read(
            "apiregistration.k8s.io/v1", "APIService", keda.APISERVICE
        )
        return found

    def wait_apiservice(self, status: str, deadline_s: float = 90) -> dict[str, Any]:
        """Poll until the aggregator's `Available` condition of KEDA's APIService is `status`."""

        def reached() -> dict[str, Any] | None:
            self.plane.check_alive()
            found = self.apiservice()
            conditions = (found.get("status") or {}).get("conditions") or []
            available = next((c for c in conditions if c["type"] == "Available"), {})
            return available if available.get("status") == status else None

        return poll(f"the metrics APIService Available={status}", reached, deadline_s)


def wait_flux_ready(seeder: Seeder, name: str, deadline_s: float = 120) -> dict[str, Any]:
    """Poll until the Kustomization `name` is Ready True; the object then."""

    def ready() -> dict[str, Any] | None:
        found = seeder.read(flux.KUSTOMIZE_API, "Kustomization", name, flux.NAMESPACE)
        conditions = ((found or {}).get("status") or {}).get("conditions") or []
        is_ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
        return dict(found) if is_ready else None

    return poll(f"Kustomization {name} Ready", ready, deadline_s)
