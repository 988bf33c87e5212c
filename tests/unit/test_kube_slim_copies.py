"""The watched copies a fleet keeps (`bot.kube.copies.slim`, `metadata_of`, `Flag`): smaller, and
read the same by every rule that reads them."""

from __future__ import annotations

import asyncio
import copy

import pytest

from bot.core import conditions as c
from bot.core.models import RawObject
from bot.health import deployments, operands
from bot.kube.copies import Flag, metadata_of, slim

MANAGED = [
    {"manager": "kubectl", "time": "2026-11-30T10:00:00Z", "fieldsV1": {"f:spec": {}}},
    {"manager": "kube-controller-manager", "time": "2026-12-01T09:30:00Z", "fieldsV1": {}},
]


def deployment(available: str, updated: int) -> RawObject:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "binder",
            "namespace": "kai-scheduler",
            "generation": 3,
            "labels": {"app.kubernetes.io/managed-by": "kai-operator"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...}"},
            "managedFields": copy.deepcopy(MANAGED),
            "creationTimestamp": "2026-11-01T00:00:00Z",
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "binder"}},
            "template": {"spec": {"containers": [{"name": "binder", "image": "x" * 500}]}},
        },
        "status": {
            "observedGeneration": 3,
            "replicas": 2,
            "updatedReplicas": updated,
            "availableReplicas": 2 if available == "True" else 0,
            "conditions": [{"type": "Available", "status": available}],
        },
    }


@pytest.mark.parametrize(("available", "updated"), [("True", 2), ("False", 2), ("True", 1)])
def test_a_slim_deployment_is_assessed_as_the_whole_one(available: str, updated: int) -> None:
    whole = deployment(available, updated)
    kept = slim(whole)
    assert deployments.assess_deployment(kept) == deployments.assess_deployment(whole)
    assert deployments.assess_deployment(kept, as_kai=True) == deployments.assess_deployment(
        whole, as_kai=True
    )
    assert deployments.has_no_available_replica(kept) == deployments.has_no_available_replica(whole)
    assert operands.is_operand(kept) and deployments.desired_replicas(kept) == 2
    assert c.last_write_time(kept) == c.last_write_time(whole)


def test_a_slim_copy_leaves_out_the_pod_template_field_sets_and_last_applied() -> None:
    kept = slim(deployment("True", 2))
    assert "template" not in kept["spec"]
    assert kept["spec"]["selector"] == {"matchLabels": {"app": "binder"}}
    assert kept["metadata"]["managedFields"] == [{"time": "2026-12-01T09:30:00Z"}]
    assert kept["metadata"]["annotations"] == {}
    assert len(repr(kept)) < len(repr(deployment("True", 2))) / 2


def test_other_kinds_keep_their_spec_whole() -> None:
    config = {"kind": "Config", "metadata": {"name": "kai-config"}, "spec": {"template": "x"}}
    assert slim(config)["spec"] == {"template": "x"}


def test_a_metadata_copy_keeps_what_says_which_objects_exist() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": "queues.scheduling.run.ai",
            "uid": "u-1",
            "resourceVersion": "42",
            "labels": {"app": "kai"},
            "annotations": {"controller-gen.kubebuilder.io/version": "v0.16.1"},
            "managedFields": MANAGED,
        },
        "spec": {"versions": []},
    }
    assert metadata_of(crd) == {
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadata",
        "metadata": {
            "name": "queues.scheduling.run.ai",
            "uid": "u-1",
            "resourceVersion": "42",
            "labels": {"app": "kai"},
        },
    }


async def test_a_flag_wakes_who_waited_and_answers_at_once_after_without_keeping_an_event() -> None:
    flag = Flag()
    waiting = [asyncio.create_task(flag.wait()) for _ in range(3)]
    await asyncio.sleep(0)  # they wait now
    assert not flag.is_set() and not any(w.done() for w in waiting)
    flag.set()
    await asyncio.wait_for(asyncio.gather(*waiting), 1)
    assert flag.is_set() and flag._event is None  # nothing kept for a fleet's idle copies
    await asyncio.wait_for(flag.wait(), 1)  # set already: no wait
