"""Scenario files: the objects a simulated cluster starts with, as multi-document YAML.

Names resolve to the packaged `testbed/sim/scenarios/<name>.yaml` files (`default` is all of
`kai-healthy`, `keda`, `flux`, `argocd`, `kai-workloads` and `gpu-nodes`); anything else is
read as a path.
Documents come back CRDs first, then Namespaces, then the rest in file order, so they can be
created in turn.
"""

from __future__ import annotations

import copy
import functools
import importlib.resources
from pathlib import Path
from typing import Any

import yaml

COMPOSITES = {"default": ("kai-healthy", "keda", "flux", "argocd", "kai-workloads", "gpu-nodes")}
ALIASES = {"healthy": "kai-healthy"}
_FIRST = {"CustomResourceDefinition": 0, "Namespace": 1}
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def scenario_names() -> list[str]:
    """Every packaged scenario name, composites included."""
    files = importlib.resources.files("testbed.sim").joinpath("scenarios")
    packaged = [e.name.removesuffix(".yaml") for e in files.iterdir() if e.name.endswith(".yaml")]
    return sorted([*packaged, *COMPOSITES])


def load_documents(name_or_path: str) -> list[dict[str, Any]]:
    """The objects of a scenario (by name) or of a YAML file (by path), in creation order.

    Raises:
        ValueError: for a name that is neither a packaged scenario nor an existing file, or a
            document that is not a Kubernetes object.
    """
    name = ALIASES.get(name_or_path, name_or_path)
    if name in COMPOSITES:
        return _ordered([doc for part in COMPOSITES[name] for doc in load_documents(part)])
    packaged = _packaged(name)
    documents = copy.deepcopy(list(packaged)) if packaged else _parse(_read(name), name)
    return _ordered(documents)


@functools.cache
def _packaged(name: str) -> tuple[dict[str, Any], ...]:
    """A packaged scenario's documents, parsed once per process (callers get copies)."""
    resource = (
        importlib.resources.files("testbed.sim").joinpath("scenarios").joinpath(f"{name}.yaml")
    )
    if not resource.is_file():
        return ()
    return tuple(_parse(resource.read_text(encoding="utf-8"), name))


def _read(name: str) -> str:
    path = Path(name).expanduser()
    if path.is_file():
        return path.read_text(encoding="utf-8")
    known = ", ".join(scenario_names())
    raise ValueError(f"unknown scenario {name!r}: not a file, and not one of {known}")


def _parse(text: str, source: str) -> list[dict[str, Any]]:
    documents: list[dict[str, Any]] = []
    for doc in yaml.load_all(text, Loader=_LOADER):
        if doc is None:
            continue
        if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind"):
            raise ValueError(f"{source}: not a Kubernetes object: {str(doc)[:80]}")
        if doc["kind"] == "List":
            documents.extend(doc.get("items") or [])
        else:
            documents.append(doc)
    return documents


def _ordered(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(documents, key=lambda doc: _FIRST.get(str(doc.get("kind")), 2))
