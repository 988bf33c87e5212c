"""The real kubectl works against the simulator: discovery, short names, describe and writes.

kubectl runs as an asyncio subprocess, since the simulator serves from the test's own loop.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from testbed.sim import Simulator

pytestmark = [
    pytest.mark.skipif(
        shutil.which("kubectl") is None,
        reason="kubectl is not on PATH: cannot check kubectl compat",
    ),
    pytest.mark.sim(scenarios=["default"]),
]
SJ = ("keda.sh/v1alpha1", "ScaledJob")


class Kubectl:
    """kubectl bound to one simulator's kubeconfig and a private discovery cache."""

    def __init__(self, kubeconfig: str, cache: Path) -> None:
        self.base = ["kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(cache)]

    async def run(self, *args: str, ok: bool = True) -> tuple[int, str, str]:
        process = await asyncio.create_subprocess_exec(
            *self.base, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, err = await asyncio.wait_for(process.communicate(), timeout=20)
        code = process.returncode or 0
        if ok:
            assert code == 0, f"kubectl {' '.join(args)} failed: {err.decode()}"
        return code, out.decode(), err.decode()


@pytest.fixture
def kubectl(sim: Simulator, tmp_path: Path) -> Kubectl:
    return Kubectl(sim.write_kubeconfig(str(tmp_path / "kubeconfig")), tmp_path / "cache")


async def test_get_by_qualified_resource_name(kubectl: Kubectl) -> None:
    _, out, _ = await kubectl.run("get", "configs.kai.scheduler")
    assert out.split()[:3] == ["NAME", "AGE", "kai-config"]


async def test_get_by_short_name_as_json(kubectl: Kubectl) -> None:
    _, out, _ = await kubectl.run("get", "sj", "-n", "annia", "-o", "json")
    names = sorted(item["metadata"]["name"] for item in json.loads(out)["items"])
    assert names == ["annia-trainer", "annia-worker"]


async def test_missing_object_reports_the_server_message(kubectl: Kubectl) -> None:
    code, _, err = await kubectl.run("get", "config", "nope", ok=False)
    assert code == 1
    assert 'configs.kai.scheduler "nope" not found' in err


async def test_describe_shows_conditions(kubectl: Kubectl) -> None:
    _, out, _ = await kubectl.run("describe", "config", "kai-config")
    assert "DependenciesFulfilled" in out and "Events:" in out


async def test_annotate_reaches_the_store(kubectl: Kubectl, sim: Simulator) -> None:
    await kubectl.run("annotate", "scaledjob/annia-worker", "-n", "annia", "x=y")
    worker = sim.get(*SJ, "annia-worker", "annia")
    assert worker is not None and worker["metadata"]["annotations"] == {"x": "y"}


async def test_merge_and_json_patches_pause_and_resume(kubectl: Kubectl, sim: Simulator) -> None:
    pause = '{"metadata":{"annotations":{"autoscaling.keda.sh/paused":"true"}}}'
    await kubectl.run("patch", "sj", "annia-worker", "-n", "annia", "--type", "merge", "-p", pause)
    paused = sim.get(*SJ, "annia-worker", "annia")
    assert paused is not None and paused["metadata"]["annotations"]["autoscaling.keda.sh/paused"]
    resume = '[{"op":"remove","path":"/metadata/annotations/autoscaling.keda.sh~1paused"}]'
    await kubectl.run("patch", "sj", "annia-worker", "-n", "annia", "--type", "json", "-p", resume)
    resumed = sim.get(*SJ, "annia-worker", "annia")
    # The emptied annotations map is not kept, as kube-apiserver keeps none (omitempty).
    assert resumed is not None and "annotations" not in resumed["metadata"]


async def test_failing_json_patch_test_is_refused(kubectl: Kubectl) -> None:
    check = '[{"op":"test","path":"/spec/maxReplicaCount","value":99}]'
    args = ("patch", "sj", "annia-worker", "-n", "annia", "--type", "json", "-p", check)
    code, _, err = await kubectl.run(*args, ok=False)
    # kube-apiserver names no cause: its json-patch library's "test failed" is not in the answer.
    assert code == 1 and "the server rejected our request due to an error in our request" in err


async def test_delete_removes_the_object(kubectl: Kubectl, sim: Simulator) -> None:
    await kubectl.run("delete", "scaledjob", "annia-trainer", "-n", "annia")
    assert sim.get(*SJ, "annia-trainer", "annia") is None


# --- issue 12 B: what kubectl sees when the simulator is as strict as an API server ------------

DEPLOY = ("apps/v1", "Deployment")


async def test_kubectl_strategic_merge_patch_on_a_custom_resource_is_refused(
    kubectl: Kubectl, sim: Simulator
) -> None:
    patch = '{"metadata":{"annotations":{"x":"y"}}}'
    code, _, err = await kubectl.run(
        "patch", "sj", "annia-worker", "-n", "annia", "-p", patch, ok=False
    )
    assert code == 1
    assert "application/strategic-merge-patch+json is not supported" in err
    worker = sim.get(*SJ, "annia-worker", "annia")
    assert worker is not None and "x" not in (worker["metadata"].get("annotations") or {})


async def test_kubectl_strategic_merge_patch_merges_containers_by_name(
    kubectl: Kubectl, sim: Simulator
) -> None:
    sidecar = '{"spec":{"template":{"spec":{"containers":[{"name":"proxy","image":"envoy:1"}]}}}}'
    await kubectl.run("patch", "deploy", "kai-operator", "-n", "kai-scheduler", "-p", sidecar)
    bump = '{"spec":{"template":{"spec":{"containers":[{"name":"kai-operator","image":"op:2"}]}}}}'
    await kubectl.run("patch", "deploy", "kai-operator", "-n", "kai-scheduler", "-p", bump)

    deployment = sim.get(*DEPLOY, "kai-operator", "kai-scheduler")
    assert deployment is not None
    shown = [(c["name"], c["image"]) for c in deployment["spec"]["template"]["spec"]["containers"]]
    assert shown == [("kai-operator", "op:2"), ("proxy", "envoy:1")]
    assert deployment["metadata"]["generation"] == 3


async def test_kubectl_paged_get_lists_every_object_once(kubectl: Kubectl, sim: Simulator) -> None:
    _, out, _ = await kubectl.run("get", "sj", "-A", "--chunk-size=1", "-o", "json")
    names = [item["metadata"]["name"] for item in json.loads(out)["items"]]
    assert sorted(names) == ["annia-trainer", "annia-worker"]
    pages = [r for r in sim.requests if r.resource == "scaledjobs" and r.verb == "list"]
    assert len(pages) >= 2 and "continue" in pages[-1].query


async def test_kubectl_field_selector_on_a_custom_resource_only_name_and_namespace(
    kubectl: Kubectl,
) -> None:
    _, out, _ = await kubectl.run(
        "get", "sj", "-n", "annia", "--field-selector", "metadata.name=annia-worker", "-o", "name"
    )
    assert out.split() == ["scaledjob.keda.sh/annia-worker"]
    code, _, err = await kubectl.run(
        "get", "sj", "-n", "annia", "--field-selector", "spec.maxReplicaCount=5", ok=False
    )
    assert code == 1 and "field label not supported: spec.maxReplicaCount" in err


async def test_kubectl_replace_of_a_custom_resource_needs_its_resource_version(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    _, out, _ = await kubectl.run("get", "app", "kai-scheduler", "-n", "argocd", "-o", "json")
    app = json.loads(out)
    del app["metadata"]["resourceVersion"]
    manifest = tmp_path / "app.json"
    manifest.write_text(json.dumps(app))

    # `kubectl replace -f` fills a missing resourceVersion in from a GET; --raw PUTs as given.
    url = "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/kai-scheduler"
    code, _, err = await kubectl.run("replace", "--raw", url, "-f", str(manifest), ok=False)

    assert code == 1
    assert "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update" in err


async def test_kubectl_sees_no_generation_on_a_configmap(kubectl: Kubectl, tmp_path: Path) -> None:
    notes = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}}
    notes["metadata"] = {"name": "kai-notes", "namespace": "kai-scheduler"}
    manifest = tmp_path / "notes.json"
    manifest.write_text(json.dumps(notes))
    await kubectl.run("create", "--validate=false", "-f", str(manifest))
    await kubectl.run("patch", "cm", "kai-notes", "-n", "kai-scheduler", "-p", '{"data":{"a":"c"}}')

    _, out, _ = await kubectl.run("get", "cm", "kai-notes", "-n", "kai-scheduler", "-o", "json")

    read = json.loads(out)
    assert read["data"] == {"a": "c"}
    assert "generation" not in read["metadata"]


async def test_kubectl_status_change_on_an_application_bumps_its_generation(
    kubectl: Kubectl,
) -> None:
    """Argo CD's Application CRD has no status subresource: a status write is a new generation."""
    _, before, _ = await kubectl.run("get", "app", "kai-scheduler", "-n", "argocd", "-o", "json")
    patch = '{"status":{"health":{"status":"Degraded"}}}'
    await kubectl.run(
        "patch", "app", "kai-scheduler", "-n", "argocd", "--type", "merge", "-p", patch
    )
    _, after, _ = await kubectl.run("get", "app", "kai-scheduler", "-n", "argocd", "-o", "json")
    generation = json.loads(before)["metadata"]["generation"]
    assert json.loads(after)["metadata"]["generation"] == generation + 1
    assert json.loads(after)["status"]["health"]["status"] == "Degraded"
