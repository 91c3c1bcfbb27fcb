"""resource.k8s.io validation pieces the integration tests cannot reach with v1.34's default feature gates
(consumable capacity, partitionable devices, binding conditions) or that are easier to pin here: request
policies, UIDs, interface addresses, qualified names, long map keys and the internal-struct rendering of
bad values."""

from __future__ import annotations

import pytest

from kube_apiserver.api.resource import features, gostruct
from kube_apiserver.api.resource.capacity import validate_capacity
from kube_apiserver.api.resource.claim_status import interface_address_errors, validate_uid
from kube_apiserver.api.resource.claim_validation import validate_constraint, validate_fully_qualified_name
from kube_apiserver.api.resource.common import truncate_key, validate_binding_conditions
from kube_apiserver.api.resource.slice_validation import validate_slice_spec
from kube_apiserver.apimachinery.field import Path, go_json

DEVICE = Path("spec", "devices").index(0)


def messages(errs) -> list[str]:
    return [str(e) for e in errs]


@pytest.fixture
def gates():
    saved = dict(features.GATES)
    yield features.GATES
    features.GATES.clear()
    features.GATES.update(saved)


# ---- consumable capacity ----

def test_request_policy_needs_multiple_allocations():
    capacity = {"value": "10Gi", "requestPolicy": {"default": "1Gi"}}
    assert messages(validate_capacity(capacity, DEVICE.child("capacity").key("memory"), False)) == [
        "spec.devices[0].capacity[memory].requestPolicy: Forbidden: allowMultipleAllocations must be true"]


def test_request_policy_valid_values():
    path = Path("c")
    policy = {"default": "3", "validValues": ["2", "1", "20", "1"]}
    assert messages(validate_capacity({"value": "10", "requestPolicy": policy}, path, True)) == [
        'c.requestPolicy.validValues[1]: Invalid value: "1": values must be sorted in ascending order',
        'c.requestPolicy.validValues[3]: Invalid value: "1": values must be sorted in ascending order',
        'c.requestPolicy.validValues[2]: Invalid value: "20": option is larger than capacity value: 10',
        'c.requestPolicy.validValues[3]: Duplicate value: "1"',
        'c.requestPolicy.validValues: Invalid value: "3": default value is not valid according to the requestPolicy',
    ]
    both = {"default": "1", "validValues": ["1"], "validRange": {"min": "1"}}
    assert messages(validate_capacity({"value": "10", "requestPolicy": both}, path, True)) == [
        'c.requestPolicy: Forbidden: exactly one policy can be specified, cannot specify "validValues" and '
        '"validRange" at the same time']
    assert messages(validate_capacity({"value": "10", "requestPolicy": {"validValues": ["1"]}}, path, True)) == [
        "c.requestPolicy.default: Required value: required when validValues is defined"]


def test_request_policy_range():
    path = Path("c")
    policy = {"default": "1Gi", "validRange": {"min": "2Gi", "max": "12Gi", "step": "3Gi"}}
    assert messages(validate_capacity({"value": "10Gi", "requestPolicy": policy}, path, True)) == [
        'c.requestPolicy.validRange.min: Invalid value: "1Gi": default is less than min: 2Gi',
        'c.requestPolicy.validRange.max: Invalid value: "12Gi": max is larger than capacity value: 10Gi',
        'c.requestPolicy.validRange.step: Invalid value: "1Gi": value is not a multiple of a given step (3Gi) '
        "from (2Gi)",
        'c.requestPolicy.validRange.step: Invalid value: "12Gi": value is not a multiple of a given step (3Gi) '
        "from (2Gi)",
    ]
    assert messages(validate_capacity({"value": "1", "requestPolicy": {"default": "1", "validRange": {}}}, path,
                                      True)) == ["c.requestPolicy.validRange.min: Required value: required when "
                                                 "validRange is defined"]


# ---- claims ----

def test_distinct_attribute_and_its_gate(gates):
    names = {"gpu": None}
    assert validate_constraint({"distinctAttribute": "gpu.example.com/id"}, Path("c"), names) == []
    assert messages(validate_constraint({}, Path("c"), names)) == ["c.matchAttribute: Required value"]
    gates[features.CONSUMABLE_CAPACITY] = True
    assert messages(validate_constraint({}, Path("c"), names)) == [
        'c: Required value: exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple '
        "fields are set"]


@pytest.mark.parametrize(("name", "expected"), [
    ("gpu.example.com/model", []),
    ("", ["p: Required value: name required"]),
    ("/model", ["p: Required value: the domain must not be empty"]),
    ("gpu.example.com/", ["p: Required value: the name must not be empty"]),
    ("a/b/c", []),  # three parts are not checked in v1.34
    ("x" * 33 + "/y", []),  # domains may be 63 bytes
    ("gpu.example.com/" + "y" * 33, ["p: Too long: may not be more than 32 bytes"]),
])
def test_qualified_names(name, expected):
    assert messages(validate_fully_qualified_name(name, Path("p"))) == expected


def test_long_map_keys_are_shortened_in_the_middle():
    assert truncate_key("a" * 20 + "b" * 20, 16) == "a" * 7 + "..." + "b" * 6
    assert truncate_key("short", 96) == "short"


# ---- status ----

