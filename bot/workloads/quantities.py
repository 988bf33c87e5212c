"""Kubernetes resource quantities (`"8"`, `"500m"`, `"1.5"`, `"64Gi"`) as numbers, and GPUs.

Pure. KAI writes GPU amounts in resource lists under `nvidia.com/gpu` (devices, fractions
allowed) or, for DRA, under the DeviceClass's name (`gpu.nvidia.com`), and Queue specs as plain
floats where `-1` means unlimited.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

GPU = "nvidia.com/gpu"
UNLIMITED = -1.0
_SUFFIXES = {
    "m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip
_QUANTITY = re.compile(r"^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)([a-zA-Z]*)$")


def parse_quantity(value: Any) -> float | None:
    """The number a quantity stands for, or None when it is absent or not a quantity."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    match = _QUANTITY.match(str(value).strip())
    if match is None or match.group(2) not in _SUFFIXES:
        return None
    return float(match.group(1)) * _SUFFIXES[match.group(2)]


def gpus(resources: Any) -> float | None:
    """The GPUs of a resource list: `nvidia.com/gpu` (device plugin) plus every DRA DeviceClass
    KAI counts as GPUs; None when it names none."""
    if not isinstance(resources, Mapping):
        return None
    amounts = [parse_quantity(v) for k, v in resources.items() if is_gpu_resource(str(k))]
    known = [amount for amount in amounts if amount is not None]
    return sum(known) if known else None


def dra_gpus(resources: Any) -> float | None:
    """The part of `gpus` counted under DRA DeviceClasses; None when it names none."""
    if not isinstance(resources, Mapping):
        return None
    return gpus({k: v for k, v in resources.items() if str(k) != GPU})


def is_gpu_resource(name: str) -> bool:
    """`nvidia.com/gpu`, or a DRA DeviceClass KAI counts as GPUs: KAI writes DRA GPUs in
    PodGroup and Queue resource lists under the DeviceClass's name (e.g. `gpu.nvidia.com`), and
    a class is a GPU class when its name contains "gpu" (KAI-Scheduler
    pkg/common/resources/dra.go `ExtractDRAGPUResources`, `IsGPUDeviceClass`). A class name has
    no `/`, unlike extended resources (`nvidia.com/gpu.shared` is not a device class)."""
    return name == GPU or ("/" not in name and "gpu" in name.lower())


def show(value: float | None, absent: str = "?") -> str:
    """`8`, `0.5`, `unlimited` for -1, `absent` (`?`) for unknown."""
    if value is None:
        return absent
    if value == UNLIMITED:
        return "unlimited"
    return f"{value:g}"
