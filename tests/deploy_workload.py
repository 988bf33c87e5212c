"""Every feature driven once through the real stack, as users and the scheduler use it.

The deploy tests derive what the service account needs (RBAC, the admission policy) from the
calls this workload makes to the simulator.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

from alert_invariants import payload
from clocks import Clock
from gitops_e2e import OCI_REPOSITORY
from stack_steps import confirm
from waiting import wait_until

from bot.alerts import node_checks, queue_checks
from bot.keda.usecase import AckWait
from bot.kube.informer import CachedKube
from bot.service import jobs_alerts, jobs_timed
from testbed.sim import breakage, evictions, kai_scheduler
from testbed.stack import ALERT_CHANNEL, OPERATOR, Stack, running_stack

# A Kustomization built from a Bucket: `--with-source` reads, patches and follows the Bucket
# (the simulator's Flux scenario has no Bucket kind: its CRD is applied first).
BUCKET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "buckets.source.toolkit.fluxcd.io"},
    "spec": {
        "group": "source.toolkit.fluxcd.io",
        "scope": "Namespaced",
        "names": {"kind": "Bucket", "listKind": "BucketList", "plural": "buckets"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}
BUCKET = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "Bucket",
    "metadata": {"name": "fleet-artifacts", "namespace": "flux-system"},
    "spec": {"interval": "10m", "bucketName": "fleet", "endpoint": "minio.example:9000"},
}
FROM_BUCKET = {
    "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
    "kind": "Kustomization",
    "metadata": {"name": "from-bucket", "namespace": "flux-system"},
    "spec": {
        "interval": "10m",
        "path": "./",
        "prune": False,
        "sourceRef": {"kind": "Bucket", "name": "fleet-artifacts"},
    },
}


async def run_workload(stack: Stack, clock: Clock) -> None:
    """Every feature once, the way users and the scheduler use it."""
    await jobs_alerts.keep_lease(stack.service.deps)
    await stack.command("health")
    await stack.command("scaledjobs")
    await stack.command("scaledjobs --all-namespaces")
    await confirm(stack, "pause annia/annia-worker for 1h drain")
    await confirm(stack, "resume annia/annia-worker")
    await confirm(stack, "pause scaledobject annia/annia-api for 1h drain")
    clock.now += timedelta(hours=2)
    await jobs_alerts.keep_lease(stack.service.deps)
    await jobs_timed.resume_expired_pauses(stack.service.deps, "sim")
    resumed = stack.sim.get("keda.sh/v1alpha1", "ScaledObject", "annia-api", "annia") or {}
    assert "autoscaling.keda.sh/paused" not in resumed["metadata"].get("annotations", {})
    for obj in (OCI_REPOSITORY, BUCKET, FROM_BUCKET):
        stack.sim.apply(obj)
    for text in (
        "reconcile ocirepo flux-system/podinfo",
        "reconcile hr flux-system/kai-scheduler --with-source",
        "reconcile ks flux-system/flux-system --with-source",
        "reconcile ks flux-system/from-bucket --with-source",
        "reconcile gitrepo flux-system/flux-system",
        "reconcile helmrepo flux-system/kedacore",
        "reconcile app argocd/kai-scheduler --hard",
    ):
        await stack.command(text, to_the_end=True)
    await confirm(stack, "sync argocd/kai-scheduler")
    await confirm(stack, "suspend ks flux-system/flux-system for 1h")
    await confirm(stack, "resume ks flux-system/flux-system")
    await jobs_timed.sweep_suspends(stack.service.deps, "sim")
    await gpu_nodes(stack, clock)
    await inspect_workloads(stack)
    await alert_cycle(stack, clock)
    await stack.driver.open_home(user_id=OPERATOR)
    await stack.slack.wait_for_home(OPERATOR)
    await follow_by_watch(stack, clock)
    await eviction_told(stack, clock)


async def gpu_nodes(stack: Stack, clock: Clock) -> None:
    """`/kai nodes`, a cordon and an uncordon, and a timed cordon ended by its sweep."""
    await stack.command("nodes")
    await confirm(stack, "cordon gpu-node-1 drain")
    await confirm(stack, "uncordon gpu-node-1")
    await confirm(stack, "cordon gpu-node-2 for 1h drain")
    clock.now += timedelta(hours=2)
    await jobs_alerts.keep_lease(stack.service.deps)
    await jobs_timed.sweep_cordons(stack.service.deps, "sim")
    node = stack.sim.get("v1", "Node", "gpu-node-2") or {}
    assert node["spec"]["unschedulable"] is False


async def eviction_told(stack: Stack, clock: Clock) -> None:
    """A reclaim (its Event at the service's time) and a stale gang told in the alert channel;
    then the service's jobs stop, which ends the eviction watch (the simulator logs a watch at
    its end)."""
    evictions.reclaim(stack.sim)
    group = stack.sim.get(evictions.PODGROUP, "PodGroup", evictions.EVICTED, evictions.EVICTED_NS)
    notes = evictions.kai_annotations("reclaim", 1, evictions.RECLAIMER, evictions.RECLAIMER_NS)
    event = evictions.evict_event(group or {}, "Pod vision/x was preempted", notes, clock())
    stack.sim.apply(event)
    await stack.slack.wait_for(
        lambda: any("KAI reclaimed" in m.text for m in stack.slack.messages(ALERT_CHANNEL)),
        timeout=15,
    )
    kai_scheduler.stale_gang(stack.sim)  # told after a read of its namespace's pods
    await stack.slack.wait_for(
        lambda: any("as a stale gang" in m.text for m in stack.slack.messages(ALERT_CHANNEL)),
        timeout=15,
    )
    # The watch resumes after the pass that listed it; the alert store's copy of its state
    # ConfigMaps is the other watch open all along.
    await wait_until(lambda: stack.sim.open_watches > 1, 15, "the Evict Events watched")
    await stack.service.schedule.stop()


async def follow_by_watch(stack: Stack, clock: Clock) -> None:
    """What the scheduled jobs follow by list and watch: the alert check's reads and the timed
    pause and suspend sweeps' lists, each followed until it is current, then stopped (so the
    simulator logs each watch)."""
    deps = stack.service.deps
    (checks,) = [j.run for j in stack.service.schedule.jobs if j.name == "alerts-sim"]
    assert isinstance(checks, jobs_alerts.WatchedChecks)
    # A scheduler of two replicas elects a leader: the stall rule reads the Leases too.
    scheduler = stack.sim.get("apps/v1", "Deployment", "kai-scheduler-default", "kai-scheduler")
    assert scheduler is not None
    stack.sim.apply({**scheduler, "spec": {**scheduler["spec"], "replicas": 2}})
    await checks.check()
    assert checks.reads is not None
    # The queue starvation and GPU node rules' reads (they are off in this stack's config).
    await queue_checks.starved_queues(
        checks.reads, clock.now, after=timedelta(minutes=30), command="/kai"
    )
    await node_checks.sick_nodes(checks.reads, enabled=True, command="/kai")
    sweeps = CachedKube(deps.kube["sim"], cached_gets=False)
    await jobs_timed.sweep_pauses(deps, "sim", sweeps)
    await jobs_timed.sweep_suspends(deps, "sim", sweeps)
    followed = checks.reads.followed + sweeps.followed
    await wait_until(lambda: all(c.current for c in followed), 10, "every collection followed")
    await checks.close()
    await sweeps.close()


async def serve_buckets(stack: Stack) -> None:
    """The Bucket kind served, and the simulated Flux controllers following it (they follow the
    kinds served when they start)."""
    stack.sim.apply(BUCKET_CRD)
    running = stack.sim.controllers
    assert running is not None
    await stack.sim.stop_controllers()
    stack.sim.start_controllers(running.default, keda=running.keda)


async def inspect_workloads(stack: Stack) -> None:
    """What viewers read: diagnoses with logs, KAI queues and jobs, lists, not-found hints."""
    breakage.metrics_apiserver_crashloop(stack.sim)
    breakage.gpu_quota_exhausted(stack.sim)
    crash_binder(stack)
    for text in (
        "diagnose kai",
        "diagnose keda",
        "diagnose kai-scheduler/binder",
        "queues",
        "pending",
        "pending annia",
        "pending nope",
        "why annia/annia-worker-9k4mz-0",
        *(f"list {kind}" for kind in ("hr", "ks", "gitrepo", "helmrepo", "ocirepo", "app", "sj")),
        "list so --all-namespaces",
        "reconcile ks flux-system/kai-scheduler",
    ):
        reply = await stack.command(text)
        assert reply.message is not None, (text, reply.text)
    breakage.heal(stack.sim)


def crash_binder(stack: Stack) -> None:
    """The binder's pod in CrashLoopBackOff, so `diagnose kai` reads a log in kai.namespace."""
    pods = stack.sim.store.list_objects(stack.sim.store.resolve("v1", "pods"), "kai-scheduler")
    pod = next(p for p in pods["items"] if p["metadata"]["name"].startswith("binder-"))
    pod["status"]["containerStatuses"][0].update(
        ready=False,
        state={"waiting": {"reason": "CrashLoopBackOff"}},
        lastState={"terminated": {"reason": "Error", "exitCode": 1}},
        restartCount=2,
    )
    stack.sim.apply(pod)
    stack.sim.set_condition(
        "apps/v1", "Deployment", "binder", "kai-scheduler", "Available", "False", "Min", "down"
    )


