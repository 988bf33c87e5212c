"""`make chart`: the Helm chart's RBAC and admission policies, generated from deploy/.

deploy/base and its components stay the one place the RBAC rules and the admission policies are
written (the e2e and cluster tiers test them there). The chart's copies in
deploy/chart/templates/generated/ are this tool's output, object by object, each wrapped in the
values switch that stands for its kustomize component, with the labels kustomize adds. So the two
cannot say different things: an edit in deploy/ is copied by `make chart`, an edit in the chart's
copy is overwritten, and `--check` (a unit test runs it) fails while a copy is stale.

    python tools/chart_sync.py [--check]
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
OUT = Path("deploy/chart/templates/generated")
RUN_AGAIN = "make chart"


@dataclass(frozen=True)
class Source:
    """One file of deploy/ and the values switch that renders it in the chart."""

    path: str  # relative to the repository
    guard: str | None = None  # a Helm `if` condition; None: always rendered
    # Objects named here are rendered once per namespace of this helper instead of once per
    # namespace the file lists (the file's list is the example overlay's).
    per_namespace: tuple[tuple[str, str, str], ...] = ()  # (kind, name, helper template)
    # Its text holds `{{` meant for Prometheus's or Grafana's templates, not Helm's: kept
    # literal (`{{` written as {{`{{`}}, which Helm prints as `{{`).
    literal_braces: bool = False

    @property
    def out_name(self) -> str:
        name = self.path.removeprefix("deploy/").replace("/", "-")
        return name.removesuffix(".json") + ".yaml" if name.endswith(".json") else name


IMPERSONATE = ".Values.impersonation.enabled"
MONITORING = ".Values.monitoring.enabled"
SOURCES = (
    Source("deploy/base/namespace.yaml", ".Values.namespace.create"),
    Source("deploy/base/serviceaccount.yaml"),
    Source("deploy/base/rbac-cluster.yaml"),
    Source("deploy/base/rbac-kai.yaml"),
    Source("deploy/base/rbac-diagnose.yaml"),
    Source("deploy/base/rbac-self.yaml"),
    Source("deploy/base/admission-policy.yaml"),
    Source("deploy/base/pdb.yaml"),
    Source("deploy/base/networkpolicy.yaml"),
    Source("deploy/components/flux/rbac-flux.yaml", ".Values.gitops.flux"),
    Source("deploy/components/argocd/rbac-argocd.yaml", ".Values.gitops.argocd"),
    Source(
        "deploy/components/impersonation/rbac-impersonate.yaml",
        f"and {IMPERSONATE} (not .Values.impersonation.legacy)",
        (("RoleBinding", "kai-chatops-impersonate-on", "kai-chatops.impersonateOnNamespaces"),),
    ),
    Source(
        "deploy/components/impersonation/legacy/rbac-impersonate-legacy.yaml",
        f"and {IMPERSONATE} .Values.impersonation.legacy",
    ),
    Source("deploy/components/monitoring/service.yaml", MONITORING),
    Source("deploy/components/monitoring/servicemonitor.yaml", MONITORING),
    Source("deploy/components/monitoring/prometheusrule.yaml", MONITORING, literal_braces=True),
    # Not an object of its own: the component's configMapGenerator makes a ConfigMap of it.
    Source("deploy/components/monitoring/dashboard.json", MONITORING, literal_braces=True),
)
# tools/keda_rbac.py's logic in Helm: deploy/templates/rbac-keda.yaml once per keda.namespaces.
KEDA = Source("deploy/templates/rbac-keda.yaml")
KEDA_NAMESPACES = "(.Values.config.keda | default dict).namespaces"
# The legacy grant's example names (who may be impersonated) are the chart's values; the chart
# refuses empty lists (templates/_helpers.tpl): no resourceNames would grant every name.
LEGACY_NAMES = {
    "alice@example.com": "{{ .Values.impersonation.users | toJson }}",
    "slack:oncall": "{{ .Values.impersonation.groups | toJson }}",
}


def labels_of(directory: Path) -> dict[str, str]:
    """The labels the directory's kustomization.yaml adds to every object (`labels: pairs`)."""
    kustomization = directory / "kustomization.yaml"
    if not kustomization.is_file():
        return {}
    found: dict[str, str] = {}
    for entry in yaml.safe_load(kustomization.read_text()).get("labels") or []:
        found.update(entry.get("pairs") or {})
    return found


def objects_of(root: Path, source: Source) -> list[dict[str, Any]]:
    path = root / source.path
    labels = labels_of(path.parent)
    if path.suffix == ".json":
        objects = generated_config_maps(path)
    else:
        objects = [o for o in yaml.safe_load_all(path.read_text()) if o]
    for obj in objects:
        obj["metadata"]["labels"] = {**(obj["metadata"].get("labels") or {}), **labels}
    return objects


