"""A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager.

What controller-runtime's envtest does (sigs.k8s.io/controller-runtime,
pkg/internal/testing/controlplane/apiserver.go and etcd.go), with binaries built from Go modules by
cluster_build.py, and with what this project needs on top: deploy/'s RBAC and
ValidatingAdmissionPolicies applied as a user applies them, the CRDs of KEDA, Flux, Argo CD and KAI
installed and Established, and a kubeconfig for the bot that holds a token of its ServiceAccount
minted by the TokenRequest API (never the admin's).

Every process runs in its own process group with its log in the run directory; stop() ends each
group (SIGTERM, then SIGKILL past a deadline). Waiting is polling with a deadline, never a sleep of
a fixed length.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
# The overlay with both GitOps components: the widest RBAC a team installs.
OVERLAY = DEPLOY / "overlays" / "socket-mode"
BOT_NAMESPACE = "kai-chatops"
BOT_SERVICE_ACCOUNT = "kai-chatops"
FIELD_MANAGER = "kai-chatops-cluster-tests"
SERVICE_CIDR = "10.0.0.0/24"
FAKE_NODE_ANNOTATION = "kwok.x-k8s.io/node"

T = TypeVar("T")


class ControlPlaneError(RuntimeError):
    """A process of the control plane failed, or a wait ran out of time."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def poll(what: str, check: Callable[[], T | None], deadline_s: float, every_s: float = 0.1) -> T:
    """Call `check` until it returns something other than None; fail past the deadline."""
    end = time.monotonic() + deadline_s
    last_error: Exception | None = None
    while True:
        try:
            got = check()
            if got is not None:
                return got
        except ControlPlaneError:
            raise
        except Exception as e:  # the thing polled is not there yet
            last_error = e
        if time.monotonic() > end:
            raise ControlPlaneError(f"{what}: not within {deadline_s:.0f}s (last: {last_error})")
        # A poll interval, not a wait for an event: the deadline above bounds the loop.
        time.sleep(every_s)


