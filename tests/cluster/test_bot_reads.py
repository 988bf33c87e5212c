"""The bot's read-only views against a real kube-apiserver, with its own token: KAI queues,
pending groups, why a pod waits, diagnose, lists — every list and field selector it sends is
answered by the real server (a selector the server does not support would be a 400 here).
"""

from __future__ import annotations

from testbed.stack import VIEWER, ServiceStack


async def test_queues_show_the_tree_read_from_the_upstream_queue_crd(stack: ServiceStack) -> None:
    reply = await stack.command("queues", user_id=VIEWER)
    lines = reply.text.splitlines()
    assert lines[0] == "KAI queues on sim"
    assert (
        "gpu-research (GPU research): GPU quota 8, limit 16, over-quota weight 1, allocated 6, "
        "requested 6 [parent: takes no jobs itself]"
    ) in lines


async def test_pending_leaves_out_groups_whose_pods_all_run(stack: ServiceStack) -> None:
    reply = await stack.command("pending")
    assert "Nothing waits for the KAI scheduler in all namespaces." in reply.text
    assert "1 left out: their pods all run" in reply.text


async def test_why_in_a_namespace_deploy_does_not_grant_names_the_refusal(
    stack: ServiceStack,
) -> None:
    """deploy/ grants pod reads where KAI's workloads and operands run, not in `keda`: the real
    server's 403 reaches the user in words, naming the identity and the verb."""
    reply = await stack.command("why keda/keda-operator-metrics-apiserver-7b9f6c5d48-p4x9z")
    assert reply.message is not None and reply.message["response_type"] == "ephemeral"
    assert 'kai-chatops is not allowed to get pods "keda-operator-metrics-apiserver' in reply.text
    assert 'cannot get resource "pods" in API group "" in the namespace "keda"' in reply.text


async def test_why_an_absent_pod_is_named(stack: ServiceStack) -> None:
    reply = await stack.command("why annia/nope")
    assert reply.text == "Pod annia/nope was not found on sim."


async def test_diagnose_kai_lists_pods_events_and_reads_with_selectors_the_server_accepts(
    stack: ServiceStack,
) -> None:
    reply = await stack.command("diagnose kai")
    assert reply.text.splitlines()[:2] == [
        "Diagnosis of kai on sim: Healthy",
        "Every KAI operand and shard scheduler is available.",
    ]
    assert "Deployment kai-scheduler/kai-operator: Healthy" in reply.text


async def test_list_reads_each_kind_with_its_verdict(stack: ServiceStack) -> None:
    releases = await stack.command("list hr", user_id=VIEWER)
    assert releases.text.splitlines()[0].startswith("HelmReleases on sim")
    assert "flux-system/kai-scheduler: Healthy" in releases.text
    jobs = await stack.command("scaledjobs annia", user_id=VIEWER)
    assert "annia-worker" in jobs.text
    apps = await stack.command("list app argocd", user_id=VIEWER)
    assert "argocd/kai-scheduler" in apps.text


async def test_a_cluster_wide_list_deploy_does_not_grant_says_to_name_a_namespace(
    stack: ServiceStack,
) -> None:
    reply = await stack.command("list app --all-namespaces", user_id=VIEWER)
    assert reply.text.startswith(
        "Listing Application across all namespaces needs a cluster-wide list grant, which "
        "kai-chatops lacks here; name a namespace"
    )
