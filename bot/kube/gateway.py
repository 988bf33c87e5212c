"""The Kubernetes gateway: the only module that imports `kubernetes`.

One cluster's API as raw JSON bodies (`RawObject`), the same shape `kubectl get -o yaml`
prints, so live checks and offline `evaluate` share their rules. Request/response calls go
through the official client's REST layer on its threads, with timeouts and retries
(`bot.kube.rest`); every watch, of one object or of a collection, is an aiohttp stream on the
event loop that holds no thread (`bot.kube.watches`). `connect` builds a gateway from a
kubeconfig context or the in-cluster service account.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable
from typing import Any

import yaml

from bot.kube.importing import without_package_init

if "kubernetes" not in sys.modules:  # the parts the gateway uses, not the whole client
    without_package_init("kubernetes")
import kubernetes.client as k8s_client
import kubernetes.config as k8s_config
from kubernetes.config import kube_config
from kubernetes.config.config_exception import ConfigException

from bot.config.settings import ClusterSettings, KubernetesSettings
from bot.core import errors
from bot.core.metrics import Metrics
from bot.core.models import RawObject, Sleep
from bot.kube import kinds
from bot.kube.errors import Call
from bot.kube.identity import Impersonation, token_subject
from bot.kube.kinds import ResourceRef
from bot.kube.kubeconfig import KubeconfigIndex
from bot.kube.rest import RestCalls
from bot.kube.threads import ClientThreads
from bot.kube.watches import Watches, WatchSession

LIST_PAGE_SIZE = 500
THREADS_ALONE = 16  # a gateway built without settings (tests)
# The pods/log subresource as errors name it: RBAC grants it as resource `pods/log`.
POD_LOG = ResourceRef("", "v1", "pods/log", "Pod", namespaced=True)
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


class KubeGateway:
    """One cluster's API, as raw objects, with timeouts, retries and actionable errors."""

    def __init__(
        self,
        api_client: Any,
        *,
        cluster: str,
        timeout: float,
        retries: int,
        metrics: Metrics | None = None,
        sleep: Sleep = asyncio.sleep,
        threads: ClientThreads | None = None,
        watch_session: WatchSession | None = None,
    ) -> None:
        self.cluster = cluster
        # Whom its requests authenticate as (a ServiceAccount token's subject), or "": the
        # impersonator an audit line names beside the person a change was sent as.
        token = getattr(getattr(api_client, "configuration", None), "api_key", None) or {}
        self.authenticated_as = token_subject(str(token.get("BearerToken") or ""))
        self._api = api_client
        self._threads = threads if threads is not None else ClientThreads(THREADS_ALONE)
        self._rest = RestCalls(
            api_client,
            cluster=cluster,
            timeout=timeout,
            retries=retries,
            threads=self._threads,
            metrics=metrics,
            sleep=sleep,
        )
        # Its watches (`bot.kube.watches`), the port methods themselves rather than restated.
        self._watches = Watches(api_client, self._rest, watch_session or WatchSession())
        self.watch_object = self._watches.watch_object
        self.watch_collection = self._watches.watch_collection

    @property
    def request_count(self) -> int:
        """Every request sent to this cluster so far (each try, each watch)."""
        return self._rest.request_count

    async def get_object(
        self, ref: ResourceRef, name: str, namespace: str | None = None
    ) -> RawObject | None:
        """The object, or None when the API answers 404 for it.

        Raises:
            KubeError: forbidden, unreachable, or any other failure.
        """
        call = Call("get", ref, name, namespace)
        try:
            return await self._rest.json(call, "GET", ref.path(namespace, name))
        except errors.KubeNotFound:
            return None

    async def list_objects(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        page_size: int | None = LIST_PAGE_SIZE,
    ) -> list[RawObject]:
        """Every matching object, following `continue` pages (listed again from the start when
        their snapshot expires, `RestCalls.list_snapshot`); an absent resource type is empty.
        `page_size=None` reads the whole list in one request (for lists known to stay small).

        Raises:
            KubeError: forbidden, unreachable, still expiring after the restarts, or any other
                failure.
        """
        items, _ = await self._list(
            ref, namespace, label_selector, field_selector, metadata_only, page_size
        )
        return items

    async def list_versioned(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        page_size: int | None = None,
    ) -> tuple[list[RawObject], str]:
        """As `list_objects` (in one request unless `page_size` is given), and the
        resourceVersion to watch the collection from (`watch_collection`); an absent resource
        type is empty, version "".

        Raises:
            KubeError: as `list_objects`.
        """
        return await self._list(
            ref, namespace, label_selector, field_selector, metadata_only, page_size
        )

    async def _list(
        self,
        ref: ResourceRef,
        namespace: str | None,
        label_selector: str | None,
        field_selector: str | None,
        metadata_only: bool,
        page_size: int | None,
    ) -> tuple[list[RawObject], str]:
        query = [("limit", str(page_size))] if page_size else []
        query += [("labelSelector", label_selector)] if label_selector else []
        query += [("fieldSelector", field_selector)] if field_selector else []
        accept = METADATA_ONLY if metadata_only else "application/json"
        call = Call("list", ref, None, namespace)
        return await self._rest.list_snapshot(call, ref.path(namespace), query, accept)

    async def patch_object(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None,
        body: Any,
        *,
        json_patch: bool = False,
        acting_as: Impersonation | None = None,
    ) -> RawObject:
        """`bot.kube.ports.KubePatcher`: a merge patch, or a JSON patch; as `acting_as`.

        Raises:
            KubeNotFound, KubeConflict, KubeInvalid, KubeUnavailable; KubeForbidden (for
            `acting_as`, naming the person and quoting the API server).
        """
        kind = "application/json-patch+json" if json_patch else "application/merge-patch+json"
        call = Call("patch", ref, name, namespace)
        path = ref.path(namespace, name)
        return await self._rest.json(
            call, "PATCH", path, body=body, body_type=kind, acting_as=acting_as
        )

    async def create_object(
        self, ref: ResourceRef, namespace: str | None, body: RawObject
    ) -> RawObject:
        """Create an object (POST); the bot's own Lease and state ConfigMap are made this way.

        Raises:
            KubeConflict (it already exists), KubeForbidden, KubeInvalid, KubeUnavailable.
        """
        name = str((body.get("metadata") or {}).get("name") or "") or None
        call = Call("create", ref, name, namespace)
        return await self._rest.json(
            call, "POST", ref.path(namespace), body=dict(body), body_type="application/json"
        )

    async def read_pod_log(
        self, namespace: str, pod: str, *, container: str, previous: bool, tail_lines: int
    ) -> str:
        """The last `tail_lines` lines a container printed (its previous instance with
        `previous`), as the API server's `pods/log` answers them (text, not JSON).

        Raises:
            KubeNotFound: the pod is gone; KubeInvalid: that instance has no log (e.g. it never
                restarted, or never started); other KubeErrors as for any read.
        """
        call = Call("get", POD_LOG, pod, namespace)
        query = [("container", container), ("tailLines", str(tail_lines))]
        query += [("previous", "true")] if previous else []
        path = kinds.POD.path(namespace, pod) + "/log"
        data = await self._rest.exchange(call, "GET", path, query, accept="text/plain")
        return data.decode("utf-8", "replace")

    async def server_version(self) -> str:
        """The API server's `gitVersion`; a cheap reachability probe for `/readyz`."""
        call = Call("get", ResourceRef("", "", "version", "Version", False))
        try:
            answer = await self._rest.json(call, "GET", "/version")
        except errors.KubeNotFound:
            return "unknown"  # it answered: reachable, though it does not serve /version
        return str(answer.get("gitVersion", "unknown"))

    def close_idle_connections(self) -> None:
        """Close this cluster's keep-alive connections not in use (urllib3 `PoolManager.clear`:
        one in use is closed when it is given back; the next request opens a new one). A
        cluster whose reads all come from watched copies asks nothing for an hour: the
        connections its first lists opened would sit idle, and a fleet's thousands of idle
        sockets cost tens of megabytes."""
        self._api.rest_client.pool_manager.clear()

    async def close_streams(self) -> None:
        """Close the watches' connections (on the event loop, before it ends)."""
        await self._watches.session.close()

    def close(self) -> None:
        """Stop the client's threads (shared ones too: the service is stopping) and close this
        cluster's connections."""
        self._threads.shutdown()
        self._api.close()


