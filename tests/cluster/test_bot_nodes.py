"""GPU nodes on a real kube-apiserver (docs/design.md §2 "GPU nodes"), with kwok playing the
kubelet of a GPU node and deploy/'s RBAC and admission policies applied:
- a kwok GPU node whose allocatable `nvidia.com/gpu` drops and that reports an NVSentinel-style
  GPU condition pages after `hold`, naming the GPU lost and the condition's message, and
  resolves when they are back (the checks read the Nodes with the bot's own token);
- `/kai nodes` reads the Nodes and the pods across the cluster as the bot;
- a cordon made from Slack is admitted and written, `spec.unschedulable` and our record only,
  and an uncordon undoes it;
- the admission policy refuses any other field of a Node, naming it;
- in impersonation mode a person without RBAC on nodes is refused in Kubernetes' words, and one
  with it cordons, as the same two fields.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from alert_stack import HOLD, check
from botcalls import MERGE, Caller, admin_caller
from clocks import Clock
from conftest import BOT_CONTEXT, serving_as_bot
from controlplane import ControlPlane, poll
from test_impersonation_real import as_person

from bot.kube.identity import Impersonation
from testbed.slackemu import PostedMessage
from testbed.stack import ALERT_CHANNEL, DEMO_CHANNEL, OPERATOR, ServiceStack, running_service

NODE = "kwok-gpu-1"
NODE_PATH = f"/api/v1/nodes/{NODE}"
GPU = "nvidia.com/gpu"
XID = "ErrorCode:DCGM_FR_XID_ERROR GPU:3 Detected XID 94 for GPU 3 Recommended Action=RESTART_VM;"
COMPONENT = Path(__file__).resolve().parents[2] / "deploy/components/impersonation"
STRANGER = "U0STRANGER"  # an operator in Slack, not in the Kubernetes group slack:oncall
# The people's RBAC: the group slack:oncall may patch Nodes (cordon, uncordon).
ONCALL_NODES: list[dict[str, Any]] = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "oncall-cordon"},
        "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["patch"]}],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "oncall-cordon"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "oncall-cordon",
        },
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "slack:oncall"}
        ],
    },
]
MEMBER = Impersonation("slack:U0MEMBER", ("slack:oncall",), "U0MEMBER")
pytestmark = pytest.mark.clock_from_now  # the API server stamps with the real time


@pytest.fixture(scope="module")
def gpu_node(control_plane: ControlPlane) -> str:
    """A Node kwok keeps Ready, with 8 GPUs."""
    if control_plane.kwok_bin is None:
        pytest.skip("kwok is not built (tests/cluster/cluster_build.py builds it)")
    control_plane.add_gpu_node(NODE, gpus=8)
    admin = admin_caller(control_plane)

    def ready() -> bool | None:
        conditions = admin("GET", NODE_PATH).body.get("status", {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions) or None

    poll("kwok's GPU node Ready", ready, 45)
    return NODE


@pytest.fixture
def node_reset(control_plane: ControlPlane, gpu_node: str) -> Iterator[Caller]:
    """The admin's hand on the node; its GPUs, conditions and cordon put back after the test."""
    admin = admin_caller(control_plane)
    yield admin
    write_status(admin, {"allocatable": {GPU: "8"}})
    conditions = admin("GET", NODE_PATH).body["status"]["conditions"]
    kept = [c for c in conditions if c["type"] != "GpuMemWatch"]
    admin("PATCH", f"{NODE_PATH}/status", {"status": {"conditions": kept}}, MERGE)
    notes = {k: None for k in ("cordoned-by", "cordoned-at", "cordon-reason", "cordon-until")}
    admin.patch(
        NODE_PATH,
        {
            "spec": {"unschedulable": None},
            "metadata": {"annotations": {f"kai-chatops/{k}": v for k, v in notes.items()}},
        },
    )


# A strategic merge patch of a Node's status merges conditions by type, as the kubelet writes
# them (a merge patch would replace the list kwok keeps).
STRATEGIC = "application/strategic-merge-patch+json"


def write_status(admin: Caller, status: dict[str, Any]) -> None:
    answer = admin("PATCH", f"{NODE_PATH}/status", {"status": status}, STRATEGIC)
    assert answer.status == 200, answer.message


