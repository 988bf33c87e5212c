"""The simulator's scenarios, put into a real API server as an admin would, status included.

The same YAML the end-to-end tier and the demo start from (testbed/sim/scenarios/), so a test of
the cluster tier reads like its e2e twin. CRDs are left out (the cluster has upstream's); each
object is deleted and created again, then its status written through the status subresource
where the kind has one, as its controller would (there is no KAI operator, KEDA or Flux here,
and no kubelet: `testbed.apicontrollers` and these writes play them).
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kubernetes import client, dynamic
from kubernetes.client.exceptions import ApiException

from testbed.sim.scenarios import load_documents

MERGE = "application/merge-patch+json"


class Seeder:
    """Puts objects into the cluster and takes them out again, as the admin."""

    def __init__(self, admin: client.ApiClient) -> None:
        self.admin = admin
        # Discovery in a file of this seeder's own, never one another run could share (the
        # default is named by host:port, and loopback ports are reused).
        self._discovery = tempfile.TemporaryDirectory(prefix="kai-seeder-")
        cache = str(Path(self._discovery.name) / "discovery.json")
        self.dynamic = dynamic.DynamicClient(admin, cache_file=cache)  # type: ignore[no-untyped-call]

    def scenario(self, names: Sequence[str] = ("default",)) -> list[dict[str, Any]]:
        """Every object of the scenarios (CRDs left out), reset to what the files say."""
        docs = [
            doc
            for name in names
            for doc in load_documents(name)
            if doc["kind"] != "CustomResourceDefinition"
        ]
        for doc in docs:
            if doc["kind"] == "Namespace":
                self.ensure(doc)
        self.service_accounts_for(docs)
        for doc in docs:
            if doc["kind"] != "Namespace":
                self.replace(doc)
        return docs

    def ensure(self, doc: dict[str, Any]) -> None:
        try:
            self.resource(doc).create(body=doc)
        except ApiException as exc:
            if exc.status != 409:
                raise

    def replace(self, doc: dict[str, Any]) -> dict[str, Any]:
        """The object exactly as `doc` says, whatever was there before (a fresh uid)."""
        self.remove(doc)
        body = {k: v for k, v in copy.deepcopy(doc).items() if k != "status"}
        resource = self.resource(doc)
        namespace = doc["metadata"].get("namespace")
        created = resource.create(body=body, namespace=namespace).to_dict()
        if "status" in doc:
            self.write_status(doc, doc["status"])
        return dict(created)

    def write_status(self, doc: dict[str, Any], status: dict[str, Any]) -> None:
        """Set `status` as the object's controller would (whole fields, merge patch)."""
        resource = self.resource(doc)
        target = resource.status if _has_status_subresource(resource) else resource
        target.patch(
            body={"status": status},
            name=doc["metadata"]["name"],
            namespace=doc["metadata"].get("namespace"),
            content_type=MERGE,
        )

    def read(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Any:
        """The object as it is now (a plain dict), None when absent."""
        resource = self.dynamic.resources.get(api_version=api_version, kind=kind)
        try:
            return resource.get(name=name, namespace=namespace).to_dict()
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, body: Any
    ) -> None:
        """A merge patch of the object itself, as the admin (a person with kubectl)."""
        resource = self.dynamic.resources.get(api_version=api_version, kind=kind)
        resource.patch(body=body, name=name, namespace=namespace, content_type=MERGE)

    def remove(self, doc: dict[str, Any]) -> None:
        """Delete at once (pods too: no kubelet will ever confirm a graceful end)."""
        options = client.V1DeleteOptions(grace_period_seconds=0, propagation_policy="Background")
        try:
            self.resource(doc).delete(
                name=doc["metadata"]["name"],
                namespace=doc["metadata"].get("namespace"),
                body=options,
            )
        except ApiException as exc:
            if exc.status != 404:
                raise

    def service_accounts_for(self, docs: Iterable[dict[str, Any]]) -> None:
        """The ServiceAccounts the pods name: the API server refuses a pod whose account is
        missing (the ServiceAccount admission plugin)."""
        for doc in docs:
            if doc["kind"] != "Pod":
                continue
            name = (doc.get("spec") or {}).get("serviceAccountName")
            if name:
                metadata = {"name": name, "namespace": doc["metadata"]["namespace"]}
                self.ensure({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata})

    def resource(self, doc: dict[str, Any]) -> Any:
        return self.dynamic.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])


def _has_status_subresource(resource: Any) -> bool:
    return "status" in (getattr(resource, "subresources", None) or {})


def find(docs: Sequence[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    """The one object of `kind` named `name` among the scenario's documents."""
    (found,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return copy.deepcopy(found)