def connect(
    cluster: ClusterSettings,
    settings: KubernetesSettings,
    metrics: Metrics | None = None,
    *,
    sleep: Sleep = asyncio.sleep,
    threads: ClientThreads | None = None,
    kubeconfigs: dict[str, Any] | None = None,
    watch_session: WatchSession | None = None,
) -> KubeGateway:
    """A gateway for one configured cluster: kubeconfig path and context, or in-cluster.

    `threads` and `kubeconfigs` (files already read, by path) are shared by `connect_all`.

    Raises:
        ConfigError: the kubeconfig or the in-cluster service account cannot be loaded.
    """
    configuration = k8s_client.Configuration()
    try:
        if cluster.in_cluster:
            k8s_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        else:
            _load_kubeconfig(cluster, configuration, {} if kubeconfigs is None else kubeconfigs)
    except (ConfigException, OSError, TypeError, ValueError, yaml.YAMLError) as e:
        where = "in-cluster config" if cluster.in_cluster else f"kubeconfig {cluster.kubeconfig}"
        raise errors.ConfigError([f"clusters[{cluster.name}]: cannot load {where}: {e}"]) from e
    # Our own loop retries with backoff and Retry-After; urllib3's retries would hide the attempts.
    configuration.retries = 0
    # One connection per client thread: with fewer (the client's default is 5 per CPU), requests
    # made at once open connections the pool then drops, each with urllib3's "Connection pool is
    # full" warning (kubernetes-client python kubernetes/client/rest.py `RESTClientObject`).
    configuration.connection_pool_maxsize = settings.threads
    return KubeGateway(
        k8s_client.ApiClient(configuration),
        cluster=cluster.name,
        timeout=settings.request_timeout.total_seconds(),
        retries=settings.retries,
        metrics=metrics,
        sleep=sleep,
        threads=threads if threads is not None else ClientThreads(settings.threads),
        watch_session=watch_session,
    )