def generated_config_maps(path: Path) -> list[dict[str, Any]]:
    """The ConfigMaps the configMapGenerator beside `path` makes of it, as kustomize does with
    `disableNameSuffixHash` (`files: [KEY=FILE]`: the file's text under KEY)."""
    kustomization = yaml.safe_load((path.parent / "kustomization.yaml").read_text())
    made: list[dict[str, Any]] = []
    for entry in kustomization.get("configMapGenerator") or []:
        files = dict(f.split("=", 1) if "=" in f else (f, f) for f in entry.get("files") or [])
        if path.name not in files.values():
            continue
        options = entry.get("options") or {}
        meta = {"name": entry["name"], "namespace": entry["namespace"]}
        meta["labels"] = dict(options.get("labels") or {})
        data = {key: (path.parent / name).read_text() for key, name in files.items()}
        made.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})
    return made


def dump(obj: dict[str, Any], *, literal_braces: bool = False) -> str:
    text = yaml.safe_dump(obj, sort_keys=False, width=100)
    if "{{" in text:  # Helm would take it for an action
        if not literal_braces:
            raise SystemExit(f"{obj['kind']} {obj['metadata']['name']}: holds '{{{{'")
        text = text.replace("{{", "{{`{{`}}")
    return text


def header(source: Source) -> str:
    return (
        f"# Generated by `{RUN_AGAIN}` (tools/chart_sync.py) from {source.path}: do not edit.\n"
        "# Why each rule is there: that file's comments. A test fails while the two disagree.\n"
    )


def guarded(source: Source, body: str) -> str:
    if source.guard is None:
        return header(source) + body
    return f"{header(source)}{{{{- if {source.guard} }}}}\n{body}{{{{- end }}}}\n"


def render_source(root: Path, source: Source) -> str:
    """The chart template of one file: each object once, or once per namespace of a helper."""
    docs: list[str] = []
    seen: set[tuple[str, str]] = set()
    per_namespace = {(kind, name): helper for kind, name, helper in source.per_namespace}
    for obj in objects_of(root, source):
        key = (obj["kind"], obj["metadata"]["name"])
        if key not in per_namespace:
            docs.append(f"---\n{legacy_names(dump(obj, literal_braces=source.literal_braces))}")
        elif key not in seen:
            seen.add(key)
            docs.append(ranged(obj, f'(include "{per_namespace[key]}" . | fromJsonArray)'))
    return guarded(source, "".join(docs))


def ranged(obj: dict[str, Any], over: str) -> str:
    obj["metadata"]["namespace"] = "NAMESPACE"
    body = dump(obj).replace("namespace: NAMESPACE", "namespace: {{ $namespace }}")
    return f"{{{{- range $namespace := {over} }}}}\n---\n{body}{{{{- end }}}}\n"


def legacy_names(text: str) -> str:
    """The legacy ClusterRole's example resourceNames, replaced by the chart's values."""
    for example, value in LEGACY_NAMES.items():
        pattern = rf"resourceNames:\n *- {re.escape(example)}\n"
        text = re.sub(pattern, f"resourceNames: {value}\n", text)
    return text


def render_keda(root: Path) -> str:
    (role, binding) = objects_of(root, KEDA)
    body = "".join(ranged(obj, KEDA_NAMESPACES) for obj in (role, binding))
    return header(KEDA) + body


def expected(root: Path) -> dict[str, str]:
    """Every generated template, by file name."""
    files = {s.out_name: render_source(root, s) for s in SOURCES}
    files[KEDA.out_name] = render_keda(root)
    return files


def problems(root: Path) -> list[str]:
    """The generated templates that are stale, missing or left over (empty: in step)."""
    out = root / OUT
    wanted = expected(root)
    found = [
        f"{OUT / name}: not what {RUN_AGAIN} makes of deploy/ (run it and commit what it writes)"
        for name, text in wanted.items()
        if not (out / name).is_file() or (out / name).read_text() != text
    ]
    if out.is_dir():
        found += [
            f"{OUT / p.name}: made from no file of deploy/ (delete it)"
            for p in sorted(out.iterdir())
            if p.name not in wanted
        ]
    return found


def write(root: Path) -> None:
    out = root / OUT
    out.mkdir(parents=True, exist_ok=True)
    wanted = expected(root)
    for stale in out.iterdir():
        if stale.name not in wanted:
            stale.unlink()
    for name, text in wanted.items():
        (out / name).write_text(text)
    print(f"{OUT}: {len(wanted)} templates from deploy/")


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    if not args.check:
        write(root)
        return 0
    found = problems(root)
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
