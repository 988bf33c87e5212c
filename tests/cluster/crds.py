"""The CRDs the bot reads, taken from upstream Go modules at pinned versions, never written by hand.

    python3 tests/cluster/crds.py DEST_DIR

Each module is fetched with `go mod download -json MODULE@VERSION` (the Go module proxy's zip holds
the repository's files) and the CRD files are copied from where upstream keeps them. One kind is not
shipped as YAML in any module the proxy serves: Flux's HelmRelease (helm-controller's root module is
not served; its api module holds only Go), so it is generated with controller-gen from
github.com/fluxcd/helm-controller/api/v2, as upstream's Makefile does, in build/crdgen/.

A stamp file names the sources; when it matches, nothing is fetched (warm runs cost a stat).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CRDGEN = HERE / "build" / "crdgen"


@dataclass(frozen=True)
class Shipped:
    """CRD files shipped inside an upstream module (paths relative to the module root)."""

    module: str
    version: str
    files: tuple[str, ...]


# Versions: the newest each project published whose go.mod accepts Go 1.26 (newer ones of Argo CD
# and Flux need Go 1.27 even to be downloaded with GOTOOLCHAIN=local). KAI: v0.12.0 is the one tag
# the proxy serves.
SHIPPED = (
    Shipped(
        "github.com/kedacore/keda/v2",
        "v2.21.0",
        (
            "config/crd/bases/keda.sh_scaledjobs.yaml",
            "config/crd/bases/keda.sh_scaledobjects.yaml",
            "config/crd/bases/keda.sh_triggerauthentications.yaml",
        ),
    ),
    Shipped(
        "github.com/argoproj/argo-cd/v3",
        "v3.5.7",
        ("manifests/crds/application-crd.yaml", "manifests/crds/appproject-crd.yaml"),
    ),
    Shipped(
        "github.com/fluxcd/kustomize-controller",
        "v1.9.6",
        ("config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml",),
    ),
    Shipped(
        "github.com/fluxcd/source-controller",
        "v1.9.6",
        tuple(
            f"config/crd/bases/source.toolkit.fluxcd.io_{p}.yaml"
            for p in (
                "gitrepositories",
                "ocirepositories",
                "helmrepositories",
                "helmcharts",
                "buckets",
            )
        ),
    ),
    Shipped(
        "github.com/NVIDIA/KAI-scheduler",
        "v0.12.0",
        tuple(
            f"deployments/kai-scheduler/crds/{f}.yaml"
            for f in (
                "kai.scheduler_configs",
                "kai.scheduler_schedulingshards",
                "kai.scheduler_topologies",
                "scheduling.run.ai_queues",
                "scheduling.run.ai_podgroups",
                "scheduling.run.ai_bindrequests",
            )
        ),
    ),
)

# The upstream tier's controllers need these too: KEDA's operator starts a controller for each of
# its six kinds (kedacore/keda cmd/operator/main.go), source-controller serves ExternalArtifact
# (kustomize-controller watches it). Installed on the upstream tier's own API server only.
UPSTREAM_SHIPPED = (
    Shipped(
        "github.com/kedacore/keda/v2",
        "v2.21.0",
        (
            "config/crd/bases/keda.sh_clustertriggerauthentications.yaml",
            "config/crd/bases/eventing.keda.sh_cloudeventsources.yaml",
            "config/crd/bases/eventing.keda.sh_clustercloudeventsources.yaml",
        ),
    ),
    Shipped(
        "github.com/fluxcd/source-controller",
        "v1.9.6",
        ("config/crd/bases/source.toolkit.fluxcd.io_externalartifacts.yaml",),
    ),
)

# Generated: (package, the version build/crdgen/go.mod requires).
GENERATED = (("github.com/fluxcd/helm-controller/api/v2", "github.com/fluxcd/helm-controller/api"),)

STAMP = ".sources"


def go_env() -> dict[str, str]:
    """The environment every Go command of the tier runs in (cluster_build.py's)."""
    from cluster_build import go_env as build_env  # beside this file; imports crds lazily

    return build_env()


def crdgen_pin(module: str) -> str:
    for line in (CRDGEN / "go.mod").read_text().splitlines():
        parts = line.replace("require ", "").split()
        if len(parts) >= 2 and parts[0] == module:
            return parts[1]
    raise SystemExit(f"{module} not required in {CRDGEN / 'go.mod'}")


Generated = tuple[tuple[str, str], ...]


def sources(shipped: tuple[Shipped, ...] = SHIPPED, generated: Generated = GENERATED) -> str:
    lines = [f"{s.module}@{s.version} {f}" for s in shipped for f in s.files]
    lines += [f"controller-gen {pkg} ({mod}@{crdgen_pin(mod)})" for pkg, mod in generated]
    if generated:
        lines.append(f"controller-tools@{crdgen_pin('sigs.k8s.io/controller-tools')}")
    return "\n".join(lines) + "\n"


def module_dir(module: str, version: str) -> Path:
    with tempfile.TemporaryDirectory() as cwd:  # outside any module: no go.mod gets touched
        out = subprocess.run(
            ["go", "mod", "download", "-json", f"{module}@{version}"],
            capture_output=True,
            text=True,
            env=go_env(),
            cwd=cwd,
        )
    info = json.loads(out.stdout or "{}")
    if out.returncode != 0 or "Dir" not in info:
        raise RuntimeError(f"go mod download {module}@{version}: {info.get('Error', out.stderr)}")
    return Path(info["Dir"])


def generate(package: str, dest: Path) -> None:
    subprocess.run(
        [
            "go",
            "tool",
            "controller-gen",
            "crd:crdVersions=v1",
            f"paths={package}",
            f"output:crd:dir={dest}",
        ],
        check=True,
        cwd=CRDGEN,
        env=go_env(),
    )


def folder(
    parent: Path, shipped: tuple[Shipped, ...] = SHIPPED, generated: Generated = GENERATED
) -> Path:
    """Where these sources' CRDs go: two checkouts that pin different CRDs never share one."""
    return parent / hashlib.sha256(sources(shipped, generated).encode()).hexdigest()[:12]


def is_fetched(
    parent: Path, shipped: tuple[Shipped, ...] = SHIPPED, generated: Generated = GENERATED
) -> bool:
    """Whether `fetch_all(parent, shipped, generated)` would find everything in place."""
    stamp = folder(parent, shipped, generated) / STAMP
    return stamp.is_file() and stamp.read_text() == sources(shipped, generated)


def fetch_all(
    parent: Path, shipped: tuple[Shipped, ...] = SHIPPED, generated: Generated = GENERATED
) -> Path:
    """The `folder` of CRD files for these sources, filled unless its stamp names them."""
    want = sources(shipped, generated)
    dest = folder(parent, shipped, generated)
    stamp = dest / STAMP
    if stamp.is_file() and stamp.read_text() == want:
        return dest
    tmp = dest.with_name(f"{dest.name}.{os.getpid()}.partial")  # two fetches at once never collide
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for one in shipped:
        print(f"CRDs from {one.module}@{one.version}", flush=True)
        root = module_dir(one.module, one.version)
        for rel in one.files:
            shutil.copyfile(root / rel, tmp / Path(rel).name)
    for package, module in generated:
        print(f"CRDs generated by controller-gen from {package}@{crdgen_pin(module)}", flush=True)
        generate(package, tmp)
    (tmp / STAMP).write_text(want)
    if stamp.is_file() and stamp.read_text() == want:  # another process finished first
        shutil.rmtree(tmp)
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    tmp.replace(dest)
    return dest


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = fetch_all(Path(argv[0]))
    print("\n".join(sorted(p.name for p in out.glob("*.yaml"))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