def gpu_condition(status: str) -> dict[str, Any]:
    reason = "GpuMemWatchIsNotHealthy" if status == "True" else "GpuMemWatchIsHealthy"
    message = XID if status == "True" else "No Health Failures"
    return {"type": "GpuMemWatch", "status": status, "reason": reason, "message": message}


@pytest.fixture
async def alerting(
    control_plane: ControlPlane, gpu_node: str, tmp_path: Path, clock: Clock
) -> AsyncIterator[ServiceStack]:
    overrides = {
        "alerts": {"hold": f"{HOLD}s", "interval": "1h", "repeat": "4h", "gpu_nodes": True},
        "state": {"path": str(tmp_path / "state.sqlite")},
    }
    async with serving_as_bot(control_plane, tmp_path, clock, overrides) as served:
        yield served


def node_roots(stack: ServiceStack) -> list[PostedMessage]:
    return [m for m in stack.slack.root_messages(ALERT_CHANNEL) if f"GPU node {NODE}" in m.text]


async def test_a_kwok_gpu_node_losing_a_gpu_with_a_gpu_condition_pages_and_resolves(
    alerting: ServiceStack, clock: Clock, node_reset: Caller
) -> None:
    await check(alerting.service)
    assert node_roots(alerting) == []
    write_status(node_reset, {"allocatable": {GPU: "7"}, "conditions": [gpu_condition("True")]})
    await check(alerting.service)
    clock.advance(HOLD)
    await check(alerting.service)

    [root] = node_roots(alerting)
    assert f"GPU node {NODE}: 1 of 8 GPUs lost; GpuMemWatch True" in root.text
    assert "the device plugin advertises 7" in root.text
    assert "Detected XID 94 for GPU 3" in root.text
    [evidence, changes] = alerting.slack.thread(ALERT_CHANNEL, root.ts)
    assert f"{NODE}: Ready · GPUs 8 / 7 / 0 (1 lost: not allocatable)" in evidence.text
    assert "in the hour before" in changes.text, changes.text  # the second reply of every page

    write_status(node_reset, {"allocatable": {GPU: "8"}, "conditions": [gpu_condition("False")]})
    await check(alerting.service)
    clock.advance(HOLD)
    await check(alerting.service)
    edited = alerting.slack.message(ALERT_CHANNEL, root.ts)
    assert edited.text.startswith("[RESOLVED (warning)]")
    assert alerting.slack.violations == []


async def test_nodes_reads_the_nodes_and_pods_with_the_bots_token(
    stack: ServiceStack, gpu_node: str
) -> None:
    reply = await stack.command("nodes")
    assert f"{NODE}: Ready · GPUs 8 / 8 / " in reply.text
    assert "gpu-node-1: Ready · GPUs 8 / 8 / 4" in reply.text  # the scenario's, with its pod


async def test_a_cordon_made_from_slack_is_admitted_and_written_then_uncordon_undoes_it(
    stack: ServiceStack, node_reset: Caller
) -> None:
    reply = await stack.command(f"cordon {NODE} for 1h XID 94 on GPU 3")
    assert reply.message is not None, reply.text
    done = await stack.click("Confirm", reply.message)
    assert done.message is not None
    assert f"Cordoned Node {NODE} on sim until" in done.message["text"]
    node = node_reset("GET", NODE_PATH).body
    assert node["spec"]["unschedulable"] is True
    notes = node["metadata"]["annotations"]
    assert notes["kai-chatops/cordoned-by"] == OPERATOR
    assert notes["kai-chatops/cordon-reason"] == "XID 94 on GPU 3"
    assert notes["kwok.x-k8s.io/node"] == "fake"  # nothing else touched

    again = await stack.command(f"uncordon {NODE}")
    assert again.message is not None, again.text
    undone = await stack.click("Confirm", again.message)
    assert undone.message is not None
    assert f"Uncordoned Node {NODE} on sim" in undone.message["text"]
    after = node_reset("GET", NODE_PATH).body
    assert not after["spec"].get("unschedulable")
    assert not any(k.startswith("kai-chatops/") for k in after["metadata"]["annotations"])
    assert stack.slack.violations == []


