"""scheduling.k8s.io/v1 PriorityClass: defaults, validation, the one global default, system classes."""

from __future__ import annotations

import pytest

PC = "/apis/scheduling.k8s.io/v1/priorityclasses"


def pc(name: str, value: int, **extra) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **extra}


def test_system_priority_classes_exist(server):
    items = {i["metadata"]["name"]: i for i in server.request("GET", PC).json()["items"]}
    assert items["system-node-critical"]["value"] == 2000001000
    assert items["system-cluster-critical"]["value"] == 2000000000
    assert items["system-cluster-critical"]["preemptionPolicy"] == "PreemptLowerPriority"


def test_defaults_and_validation(server):
    created = server.request("POST", PC, pc("sched-a", 10))
    assert created.status == 201 and created.json()["preemptionPolicy"] == "PreemptLowerPriority"
    reserved = server.request("POST", PC, pc("system-x", 1)).json()
    assert reserved["message"] == ('PriorityClass.scheduling.k8s.io "system-x" is invalid: metadata.name: Forbidden: '
                                   "priority class names with 'system-' prefix are reserved for system use only. "
                                   "error: system-x is not a known system priority class")
    too_big = server.request("POST", PC, pc("sched-big", 1_000_000_001)).json()
    assert too_big["details"]["causes"] == [{"reason": "FieldValueForbidden", "field": "value", "message":
                                            "Forbidden: maximum allowed value of a user defined priority is "
                                            "1000000000"}]
    policy = server.request("POST", PC, pc("sched-p", 1, preemptionPolicy="Sometimes")).json()
    assert 'Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"' in policy["message"]
    changed = server.request("PATCH", f"{PC}/sched-a", {"value": 11}, {"Content-Type": "application/merge-patch+json"})
    assert changed.status == 422 and "value: Forbidden: may not be changed in an update." in changed.json()["message"]


def test_only_one_global_default(server):
    assert server.request("POST", PC, pc("sched-d1", 1, globalDefault=True)).status == 201
    second = server.request("POST", PC, pc("sched-d2", 2, globalDefault=True))
    assert second.status == 403
    assert second.json()["message"] == ('priorityclasses.scheduling.k8s.io "sched-d2" is forbidden: PriorityClass '
                                        'sched-d1 is already marked as default. Only one default can exist')


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_create_and_get_priorityclass(server):
    out = server.kubectl("create", "priorityclass", "sched-k", "--value=100", "--description=from kubectl")
    assert "priorityclass.scheduling.k8s.io/sched-k created" in out.stdout
    header = server.kubectl("get", "pc").stdout.splitlines()[0].split()
    assert header == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    row = server.kubectl("get", "pc", "sched-k", "--no-headers").stdout.split()
    assert row[:3] == ["sched-k", "100", "false"] and row[4] == "PreemptLowerPriority"


def test_system_classes_cannot_be_deleted(server):
    refused = server.request("DELETE", f"{PC}/system-node-critical")
    assert refused.status == 403
    assert refused.json()["message"] == ('priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: '
                                         'this is a system priority class and cannot be deleted')
