"""Changes sent as the Slack user (`access.impersonate`) on a real kube-apiserver (1.37,
constrained impersonation on by default), with deploy/components/impersonation applied and a
RoleBinding that lets the group `slack:oncall` patch ScaledJobs in `annia`:

- from Slack, a member's pause works and a non-member's is refused by Kubernetes, in its words;
- deploy/'s admission policy still fences what the bot writes while impersonating;
- what a token that leaves out the marker gets (docs/security.md);
- the simulator's refusals are worded as this server's (testbed/sim/impersonation.py).
"""

from __future__ import annotations

import json
import logging
import ssl
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from botcalls import BOT_USER, KEDA_NS, SCALED_JOB, Answer, Seeder, admin_caller, bot_caller, parse
from conftest import BOT_CONTEXT
from controlplane import ControlPlane, poll

from bot.config.settings import ClusterSettings, KubernetesSettings
from bot.core import errors
from bot.keda import usecase
from bot.kube import gateway as kube
from bot.kube import kinds
from bot.kube.gateway import KubeGateway
from bot.kube.identity import Impersonation
from testbed.sim.impersonation import Impersonation as SimImpersonation
from testbed.sim.impersonation import read_headers
from testbed.sim.routing import Route
from testbed.stack import DEMO_CHANNEL, OPERATOR, ServiceStack, running_service

COMPONENT = Path(__file__).resolve().parents[2] / "deploy/components/impersonation"
STRANGER = "U0STRANGER"  # an operator in Slack, but not in the Kubernetes group slack:oncall
PAUSED = "autoscaling.keda.sh/paused"
ONCALL_RBAC: list[dict[str, Any]] = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "oncall-pause", "namespace": KEDA_NS},
        "rules": [{"apiGroups": ["keda.sh"], "resources": ["scaledjobs"], "verbs": ["patch"]}],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "oncall-pause", "namespace": KEDA_NS},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "oncall-pause",
        },
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "slack:oncall"}
        ],
    },
]
MEMBER = Impersonation("slack:U0MEMBER", ("slack:oncall",), "U0MEMBER")
OUTSIDER = Impersonation("bob@example.com", ("slack:finance",), "U0BOB")


def rbac_path(obj: dict[str, Any]) -> str:
    plural = obj["kind"].lower() + "s"
    namespace = obj["metadata"].get("namespace")
    where = f"/namespaces/{namespace}" if namespace else ""
    return f"/apis/rbac.authorization.k8s.io/v1{where}/{plural}/{obj['metadata']['name']}"


def as_person(plane: ControlPlane, path: str, body: Any, headers: list[tuple[str, str]]) -> Answer:
    """A merge patch with the bot's token and these impersonation headers (one per name)."""
    request = urllib.request.Request(
        f"{plane.url}{path}",
        data=json.dumps(body).encode(),
        method="PATCH",
        headers={
            "Authorization": f"Bearer {bot_caller(plane).token}",
            "Content-Type": "application/merge-patch+json",
            "Accept": "application/json",
            **dict(headers),
        },
    )
    context = ssl.create_default_context(cafile=str(plane.ca_file))
    try:
        with urllib.request.urlopen(request, timeout=15, context=context) as r:
            return Answer(int(r.status), parse(r.read()))
    except urllib.error.HTTPError as e:
        return Answer(e.code, parse(e.read()))


