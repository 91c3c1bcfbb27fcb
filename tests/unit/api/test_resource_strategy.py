"""resource.k8s.io defaults and feature gates: what v1.34 drops when a gate is off (unless the stored object
already uses it), what it keeps when the gate is on, and the v1 defaults."""

from __future__ import annotations

import copy

import pytest

from kube_apiserver.api.resource import defaults, drop, features
from kube_apiserver.apimachinery import errors


@pytest.fixture
def gates():
    saved = dict(features.GATES)
    yield features.GATES
    features.GATES.clear()
    features.GATES.update(saved)


def slice_with_everything() -> dict:
    return {"spec": {"driver": "d", "perDeviceNodeSelection": True, "sharedCounters": [{"name": "s"}],
                     "devices": [{"name": "a", "nodeName": "n", "taints": [{"key": "k", "effect": "NoSchedule"}],
                                  "bindsToNode": True, "bindingConditions": ["c"], "bindingFailureConditions": ["f"],
                                  "allowMultipleAllocations": True,
                                  "capacity": {"m": {"value": "1", "requestPolicy": {"default": "1"}}},
                                  "consumesCounters": [{"counterSet": "s", "counters": {}}]}]}}


def test_alpha_slice_fields_are_dropped_by_default():
    obj = slice_with_everything()
    drop.drop_slice(obj, None)
    assert obj == {"spec": {"driver": "d", "devices": [{"name": "a", "capacity": {"m": {"value": "1"}}}]}}


def test_alpha_slice_fields_stay_when_in_use_or_enabled(gates):
    old = slice_with_everything()
    obj = copy.deepcopy(old)
    drop.drop_slice(obj, old)
    assert obj == old
    for gate in (features.DEVICE_TAINTS, features.PARTITIONABLE_DEVICES, features.BINDING_CONDITIONS,
                 features.CONSUMABLE_CAPACITY):
        gates[gate] = True
    obj = slice_with_everything()
    drop.drop_slice(obj, None)
    assert obj == slice_with_everything()


def claim_with_everything() -> dict:
    return {"spec": {"devices": {
        "requests": [{"name": "r", "exactly": {"deviceClassName": "c", "adminAccess": True, "capacity": {}}},
                     {"name": "p", "firstAvailable": [{"name": "s", "deviceClassName": "c", "capacity": {}}]}],
        "constraints": [{"distinctAttribute": "d.example.com/id"}]}},
        "status": {"allocation": {"devices": {"results": [
            {"request": "r", "driver": "d", "pool": "p", "device": "x", "adminAccess": True, "shareID": "u",
             "consumedCapacity": {"m": "1"}, "bindingConditions": ["c"], "bindingFailureConditions": ["f"]}]}},
            "devices": [{"driver": "d", "pool": "p", "device": "x", "shareID": "u"}]}}


def test_claim_fields_dropped_by_default_and_with_gates_off(gates):
    obj = claim_with_everything()
    drop.drop_claim(obj, None)
    requests = obj["spec"]["devices"]["requests"]
    assert requests[0]["exactly"] == {"deviceClassName": "c", "adminAccess": True}  # DRAAdminAccess is beta
    assert requests[1]["firstAvailable"] == [{"name": "s", "deviceClassName": "c"}]  # DRAPrioritizedList is beta
    assert obj["spec"]["devices"]["constraints"] == [{"distinctAttribute": "d.example.com/id"}]  # v1.34 keeps it
    assert obj["status"]["allocation"]["devices"]["results"] == [
        {"request": "r", "driver": "d", "pool": "p", "device": "x", "adminAccess": True}]
    assert obj["status"]["devices"] == [{"driver": "d", "pool": "p", "device": "x"}]
    gates.update({features.ADMIN_ACCESS: False, features.PRIORITIZED_LIST: False, features.DEVICE_STATUS: False})
    obj = claim_with_everything()
    drop.drop_claim(obj, None)
    assert obj["spec"]["devices"]["requests"] == [{"name": "r", "exactly": {"deviceClassName": "c"}}, {"name": "p"}]
    assert "devices" not in obj["status"]
    assert "adminAccess" not in obj["status"]["allocation"]["devices"]["results"][0]


def test_deallocated_devices_lose_their_status():
    old = claim_with_everything()
    obj = copy.deepcopy(old)
    obj["status"]["allocation"]["devices"]["results"][0]["device"] = "y"
    drop.drop_deallocated_devices(obj, old)
    assert "devices" not in obj["status"]


def test_device_class_extended_resource_name(gates):
    obj = {"spec": {"extendedResourceName": "example.com/gpu"}}
    drop.drop_device_class(obj, None)
    assert obj == {"spec": {}}
    obj = {"spec": {"extendedResourceName": "example.com/gpu"}}
    drop.drop_device_class(obj, copy.deepcopy(obj))
    assert obj == {"spec": {"extendedResourceName": "example.com/gpu"}}


def test_request_defaults():
    claim = {"spec": {"devices": {"requests": [
        {"name": "a", "exactly": {"deviceClassName": "c", "tolerations": [{"key": "k"}]}},
        {"name": "b", "exactly": {"deviceClassName": "c", "allocationMode": "All"}},
        {"name": "c", "firstAvailable": [{"name": "s", "deviceClassName": "c", "count": 3,
                                          "capacity": {"requests": {"memory": "1024Mi"}}}]}]}}}
    defaults.default_claim(claim, "ResourceClaim")
    requests = claim["spec"]["devices"]["requests"]
    assert requests[0]["exactly"] == {"deviceClassName": "c", "allocationMode": "ExactCount", "count": 1,
                                      "tolerations": [{"key": "k", "operator": "Equal"}]}
    assert requests[1]["exactly"] == {"deviceClassName": "c", "allocationMode": "All"}
    assert requests[2]["firstAvailable"][0] == {"name": "s", "deviceClassName": "c", "count": 3,
                                                "allocationMode": "ExactCount",
                                                "capacity": {"requests": {"memory": "1Gi"}}}


def test_slice_defaults_and_malformed_quantities():
    obj = {"spec": {"pool": {"name": "p"}, "devices": [{"name": "d", "taints": [{"key": "k"}],
                                                        "capacity": {"m": {"value": "1000m"}}}]}}
    defaults.default_slice(obj, "ResourceSlice")
    assert obj["spec"]["pool"]["generation"] == 0
    assert obj["spec"]["devices"][0]["capacity"]["m"]["value"] == "1"
    assert obj["spec"]["devices"][0]["taints"][0]["timeAdded"].endswith("Z")
    with pytest.raises(errors.StatusError) as err:
        defaults.default_slice({"spec": {"sharedCounters": [{"counters": {"c": {"value": "x"}}}]}}, "ResourceSlice")
    assert err.value.code == 400