async def alert_cycle(stack: Stack, clock: Clock) -> None:
    """What the scheduler does: hold the Lease, check, fire an alert (whose root post loses its
    answer, so it is looked for in the channel) with its diagnosis as the first reply, keep the
    state, resolve it (its thread is swept for late copies)."""
    deps = stack.service.deps
    await jobs_alerts.keep_lease(deps)
    stack.slack.fail_next("chat.postMessage", status=200, mode="drop_after")
    for heal in (False, True):
        (breakage.heal if heal else breakage.dependencies_missing)(stack.sim)
        await jobs_alerts.check_cluster(deps, "sim")
        clock.now += timedelta(seconds=60)
        await jobs_alerts.keep_lease(deps)
        await jobs_alerts.check_cluster(deps, "sim")
    [root] = [m for m in stack.slack.root_messages(ALERT_CHANNEL) if m.text.startswith("[")]
    first_reply, second = stack.slack.thread(ALERT_CHANNEL, root.ts)[:2]
    assert first_reply.text.startswith("Diagnosis of kai on sim"), first_reply.text
    assert second.text.startswith("What changed on sim in the hour before"), second.text
    await stack.command("timeline --since 1d")  # every source of what changed, read
    alert_id = str(payload(root)["effect"]).split("/")[1]  # resolved: its buttons are gone
    draft = await stack.command(f"timeline {alert_id}")  # a file shared in the thread
    assert "postmortem draft" in draft.text, draft.text


@asynccontextmanager
async def workload_stack(tmp_path: Path) -> AsyncIterator[tuple[Stack, Clock]]:
    """The stack as a cluster runs it (ConfigMap state, a KEDA controller), with a clock that
    the simulator's stamps follow too (an Evict Event is told only when it is recent)."""
    clock = Clock()
    configmap_state = {"state": {"backend": "configmap"}, "notices": {"evictions": True}}
    async with running_stack(
        tmp_path,
        clock=clock,
        sim_clock=clock,
        keda_controller=True,
        keda_wait=AckWait(timeout=0.2),
        config_overrides=configmap_state,
    ) as stack:
        await serve_buckets(stack)
        yield stack, clock