@pytest.fixture(scope="module")
def granted(control_plane: ControlPlane) -> Iterator[ControlPlane]:
    """The component and the on-call RoleBinding applied (deleted again afterwards, so the
    tier's "nothing more" RBAC test still holds), in force once a dry-run patch as a member
    of slack:oncall passes."""
    docs = [d for d in yaml.safe_load_all((COMPONENT / "rbac-impersonate.yaml").read_text()) if d]
    applied = docs + ONCALL_RBAC
    for obj in applied:
        control_plane.apply(obj)
    seeder = Seeder(control_plane)
    probe = seeder.make(SCALED_JOB, prefix="probe")
    path = SCALED_JOB.path(KEDA_NS, probe["metadata"]["name"]) + "?dryRun=All"
    body = {"metadata": {"annotations": {PAUSED: "true"}}}

    def in_force() -> bool | None:
        return as_person(control_plane, path, body, MEMBER.headers()).status == 200 or None

    poll("impersonation RBAC in force", in_force, 30)
    try:
        yield control_plane
    finally:
        seeder.cleanup()
        admin = admin_caller(control_plane)
        for obj in reversed(applied):
            assert admin("DELETE", rbac_path(obj)).status in (200, 404)


@pytest.fixture
def gateway(granted: ControlPlane) -> Iterator[KubeGateway]:
    cluster = ClusterSettings(name="cluster-tier", kubeconfig=str(granted.bot_kubeconfig))
    connected = kube.connect(cluster, KubernetesSettings(timedelta(seconds=10), retries=0))
    yield connected
    connected.close()


@pytest.fixture
async def stack(granted: ControlPlane, tmp_path: Path) -> AsyncIterator[ServiceStack]:
    """The service as in the e2e tier, in `id` mode, with the bot's own token."""
    overrides = {"access": {"operators": ["@platform-oncall"], "impersonate": "id"}}
    async with running_service(
        tmp_path,
        str(granted.bot_kubeconfig),
        context=BOT_CONTEXT,
        config_overrides=overrides,
        keda_wait=usecase.AckWait(timeout=0.2, interval=0.05),  # no KEDA controller runs there
    ) as served:
        served.slack.add_user(STRANGER, "stranger")
        served.slack.add_usergroup("S0ONCALL", "platform-oncall", [OPERATOR, STRANGER])
        served.slack.add_usergroup("S0K8S", "oncall", [OPERATOR])
        yield served


async def pause(stack: ServiceStack, name: str, user: str) -> str:
    """`/kai pause annia/NAME` and its Confirm, as `user`; the result's text."""
    reply = await stack.command(f"pause {KEDA_NS}/{name}", user_id=user)
    assert reply.message is not None, reply.text
    answer = await stack.click("Confirm", reply.message, user_id=user, channel_id=DEMO_CHANNEL)
    assert answer.message is not None
    return str(answer.message["text"])


