"""Scalar fields Go leaves out when zero (omitempty, not pointers) are forgotten by the decoding into the
struct: not stored, not returned, not owned in managedFields, as kube-apiserver v1.20.2 answers."""

from __future__ import annotations

from conftest import Server


def test_zero_valued_omitempty_scalars_are_neither_returned_nor_owned(server: Server):
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "zeros"},
        "spec": {
            "ports": [{"port": 80, "nodePort": 0}],
            "externalName": "",
            "publishNotReadyAddresses": False,
        },
    }
    created = server.request("POST", "/api/v1/namespaces/default/services", service)
    assert created.status == 201, created.body
    spec = created.json()["spec"]
    assert "externalName" not in spec and "publishNotReadyAddresses" not in spec
    assert "nodePort" not in spec["ports"][0]
    owned = created.json()["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]
    assert "f:externalName" not in owned and "f:publishNotReadyAddresses" not in owned
    got = server.request("GET", "/api/v1/namespaces/default/services/zeros").json()["spec"]
    assert "externalName" not in got and "publishNotReadyAddresses" not in got


def test_a_priority_class_keeps_its_value_zero_but_not_a_false_global_default(server: Server):
    body = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "zero"},
        "value": 0,
        "globalDefault": False,
        "description": "",
    }
    created = server.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", body)
    assert created.status == 201, created.body
    obj = created.json()
    assert obj["value"] == 0  # no omitempty: Go writes it even when zero
    assert "globalDefault" not in obj and "description" not in obj
    assert obj["metadata"]["managedFields"][0]["fieldsV1"] == {"f:preemptionPolicy": {}, "f:value": {}}