@dataclass
class Process:
    name: str
    argv: list[str]
    log: Path
    popen: subprocess.Popen[bytes] | None = None
    env: dict[str, str] | None = None  # added to this process' environment
    cwd: Path | None = None
    stopped: bool = False  # by stop(): its end is no failure

    def start(self) -> None:
        """Start (or start again after stop(): the log is appended to, never truncated)."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        env = None if self.env is None else {**os.environ, **self.env}
        self.stopped = False
        with self.log.open("ab") as out:
            self.popen = subprocess.Popen(
                self.argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group, ended as one
                env=env,
                cwd=self.cwd,
            )

    def check_alive(self) -> None:
        if self.popen is not None and not self.stopped and self.popen.poll() is not None:
            raise ControlPlaneError(
                f"{self.name} exited with {self.popen.returncode}; its log ends:\n{self.tail()}"
            )

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, deadline_s: float = 15.0) -> None:
        self.stopped = True
        if self.popen is None or self.popen.poll() is not None:
            return
        pgid = self.popen.pid  # start_new_session: the group id is the leader's pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=deadline_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            self.popen.wait(timeout=deadline_s)


@dataclass
class ControlPlane:
    """Start with start(); the admin and the bot talk to it through their kubeconfigs."""

    bin_dir: Path
    crd_dir: Path
    run_dir: Path
    controller_manager: bool = True
    # kube-controller-manager's --controllers (the upstream tier adds deployment and replicaset:
    # its pods run on kwok nodes, so Deployments become available for real).
    controllers: str = "garbagecollector,namespace,serviceaccount,endpointslice"
    apiserver_args: tuple[str, ...] = ()  # added to kube-apiserver's flags
    extra_crd_dirs: tuple[Path, ...] = ()  # CRDs installed beside crd_dir's
    kwok_node_ip: str = "127.0.0.1"
    # Only the API server and etcd: no CRDs, nothing of deploy/ applied, no bot token (a test
    # applies what it means to, to a cluster that has nothing else).
    bare: bool = False
    # kwok and its stage definitions (cluster_build.kwok_bin(), kwok_stages()); None: no fake nodes.
    kwok_bin: Path | None = None
    kwok_stages: Path | None = None
    ready_deadline_s: float = 90.0
    etcd_port: int = field(default_factory=free_port)
    etcd_peer_port: int = field(default_factory=free_port)
    port: int = field(default_factory=free_port)
    admin_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    kcm_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    kwok_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    kwok_port: int = field(default_factory=free_port)
    processes: list[Process] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    _dynamic: Any = field(default=None, repr=False)
    _clients: dict[Path, Any] = field(default_factory=dict, repr=False)

    # ----------------------------------------------------------------- paths and kubeconfigs
    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def pki(self) -> Path:
        return self.run_dir / "pki"

    @property
    def ca_file(self) -> Path:
        # --cert-dir makes a self-signed CA and a serving certificate signed by it (127.0.0.1 and
        # localhost among its names) and writes the chain here.
        return self.pki / "apiserver.crt"

    @property
    def admin_kubeconfig(self) -> Path:
        return self.run_dir / "admin.kubeconfig"

    @property
    def bot_kubeconfig(self) -> Path:
        return self.run_dir / "bot.kubeconfig"

    def write_kubeconfig(self, path: Path, user: str, token: str) -> Path:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "cluster-tier",
                    "cluster": {"server": self.url, "certificate-authority": str(self.ca_file)},
                }
            ],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": user, "context": {"cluster": "cluster-tier", "user": user}}],
            "current-context": user,
        }
        path.write_text(yaml.safe_dump(config))
        path.chmod(0o600)
        return path

    def api_client(self, kubeconfig: Path) -> Any:
        """One client per kubeconfig (its connection pool reused across tests)."""
        from kubernetes import config

        if kubeconfig not in self._clients:
            self._clients[kubeconfig] = config.new_client_from_config(  # type: ignore[no-untyped-call]
                config_file=str(kubeconfig)
            )
        return self._clients[kubeconfig]

    def raw_get(self, path: str, token: str | None = None) -> tuple[int, bytes]:
        """GET a path with the admin's token (or `token`), the server verified against the CA."""
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        req = urllib.request.Request(
            f"{self.url}{path}", headers={"Authorization": f"Bearer {token or self.admin_token}"}
        )
        try:
            with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
                return int(r.status), bytes(r.read())
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def admin(self) -> Any:
        return self.api_client(self.admin_kubeconfig)

    def bot(self) -> Any:
        return self.api_client(self.bot_kubeconfig)

    # ----------------------------------------------------------------------- lifecycle
    def start(self) -> ControlPlane:
        start = time.monotonic()
        try:
            self._prepare()
            self._start_etcd()
            self._start_apiserver()
            self.timings["apiserver_ready_s"] = time.monotonic() - start
            if self.controller_manager:
                self._start_controller_manager()
            if self.kwok_bin is not None:
                self._start_kwok()
            if self.bare:
                self.timings["total_s"] = time.monotonic() - start
                return self
            mark = time.monotonic()
            self.install_crds()
            self.timings["crds_established_s"] = time.monotonic() - mark
            mark = time.monotonic()
            self.apply_deploy()
            self.mint_bot_kubeconfig()
            self.wait_for_admission_policies()
            self.timings["deploy_applied_s"] = time.monotonic() - mark
        except BaseException:
            self.stop()
            raise
        self.timings["total_s"] = time.monotonic() - start
        return self

    def stop(self) -> None:
        for api in self._clients.values():
            api.close()
        self._clients.clear()
        # The controller manager and the API server before etcd, which they write to.
        for proc in reversed(self.processes):
            proc.stop()

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def check_alive(self) -> None:
        for proc in self.processes:
            proc.check_alive()

    # --------------------------------------------------------------------- processes
    def _prepare(self) -> None:
        self.pki.mkdir(parents=True, exist_ok=True)
        for binary in ("etcd", "kube-apiserver"):
            if not (self.bin_dir / binary).is_file():
                raise ControlPlaneError(
                    f"{self.bin_dir / binary} missing: run tests/cluster/cluster_build.py"
                )
        # The RSA key pair the API server signs ServiceAccount tokens with.
        key, pub = self.pki / "sa.key", self.pki / "sa.pub"
        subprocess.run(
            ["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True
        )
        subprocess.run(
            ["openssl", "rsa", "-in", str(key), "-pubout", "-out", str(pub)],
            check=True,
            capture_output=True,
        )
        # Static tokens: the admin (system:masters) and the controller manager's identity.
        (self.pki / "tokens.csv").write_text(
            f'{self.admin_token},admin,admin,"system:masters"\n'
            f'{self.kcm_token},system:kube-controller-manager,kcm,"system:masters"\n'
            f'{self.kwok_token},kwok,kwok,"system:masters"\n'
        )
        self.write_kubeconfig(self.admin_kubeconfig, "admin", self.admin_token)

    def spawn(
        self, name: str, argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> Process:
        """Start a process of the run, its log `logs/NAME.log`; stop() ends it first (the last
        started is the first stopped)."""
        proc = Process(name, argv, self.run_dir / "logs" / f"{name}.log", env=env, cwd=cwd)
        proc.start()
        self.processes.append(proc)
        return proc

    def process(self, name: str) -> Process:
        (found,) = [p for p in self.processes if p.name == name]
        return found

    def _start_etcd(self) -> None:
        client = f"http://127.0.0.1:{self.etcd_port}"
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        proc = self.spawn(
            "etcd",
            [
                str(self.bin_dir / "etcd"),
                "--name=default",
                f"--data-dir={self.run_dir / 'etcd'}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=default={peer}",
                "--unsafe-no-fsync=true",  # a throwaway store: no fsync per write
                "--log-level=warn",
            ],
        )

        def healthy() -> bool | None:
            proc.check_alive()
            with urllib.request.urlopen(f"{client}/health", timeout=2) as r:
                return True if json.load(r).get("health") == "true" else None

        poll("etcd healthy", healthy, self.ready_deadline_s)

    def _start_apiserver(self) -> None:
        proc = self.spawn(
            "kube-apiserver",
            [
                str(self.bin_dir / "kube-apiserver"),
                f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                # 1.37 refuses a loopback address for the `kubernetes` Service's endpoints.
                "--endpoint-reconciler-type=none",
                f"--secure-port={self.port}",
                f"--cert-dir={self.pki}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                f"--service-account-issuer={self.url}",
                f"--service-account-key-file={self.pki / 'sa.pub'}",
                f"--service-account-signing-key-file={self.pki / 'sa.key'}",
                "--authorization-mode=Node,RBAC",
                f"--token-auth-file={self.pki / 'tokens.csv'}",
                "--anonymous-auth=false",
                # ValidatingAdmissionPolicy is GA and on by default; named so that it stays on.
                "--enable-admission-plugins=NamespaceLifecycle,ServiceAccount,"
                "ValidatingAdmissionPolicy,ValidatingAdmissionWebhook,PodSecurity",
                # The aggregator resolves an APIService's Service to its endpoints directly, so an
                # APIService whose Service has none turns Available=False (MissingEndpoints).
                "--enable-aggregator-routing=true",
                "--profiling=false",
                *self.apiserver_args,
            ],
        )
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # the CA is only written once the server runs

        def ready() -> bool | None:
            proc.check_alive()
            req = urllib.request.Request(
                f"{self.url}/readyz", headers={"Authorization": f"Bearer {self.admin_token}"}
            )
            try:
                with urllib.request.urlopen(req, timeout=5, context=ctx) as r:
                    return True if r.status == 200 else None
            except urllib.error.HTTPError:
                return None

        poll("kube-apiserver /readyz", ready, self.ready_deadline_s, every_s=0.2)

    def _start_controller_manager(self) -> None:
        kubeconfig = self.write_kubeconfig(
            self.run_dir / "kcm.kubeconfig", "system:kube-controller-manager", self.kcm_token
        )
        self.spawn(
            "kube-controller-manager",
            [
                str(self.bin_dir / "kube-controller-manager"),
                f"--kubeconfig={kubeconfig}",
                "--leader-elect=false",
                "--secure-port=0",  # it serves nothing here
                # Namespaces finish deleting, owned objects go with their owners, Services get
                # EndpointSlices, namespaces get their `default` SA. By default not the deployment
                # and replicaset controllers: pods run only where kwok plays a node's kubelet and
                # a scheduler binds them (the upstream tier), so elsewhere they would mark every
                # Deployment unavailable; those tests write a Deployment's status themselves, as
                # the kubelet and those controllers would leave it.
                f"--controllers={self.controllers}",
                "--use-service-account-credentials=false",
            ],
        )

    def _start_kwok(self) -> None:
        assert self.kwok_bin is not None and self.kwok_stages is not None
        kubeconfig = self.write_kubeconfig(
            self.run_dir / "kwok.kubeconfig", "kwok", self.kwok_token
        )
        self.spawn(
            "kwok",
            [
                str(self.kwok_bin),
                f"--kubeconfig={kubeconfig}",
                f"--config={self.kwok_stages}",
                # Only the Nodes a test marks as fake (the annotation kwok's docs use).
                "--manage-all-nodes=false",
                f"--manage-nodes-with-annotation-selector={FAKE_NODE_ANNOTATION}=fake",
                "--cidr=10.0.1.0/24",
                f"--node-ip={self.kwok_node_ip}",
                # Its kubelet-like endpoint on loopback only (the default listens on every address).
                f"--server-address=127.0.0.1:{self.kwok_port}",
            ],
        )

    def add_gpu_node(self, name: str, gpus: int = 8) -> None:
        """A Node kwok plays the kubelet of, with `gpus` nvidia.com/gpu."""
        capacity = {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
        self.apply(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "annotations": {FAKE_NODE_ANNOTATION: "fake"},
                    "labels": {"type": "kwok", "nvidia.com/gpu.present": "true"},
                },
                "status": {"capacity": capacity, "allocatable": capacity},
            }
        )

    # ------------------------------------------------------------------- CRDs, deploy/
    def install_crds(self) -> list[str]:
        from kubernetes import client

        ext = client.ApiextensionsV1Api(self.admin())
        names: list[str] = []
        paths = [p for d in (self.crd_dir, *self.extra_crd_dirs) for p in sorted(d.glob("*.yaml"))]
        for path in paths:
            for doc in yaml.safe_load_all(path.read_text()):
                if not doc or doc.get("kind") != "CustomResourceDefinition":
                    continue
                ext.create_custom_resource_definition(doc)
                names.append(doc["metadata"]["name"])

        def established() -> bool | None:
            self.check_alive()
            for name in names:
                crd = ext.read_custom_resource_definition(name)
                status = crd.status
                conds = {c.type: c.status for c in (status.conditions or [] if status else [])}
                if conds.get("Established") != "True":
                    return None
            return True

        poll("CRDs Established", established, self.ready_deadline_s)
        return names

    def render(self, directory: Path = OVERLAY) -> list[dict[str, Any]]:
        """The objects `kustomize build DIRECTORY` prints (the kustomize kubectl embeds)."""
        done = subprocess.run(
            [str(self.bin_dir / "kustomize"), "build", str(directory)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise ControlPlaneError(f"kustomize build {directory}: {done.stderr}")
        return [d for d in yaml.safe_load_all(done.stdout) if d]

    def apply_deploy(self, directory: Path = OVERLAY) -> list[dict[str, Any]]:
        """Server-side apply of deploy/ as a user applies it, namespaces it names created first."""
        objects = self.render(directory)
        wanted = {o["metadata"].get("namespace") for o in objects} - {None}
        declared = {o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"}
        for ns in sorted(wanted - declared):
            self.ensure_namespace(ns)
        # Namespaces first, as kubectl orders them.
        for obj in sorted(objects, key=lambda o: o["kind"] != "Namespace"):
            self.apply(obj)
        return objects

    def apply(self, obj: dict[str, Any], *, dry_run: bool = False) -> Any:
        """Server-side apply of one manifest as the admin (kinds found by discovery). dry_run:
        the server admits and validates it (fieldValidation=Strict) and stores nothing."""
        from kubernetes import dynamic
        from kubernetes.dynamic.exceptions import ResourceNotFoundError

        if self._dynamic is None:
            # Discovery cached in the run directory, never in a file another run could share.
            self._dynamic = dynamic.DynamicClient(  # type: ignore[no-untyped-call]
                self.admin(), cache_file=str(self.run_dir / "discovery.json")
            )
        try:
            resource = self._dynamic.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        except ResourceNotFoundError:  # a kind installed since discovery ran (a CRD)
            self._dynamic.resources.invalidate_cache()
            resource = self._dynamic.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        return resource.server_side_apply(
            body=obj,
            name=obj["metadata"]["name"],
            namespace=obj["metadata"].get("namespace"),
            field_manager=FIELD_MANAGER,
            force_conflicts=True,
            dry_run="All" if dry_run else None,
            query_params=[("fieldValidation", "Strict")] if dry_run else [],
        )

    def bot_may(self, verb: str, group: str, resource: str, namespace: str | None) -> bool:
        """Whether the server lets the bot's ServiceAccount do it (a SubjectAccessReview)."""
        from kubernetes import client

        review = client.V1SubjectAccessReview(
            spec=client.V1SubjectAccessReviewSpec(
                user=f"system:serviceaccount:{BOT_NAMESPACE}:{BOT_SERVICE_ACCOUNT}",
                groups=["system:serviceaccounts", f"system:serviceaccounts:{BOT_NAMESPACE}"],
                resource_attributes=client.V1ResourceAttributes(
                    group=group, resource=resource, verb=verb, namespace=namespace
                ),
            )
        )
        done = client.AuthorizationV1Api(self.admin()).create_subject_access_review(review)
        return bool(done.status.allowed)

    def ensure_namespace(self, name: str) -> None:
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        core = client.CoreV1Api(self.admin())
        try:
            core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
        except ApiException as e:
            if e.status != 409:
                raise

    def mint_bot_kubeconfig(self, expiration_s: int = 3600) -> Path:
        """A token of the bot's ServiceAccount from the TokenRequest API, in its own kubeconfig."""
        from kubernetes import client

        core = client.CoreV1Api(self.admin())
        request = client.AuthenticationV1TokenRequest(
            # No audiences: the API server's own (its --service-account-issuer).
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=expiration_s)
        )
        got = core.create_namespaced_service_account_token(
            BOT_SERVICE_ACCOUNT, BOT_NAMESPACE, request
        )
        if got.status is None or not got.status.token:
            raise ControlPlaneError("TokenRequest answered without a token")
        self._clients.pop(self.bot_kubeconfig, None)
        return self.write_kubeconfig(
            self.bot_kubeconfig,
            f"system:serviceaccount:{BOT_NAMESPACE}:{BOT_SERVICE_ACCOUNT}",
            got.status.token,
        )

    def wait_for_admission_policies(self) -> None:
        """Poll until deploy/'s ValidatingAdmissionPolicies are enforced.

        The API server compiles new policies on a 1 s refresh (k8s.io/apiserver
        pkg/admission/plugin/policy/generic/policy_source.go, policyRefreshIntervalDefault), so a
        write right after applying deploy/ can pass unchecked. The probe: the bot's dry-run create
        of a ConfigMap that is not its state, which RBAC allows and `kai-chatops-own-state` (the
        last policy and binding applied, so the others are in force too) refuses.
        """
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        core = client.CoreV1Api(self.bot())
        probe = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="policy-probe"))

        def enforced() -> bool | None:
            self.check_alive()
            try:
                core.create_namespaced_config_map(BOT_NAMESPACE, probe, dry_run="All")
            except ApiException as e:
                if e.status == 403 and "kai-chatops-own-state" in str(e.body):
                    return True
                raise
            return None

        poll("deploy/'s admission policies enforced", enforced, self.ready_deadline_s)

    def logs(self) -> Iterator[tuple[str, Path]]:
        for proc in self.processes:
            yield proc.name, proc.log