def connect_all(
    clusters: Iterable[ClusterSettings],
    settings: KubernetesSettings,
    metrics: Metrics | None = None,
) -> dict[str, KubeGateway]:
    """A gateway per cluster, all on one set of `settings.threads` threads; each kubeconfig
    file is read once, however many clusters name a context in it.

    Raises:
        ConfigError: as `connect`, for the first cluster that cannot be loaded.
    """
    threads, session = ClientThreads(settings.threads), WatchSession()
    kubeconfigs: dict[str, Any] = {}
    return {
        c.name: connect(
            c, settings, metrics, threads=threads, kubeconfigs=kubeconfigs, watch_session=session
        )
        for c in clusters
    }


def _load_kubeconfig(
    cluster: ClusterSettings, configuration: Any, kubeconfigs: dict[str, Any]
) -> None:
    """`load_kube_config(path, context)`, reading each path (or KUBECONFIG list) only once.

    The files are merged as the client merges them (`bot.kube.kubeconfig`), then the client's
    own `KubeConfigLoader` loads the context from a config holding only that context, its
    cluster and its user, each a `ConfigNode` naming the file it came from (relative certificate
    paths), as `KubeConfigMerger` builds them. The client's merge and its lookups by name scan
    every context for each one loaded: quadratic in the fleet's size.
    """
    path = cluster.kubeconfig or kube_config.KUBE_CONFIG_DEFAULT_LOCATION
    if path not in kubeconfigs:
        kubeconfigs[path] = KubeconfigIndex.read(path)
    index: KubeconfigIndex | None = kubeconfigs[path]
    if index is None:
        raise ConfigException("Invalid kube-config file. No configuration found.")
    sections = {
        section: [
            kube_config.ConfigNode(f"{e.path}/{e.value}", e.value, e.path)  # type: ignore[no-untyped-call]
            for e in entries
        ]
        for section, entries in index.narrowed(cluster.context).items()
    }
    merged = kube_config.ConfigNode(index.path, {**index.top, **sections}, index.path)  # type: ignore[no-untyped-call]
    loader = kube_config.KubeConfigLoader(  # type: ignore[no-untyped-call]
        config_dict=merged, config_base_path=None, active_context=cluster.context
    )
    loader.load_and_set(configuration)  # type: ignore[no-untyped-call]