@pytest.mark.parametrize(
    ("body", "naming"),
    [
        ({"spec": {"taints": [{"key": "x", "effect": "NoExecute"}]}}, "may not change spec.taints"),
        ({"metadata": {"labels": {"nvidia.com/gpu.present": "false"}}}, "metadata.labels"),
        ({"metadata": {"annotations": {"team": "x"}}}, "metadata.annotations[team]"),
    ],
    ids=["taints", "labels", "another annotation"],
)
def test_the_policy_refuses_any_other_node_field_naming_it(
    bot: Caller, node_reset: Caller, body: dict[str, Any], naming: str
) -> None:
    refused = bot.patch(NODE_PATH, body)
    assert refused.status == 403, refused.message
    assert "kai-chatops-owned-fields" in refused.message and naming in refused.message
    allowed = bot.patch(NODE_PATH + "?dryRun=All", {"spec": {"unschedulable": True}})
    assert allowed.status == 200, allowed.message


@pytest.fixture(scope="module")
def people_may_cordon(control_plane: ControlPlane, gpu_node: str) -> Iterator[ControlPlane]:
    """deploy/components/impersonation and the on-call group's RBAC on nodes applied (deleted
    again afterwards, so the tier's "nothing more" RBAC test still holds), in force once a
    dry-run cordon as a member passes."""
    docs = [d for d in yaml.safe_load_all((COMPONENT / "rbac-impersonate.yaml").read_text()) if d]
    applied = docs + ONCALL_NODES
    for obj in applied:
        control_plane.apply(obj)

    def in_force() -> bool | None:
        body = {"spec": {"unschedulable": True}}
        answer = as_person(control_plane, NODE_PATH + "?dryRun=All", body, MEMBER.headers())
        return answer.status == 200 or None

    poll("impersonation RBAC on nodes in force", in_force, 30)
    try:
        yield control_plane
    finally:
        admin = admin_caller(control_plane)
        for obj in reversed(applied):
            where = obj["kind"].lower() + "s"
            namespace = obj["metadata"].get("namespace")
            scope = f"/namespaces/{namespace}" if namespace else ""
            path = f"/apis/rbac.authorization.k8s.io/v1{scope}/{where}/{obj['metadata']['name']}"
            assert admin("DELETE", path).status in (200, 404)


@pytest.fixture
async def as_people(people_may_cordon: ControlPlane, tmp_path: Path) -> AsyncIterator[ServiceStack]:
    overrides = {"access": {"operators": ["@platform-oncall"], "impersonate": "id"}}
    async with running_service(
        tmp_path,
        str(people_may_cordon.bot_kubeconfig),
        context=BOT_CONTEXT,
        config_overrides=overrides,
    ) as served:
        served.slack.add_user(STRANGER, "stranger")
        served.slack.add_usergroup("S0ONCALL", "platform-oncall", [OPERATOR, STRANGER])
        served.slack.add_usergroup("S0K8S", "oncall", [OPERATOR])
        yield served


async def cordon_as(stack: ServiceStack, user: str) -> str:
    reply = await stack.command(f"cordon {NODE} maintenance", user_id=user)
    assert reply.message is not None, reply.text
    answer = await stack.click("Confirm", reply.message, user_id=user, channel_id=DEMO_CHANNEL)
    assert answer.message is not None
    return str(answer.message["text"])


async def test_with_impersonation_a_person_without_rbac_is_refused_and_a_member_cordons(
    as_people: ServiceStack, node_reset: Caller
) -> None:
    refused = await cordon_as(as_people, STRANGER)
    assert (
        f'nodes "{NODE}" is forbidden: User "slack:{STRANGER}" cannot patch resource "nodes" '
        'in API group "" at the cluster scope'
    ) in refused
    assert not node_reset("GET", NODE_PATH).body["spec"].get("unschedulable")

    done = await cordon_as(as_people, OPERATOR)
    assert f"Cordoned Node {NODE} on sim" in done
    node = node_reset("GET", NODE_PATH).body
    assert node["spec"]["unschedulable"] is True
    assert node["metadata"]["annotations"]["kai-chatops/cordoned-by"] == OPERATOR
