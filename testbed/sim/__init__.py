"""A local Kubernetes API server for tests, benchmarks and `kai-chatops demo` (no real cluster).

Why not kmock 0.8 (evaluated first): its KubernetesEmulator mutates objects inside one monolithic
`_handle` before any hook, with name-mangled private helpers, so adding resourceVersion and
generation bumps, 409 conflicts, status-subresource isolation, PUT (not even routed), selectors,
pagination, `watch=1` and resumable watches would mean replacing every handler it has; its
discovery is guessed from test fixtures, not from CRD objects. So this is a small aiohttp server.
"""

from __future__ import annotations

from testbed.sim.faults import Fault, Faults, RecordedRequest
from testbed.sim.scenarios import scenario_names
from testbed.sim.simulator import Simulator
from testbed.sim.status import ApiError
from testbed.sim.store import Store

__all__ = [
    "ApiError",
    "Fault",
    "Faults",
    "RecordedRequest",
    "Simulator",
    "Store",
    "scenario_names",
]
