"""Kubeconfig files read once for a whole fleet, and narrowed to one context at a time.

The client's own loading (kubernetes-client python `kubernetes/config/kube_config.py`:
`KubeConfigMerger` merges the files, then `KubeConfigLoader.set_active_context` finds the context,
its cluster and its user with `ConfigNode.get_with_name`, a scan of the whole list) is linear in
the number of contexts for each context loaded, and its merge is quadratic: a service of 1 000
clusters named as contexts of one file spent seconds starting. Here each file is parsed once (with
libyaml when PyYAML has it), merged by the same rules (a KUBECONFIG list: the first file naming a
cluster, context or user wins; the last `current-context` wins; other top-level keys come from
the first file), and each context is given to the client's loader with only its own context,
cluster and user, so the loader's scans are one entry long and its checks and messages are its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import yaml

SECTIONS = ("clusters", "contexts", "users")
# The `KUBECONFIG` list separator, as the client splits it (`ENV_KUBECONFIG_PATH_SEPARATOR`).
PATH_SEPARATOR = ";" if os.name == "nt" else ":"
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Named:
    """One entry of a section (`{"name": ..., "cluster": {...}}`) and the file it came from
    (relative certificate paths are relative to that file's directory)."""

    value: dict[str, Any]
    path: str


@dataclass
class KubeconfigIndex:
    """The merged files: top-level keys, and each section's entries by name."""

    path: str = ""  # the first file read (the client names the merged config after it)
    top: dict[str, Any] = field(default_factory=dict)
    entries: dict[str, dict[str, Named]] = field(default_factory=lambda: {s: {} for s in SECTIONS})

    @classmethod
    def read(cls, paths: str) -> KubeconfigIndex | None:
        """The files of `paths` (one path, or a KUBECONFIG list) that exist, merged; None when
        none exists.

        Raises:
            OSError, yaml.YAMLError: a file cannot be read or parsed; ValueError: a file is
            empty or not a mapping.
        """
        index = None
        for path in paths.split(PATH_SEPARATOR):
            path = os.path.expanduser(path) if path else ""
            if path and os.path.exists(path):
                index = index or cls(path=path)
                index.add(path, _parse(path))
        return index

    def add(self, path: str, config: dict[str, Any]) -> None:
        if not self.top:
            self.top = {k: v for k, v in config.items() if k not in SECTIONS}
        for section in SECTIONS:
            known = self.entries[section]
            for entry in config.get(section) or []:
                name = entry.get("name") if isinstance(entry, dict) else None
                if isinstance(name, str) and name not in known:
                    known[name] = Named(entry, path)
        if "current-context" in config:
            self.top["current-context"] = config["current-context"]

    def narrowed(self, context: str | None) -> dict[str, list[Named]]:
        """Each section as the loader needs it for `context` (else the current context): that
        context, its cluster and its user, or nothing where the name is unknown (the loader
        then says which is missing)."""
        name = context or self.top.get("current-context")
        found = self.entries["contexts"].get(str(name)) if name else None
        if found is None:
            return {s: [] for s in SECTIONS}
        inner = found.value.get("context") or {}
        wanted = {"contexts": found.value.get("name"), "clusters": inner.get("cluster"),
                  "users": inner.get("user")}  # fmt: skip
        return {
            s: [e] if (e := self.entries[s].get(str(wanted[s]))) is not None else []
            for s in SECTIONS
        }


def _parse(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        config = yaml.load(f, Loader=_Loader)  # a safe loader, C or Python
    if config is None:
        raise ValueError(f"Invalid kube-config. {path} file is empty")
    if not isinstance(config, dict):
        raise ValueError(f"Invalid kube-config. {path} is not a mapping")
    return config