@pytest.mark.parametrize(("uid", "expected"), [
    ("4ee4d2a4-8f0b-4a30-a6fa-2a3c1b0e6f01", []),
    ("abc", ['u: Invalid value: "abc": error validating uid: invalid UUID length: 3']),
    ("4ee4d2a48f0b4a30a6fa2a3c1b0e6f01", ['u: Invalid value: "4ee4d2a48f0b4a30a6fa2a3c1b0e6f01": uid must be in '
                                          "RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with "
                                          "lowercase hexadecimal characters"]),
    ("4EE4D2A4-8F0B-4A30-A6FA-2A3C1B0E6F01", ['u: Invalid value: "4EE4D2A4-8F0B-4A30-A6FA-2A3C1B0E6F01": uid must '
                                              "be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` "
                                              "with lowercase hexadecimal characters"]),
    ("4ee4d2a4+8f0b-4a30-a6fa-2a3c1b0e6f01", ['u: Invalid value: "4ee4d2a4+8f0b-4a30-a6fa-2a3c1b0e6f01": error '
                                              "validating uid: invalid UUID format"]),
])
def test_share_ids(uid, expected):
    assert messages(validate_uid(uid, Path("u"))) == expected


@pytest.mark.parametrize(("address", "expected"), [
    ("10.9.8.7/24", None),
    ("2001:db8::1/64", None),
    ("::ffff:10.9.8.7/120", "10.9.8.7/24"),
    ("10.9.8.7/33", "invalid"),
    ("010.9.8.7/24", "10.9.8.7/24"),
])
def test_interface_addresses(address, expected):
    errs = messages(interface_address_errors(address, Path("ip")))
    if expected is None:
        assert errs == []
    elif expected == "invalid":
        assert errs == [f'ip: Invalid value: "{address}": must be a valid address in CIDR form, (e.g. 10.9.8.7/24 '
                        "or 2001:db8::1/64)"]
    else:
        assert errs == [f'ip: Invalid value: "{address}": must be in canonical form ("{expected}")']


def test_binding_conditions():
    device = {"bindingConditions": ["ready", "ready"], "bindingFailureConditions": ["ready"]}
    assert messages(validate_binding_conditions(device, DEVICE)) == [
        'spec.devices[0].bindingConditions[1]: Duplicate value: "ready"',
        'spec.devices[0].bindingFailureConditions[0]: Invalid value: "ready": bindingFailureConditions must not '
        "overlap with bindingConditions",
    ]
    assert messages(validate_binding_conditions({"bindingConditions": ["a"]}, DEVICE)) == [
        "spec.devices[0].bindingFailureConditions: Invalid value: null: bindingFailureConditions are required to "
        "use bindingConditions"]


# ---- ResourceSlices with partitionable devices ----

def test_shared_counters_and_per_device_node_selection():
    spec = {"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1},
            "perDeviceNodeSelection": True,
            "sharedCounters": [{"name": "gpu-0-counters", "counters": {"memory": {"value": "8Gi"}}}],
            "devices": [
                {"name": "a", "nodeName": "node-1", "consumesCounters": [
                    {"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "1Gi"}, "cores": {"value": "1"}}},
                    {"counterSet": "other", "counters": {"x": {"value": "1"}}}]},
                {"name": "b"},
                {"name": "c", "nodeName": "node-1", "allNodes": True}]}
    assert messages(validate_slice_spec(spec, None, Path("spec"))) == [
        'spec.devices[0].consumesCounters[0].counters: Invalid value: "cores": must reference a counter defined '
        "in the ResourceSlice sharedCounters",
        'spec.devices[0].consumesCounters[1].counterSet: Invalid value: "other": must reference a counterSet '
        "defined in the ResourceSlice sharedCounters",
        "spec.devices[1]: Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required "
        "when `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        'spec.devices[2]: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, '
        "or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
    ]


def test_devices_without_per_device_selection_may_not_name_nodes():
    spec = {"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "allNodes": True,
            "devices": [{"name": "a", "allNodes": True}]}
    assert messages(validate_slice_spec(spec, None, Path("spec"))) == [
        "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
        "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"]


# ---- bad values as Go prints internal structs ----

def test_internal_structs_render_with_go_names_and_zero_values():
    spec = {"devices": {"requests": [{"name": "r", "firstAvailable": [{"name": "s", "deviceClassName": "c",
                                                                       "count": 1}]}],
                        "config": [{"opaque": {"driver": "d", "parameters": {"z": 1, "a": [True]}}}]}}
    assert go_json(gostruct.render("ResourceClaimSpec", spec)) == (
        '{"Devices":{"Requests":[{"Name":"r","Exactly":null,"FirstAvailable":[{"Name":"s","DeviceClassName":"c",'
        '"Selectors":null,"AllocationMode":"","Count":1,"Tolerations":null,"Capacity":null}]}],"Constraints":null,'
        '"Config":[{"Requests":null,"Opaque":{"Driver":"d","Parameters":{"z":1,"a":[true]}}}]}}')


def test_semantic_equality_ignores_nil_versus_empty():
    assert gostruct.semantic_equal("ResourceClaimSpec", {"devices": {"requests": []}}, {"devices": {}})
    assert gostruct.semantic_equal("ResourceClaimSpec", None, {"devices": {"config": None}})
    assert not gostruct.semantic_equal("ResourceClaimSpec", {"devices": {"requests": [{"name": "a"}]}}, {})