async def test_from_slack_a_members_pause_works_and_a_non_members_is_refused_by_kubernetes(
    stack: ServiceStack,
    granted: ControlPlane,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    seeder = Seeder(granted)
    job = seeder.make(SCALED_JOB, prefix="imp")["metadata"]["name"]
    path = SCALED_JOB.path(KEDA_NS, job)
    try:
        refused = await pause(stack, job, STRANGER)
        assert (
            f'scaledjobs.keda.sh "{job}" is forbidden: User "slack:{STRANGER}" cannot patch '
            f'resource "scaledjobs" in API group "keda.sh" in the namespace "{KEDA_NS}"'
        ) in refused
        assert f"Kubernetes refused to let slack:{STRANGER}" in refused
        assert PAUSED not in admin_caller(granted)("GET", path).body["metadata"]["annotations"]

        done = await pause(stack, job, OPERATOR)

        assert "The pause is written" in done or "is paused" in done, done
        written = admin_caller(granted)("GET", path).body["metadata"]["annotations"]
        assert (written[PAUSED], written["kai-chatops/paused-by"]) == ("true", OPERATOR)
        lines = [
            json.loads(r.getMessage()) for r in caplog.records if r.name == "kai_chatops.audit"
        ]
        assert [(line["user"], line["outcome"]) for line in lines] == [
            (STRANGER, "failed"),
            (OPERATOR, "ok"),
        ]
        assert [line["details"]["kubernetes_user"] for line in lines] == [
            f"slack:{STRANGER}",
            f"slack:{OPERATOR}",
        ]
        assert {line["details"]["impersonated_by"] for line in lines} == {BOT_USER}
    finally:
        seeder.cleanup()


async def test_the_admission_policy_still_fences_a_write_made_as_a_person(
    gateway: KubeGateway, granted: ControlPlane
) -> None:
    seeder = Seeder(granted)
    job = seeder.make(SCALED_JOB, prefix="imp")["metadata"]["name"]
    try:
        with pytest.raises(errors.KubeForbidden) as refused:
            await gateway.patch_object(
                kinds.SCALED_JOB, job, KEDA_NS, {"spec": {"maxReplicaCount": 50}}, acting_as=MEMBER
            )
        said = str(refused.value)
        assert "ValidatingAdmissionPolicy 'kai-chatops-owned-fields'" in said
        assert "kai-chatops may not change spec.maxReplicaCount" in said
        # The pause itself, as the same person, is admitted.
        paused = await gateway.patch_object(
            kinds.SCALED_JOB, job, KEDA_NS, {"metadata": {"annotations": {PAUSED: "true"}}},
            acting_as=MEMBER,
        )  # fmt: skip
        assert paused["metadata"]["annotations"][PAUSED] == "true"
    finally:
        seeder.cleanup()


def test_a_token_leaving_out_the_marker_is_fenced_only_as_a_slack_user(
    granted: ControlPlane,
) -> None:
    """What docs/security.md says: the policy knows an impersonated write by the marker the
    bot sends, or by a `slack:` user; a stolen token that impersonates a person by email
    without the marker gets that person's rights, no more (RBAC), and no fence."""
    seeder = Seeder(granted)
    job = seeder.make(SCALED_JOB, prefix="imp")["metadata"]["name"]
    path = SCALED_JOB.path(KEDA_NS, job)
    # The person's RBAC lets them patch the whole object; only the fence says no.
    rbac = {**ONCALL_RBAC[1], "metadata": {"name": "alice-pause", "namespace": KEDA_NS}}
    rbac["subjects"] = [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice@example.com"}
    ]
    granted.apply(rbac)
    spec = {"spec": {"maxReplicaCount": 7}}
    try:
        as_slack_id = as_person(
            granted,
            path,
            spec,
            [("Impersonate-User", "slack:U0MEMBER"), ("Impersonate-Group", "slack:oncall")],
        )
        assert as_slack_id.status == 403, as_slack_id.message
        assert "kai-chatops may not change spec.maxReplicaCount" in as_slack_id.message

        def as_alice() -> Answer | None:
            answer = as_person(granted, path, spec, [("Impersonate-User", "alice@example.com")])
            return answer if answer.status == 200 else None

        assert poll("alice's RoleBinding in force", as_alice, 30).status == 200
    finally:
        admin_caller(granted)("DELETE", rbac_path(rbac))
        seeder.cleanup()


@pytest.mark.parametrize(
    ("namespace", "person"),
    [(KEDA_NS, OUTSIDER), ("kai-scheduler", MEMBER)],
    ids=["the person may not", "the bot may not impersonate there"],
)
def test_the_simulator_refuses_in_the_real_servers_words(
    granted: ControlPlane, namespace: str, person: Impersonation
) -> None:
    seeder = Seeder(granted)
    job = seeder.make(SCALED_JOB, namespace=namespace, prefix="imp")["metadata"]["name"]
    try:
        body = {"metadata": {"annotations": {PAUSED: "true"}}}
        real = as_person(granted, SCALED_JOB.path(namespace, job), body, person.headers())

        sim = SimImpersonation(allowed=namespace == KEDA_NS)
        sim.grant("slack:oncall", "patch", "scaledjobs", "keda.sh", KEDA_NS)
        route = Route("patch", "keda.sh", "v1alpha1", "scaledjobs", namespace, job)
        acting = read_headers(person.headers())
        assert acting is not None
        refusal = sim.refusal(acting, route)

        assert refusal is not None
        assert (real.status, real.message) == (403, refusal.message)
    finally:
        seeder.cleanup()
