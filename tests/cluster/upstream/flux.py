"""Flux v1.9.6 for real: source-controller fetching a Git repository served on loopback by Flux's
own test server, kustomize-controller applying it.

Both controllers run on this host with the admin's kubeconfig, every address on loopback
(`--metrics-addr`, `--health-addr`; source-controller's artifact server on `--storage-addr`,
advertised as the same `--storage-adv-addr`, which kustomize-controller downloads from), leader
election off (fluxcd/pkg runtime/leaderelection `--enable-leader-election`, default false), no
notification-controller (`--events-addr` empty: Flux records its Kubernetes Events only). The Git
server is `build/flux/cmd/gittestserver` (a small main around github.com/fluxcd/pkg/gittestserver,
which source-controller's own tests use): it commits each fixture directory to `main` at start.

The repository holds two paths: `apps` (a ConfigMap, applied) and `broken` (a kustomization.yaml
naming a file that is not there, so `kustomize build` fails in Flux's words).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controlplane import ControlPlane, Process, free_port, poll

NAMESPACE = "flux-system"
REPOSITORY = "upstream-app"
APPS = "upstream-apps"
BROKEN = "upstream-broken"
SOURCE_API = "source.toolkit.fluxcd.io/v1"
KUSTOMIZE_API = "kustomize.toolkit.fluxcd.io/v1"
FIXTURE = {
    "apps/kustomization.yaml": "resources:\n  - configmap.yaml\n",
    "apps/configmap.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: upstream-app-settings\n"
        f"  namespace: {NAMESPACE}\ndata:\n  greeting: hello\n"
    ),
    "broken/kustomization.yaml": "resources:\n  - missing.yaml\n",
}


def write_fixture(directory: Path) -> Path:
    for rel, text in FIXTURE.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return directory


def start_git_server(plane: ControlPlane, binary: Path) -> str:
    """The Git server with the fixture committed as `upstream/app.git`; its repository URL."""
    work = plane.run_dir / "flux"
    fixture = write_fixture(work / "fixture")
    process = plane.spawn(
        "gittestserver",
        [
            str(binary),
            f"-root={work / 'git'}",
            "-branch=main",
            f"-repo=upstream/app.git={fixture}",
        ],
    )

    def url() -> str | None:
        process.check_alive()
        first = process.log.read_text().partition("\n")
        return first[0].strip() if first[1] and first[0].startswith("http://") else None

    return poll("the Git server's address", url, 30) + "/upstream/app.git"


def start_controllers(
    plane: ControlPlane, bins: dict[str, Path], kubeconfig: Path
) -> list[Process]:
    """source-controller, then kustomize-controller (see the module doc for the flags)."""
    storage = f"127.0.0.1:{free_port()}"
    artifacts = plane.run_dir / "flux" / "artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)  # it must exist (fluxcd/pkg artifact/storage)
    env = {"KUBECONFIG": str(kubeconfig), "RUNTIME_NAMESPACE": NAMESPACE}
    common = ["--watch-all-namespaces=true", "--enable-leader-election=false", "--log-level=info"]
    source = plane.spawn(
        "source-controller",
        [
            str(bins["source-controller"]),
            f"--storage-path={artifacts}",
            f"--storage-addr={storage}",
            f"--storage-adv-addr={storage}",
            f"--metrics-addr=127.0.0.1:{free_port()}",
            f"--health-addr=127.0.0.1:{free_port()}",
            *common,
        ],
        env=env,
    )
    kustomize = plane.spawn(
        "kustomize-controller",
        [
            str(bins["kustomize-controller"]),
            f"--metrics-addr=127.0.0.1:{free_port()}",
            f"--health-addr=127.0.0.1:{free_port()}",
            *common,
        ],
        env=env,
    )
    return [source, kustomize]


def git_repository(url: str) -> dict[str, Any]:
    return {
        "apiVersion": SOURCE_API,
        "kind": "GitRepository",
        "metadata": {"name": REPOSITORY, "namespace": NAMESPACE},
        "spec": {"url": url, "interval": "10m", "timeout": "60s", "ref": {"branch": "main"}},
    }


def kustomization(name: str, path: str) -> dict[str, Any]:
    return {
        "apiVersion": KUSTOMIZE_API,
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "interval": "10m",
            "retryInterval": "10m",  # a failure is retried only when asked, within a test
            "path": f"./{path}",
            "prune": True,
            "timeout": "60s",
            "sourceRef": {"kind": "GitRepository", "name": REPOSITORY},
        },
    }


def objects(url: str) -> list[dict[str, Any]]:
    return [git_repository(url), kustomization(APPS, "apps"), kustomization(BROKEN, "broken")]
