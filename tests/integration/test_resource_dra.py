"""resource.k8s.io/v1 (Dynamic Resource Allocation) as kube-apiserver v1.34 serves it: the manifests of
the Kubernetes DRA documentation, defaults, invalid objects rejected with Kubernetes' reason, field and
message, the claim status subresource, admin access, field selectors on ResourceSlices, server-side
tables, protobuf bodies and kubectl."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from kube_apiserver.apimachinery.protobuf import bytes_field, varint_field

BASE = "/apis/resource.k8s.io/v1"
CLASSES = f"{BASE}/deviceclasses"
CLAIMS = f"{BASE}/namespaces/default/resourceclaims"
TEMPLATES = f"{BASE}/namespaces/default/resourceclaimtemplates"
SLICES = f"{BASE}/resourceslices"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
MERGE = {"Content-Type": "application/merge-patch+json"}
PROTOBUF = {"Content-Type": "application/vnd.kubernetes.protobuf"}
DNS_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                 "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                     "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
                     "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
C_IDENTIFIER_MSG = ("a valid C identifier must start with alphabetic character or '_', followed by a string of "
                    "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
                    "validation is '[A-Za-z_][A-Za-z0-9_]*')")
REQUEST_REF_MSG = ("must be the name of a request in the claim or the name of a request and a subrequest "
                   "separated by '/'")
GPU_SELECTOR = {"cel": {"expression": 'device.attributes["gpu.example.com"].type == "gpu" && '
                                      'device.capacity["gpu.example.com"].memory == quantity("64Gi")'}}


def device_class(name: str, **spec) -> dict:
    spec.setdefault("selectors", [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}])
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def claim(name: str, *requests: dict, **devices) -> dict:
    requests = requests or ({"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}},)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": list(requests), **devices}}}


def template(name: str, *requests: dict, meta: dict | None = None) -> dict:
    body = claim(name, *requests)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"metadata": meta or {}, "spec": body["spec"]}}


def resource_slice(name: str, node: str | None = "node-1", driver: str = "gpu.example.com", devices=None,
                   **spec) -> dict:
    if node is not None:
        spec["nodeName"] = node
    body = {"driver": driver, "pool": {"name": node or "pool", "generation": 1, "resourceSliceCount": 1},
            "devices": devices if devices is not None else [gpu_device("gpu-0")], **spec}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def gpu_device(name: str, **extra) -> dict:
    return {"name": name, "attributes": {"type": {"string": "gpu"}, "driverVersion": {"version": "1.0.0"},
                                         "index": {"int": 0}},
            "capacity": {"memory": {"value": "64Gi"}}, **extra}


def invalid_cause(resp, reason: str, field_path: str, message: str) -> None:
    body = resp.json()
    assert resp.status == 422 and body["reason"] == "Invalid", body
    assert {"reason": reason, "field": field_path, "message": message} in body["details"]["causes"], body


def created(resp) -> dict:
    assert resp.status == 201, resp.body
    return resp.json()


# ---- DeviceClass ----

def test_device_class_from_the_docs_and_generation(server):
    docs = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "example-device-class"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "driver.example.com"'}}],
                     "extendedResourceName": "example.com/gpu"}}
    out = created(server.request("POST", CLASSES, docs))
    assert out["metadata"]["generation"] == 1
    # DRAExtendedResource is an alpha gate in v1.34: the field is dropped.
    assert out["spec"] == {"selectors": [{"cel": {"expression": 'device.driver == "driver.example.com"'}}]}
    relabeled = server.request("PATCH", f"{CLASSES}/example-device-class", {"metadata": {"labels": {"a": "b"}}}, MERGE)
    assert relabeled.json()["metadata"]["generation"] == 1
    config = [{"opaque": {"driver": "driver.example.com", "parameters": {"mode": "fast"}}}]
    changed = server.request("PATCH", f"{CLASSES}/example-device-class", {"spec": {"config": config}}, MERGE)
    assert changed.status == 200, changed.body
    assert changed.json()["metadata"]["generation"] == 2
    assert changed.json()["spec"]["config"] == config
    bare = created(server.request("POST", CLASSES, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                                    "metadata": {"name": "bare-class"}}))
    assert bare["spec"] == {}


@pytest.mark.parametrize(("body", "reason", "field_path", "message"), [
    (device_class("GPU"), "FieldValueInvalid", "metadata.name", f'Invalid value: "GPU": {DNS_SUBDOMAIN_MSG}'),
    (device_class("c1", selectors=[{}]), "FieldValueRequired", "spec.selectors[0].cel", "Required value"),
    (device_class("c2", selectors=[{"cel": {"expression": "x"}}] * 33), "FieldValueTooMany", "spec.selectors",
     "Too many: 33: must have at most 32 items"),
    (device_class("c3", selectors=[{"cel": {"expression": "a" * 10241}}]), "FieldValueTooLong",
     "spec.selectors[0].cel.expression", "Too long: may not be more than 10240 bytes"),
    (device_class("c4", config=[{}]), "FieldValueRequired", "spec.config[0].opaque", "Required value"),
    (device_class("c5", config=[{"opaque": {"parameters": {}}}]), "FieldValueRequired",
     "spec.config[0].opaque.driver", "Required value"),
    (device_class("c6", config=[{"opaque": {"driver": "Driver_X", "parameters": {}}}]), "FieldValueInvalid",
     "spec.config[0].opaque.driver", f'Invalid value: "Driver_X": {DNS_SUBDOMAIN_MSG}'),
    (device_class("c7", config=[{"opaque": {"driver": "x.example.com"}}]), "FieldValueRequired",
     "spec.config[0].opaque.parameters", "Required value"),
    (device_class("c8", config=[{"opaque": {"driver": "x.example.com", "parameters": [1]}}]), "FieldValueInvalid",
     "spec.config[0].opaque.parameters", 'Invalid value: "<value omitted>": must be a valid JSON object'),
    (device_class("c9", config=[{"opaque": {"driver": "x.example.com", "parameters": {"a": "b" * 10240}}}]),
     "FieldValueTooLong", "spec.config[0].opaque.parameters", "Too long: may not be more than 10240 bytes"),
])
def test_invalid_device_classes(server, body, reason, field_path, message):
    invalid_cause(server.request("POST", CLASSES, body), reason, field_path, message)


def test_cel_compile_errors_are_invalid_expressions(server):
    resp = server.request("POST", CLASSES, device_class("bad-cel", selectors=[{"cel": {"expression": "device.driver =="}}]))
    cause = resp.json()["details"]["causes"][0]
    assert resp.status == 422 and cause["field"] == "spec.selectors[0].cel.expression", resp.body
    assert cause["reason"] == "FieldValueInvalid"
    assert cause["message"].startswith('Invalid value: "device.driver ==": compilation failed: ')


# ---- ResourceClaim ----

def test_claim_from_the_docs_gets_defaults_and_empty_status(server):
    body = claim("example-resource-claim", {"name": "gpu-claim", "exactly": {
        "deviceClassName": "example-device-class", "selectors": [GPU_SELECTOR],
        "tolerations": [{"key": "dra.example.com/unhealthy", "value": "true", "effect": "NoSchedule"}]}})
    body["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}
    out = created(server.request("POST", CLAIMS, body))
    exactly = out["spec"]["devices"]["requests"][0]["exactly"]
    assert exactly["allocationMode"] == "ExactCount" and exactly["count"] == 1
    assert exactly["tolerations"] == [{"key": "dra.example.com/unhealthy", "operator": "Equal", "value": "true",
                                       "effect": "NoSchedule"}]
    assert out["status"] == {}  # the creator never sets it
    assert "generation" not in out["metadata"]
    assert server.request("GET", f"{CLAIMS}/example-resource-claim").json() == out


def test_claim_prioritized_list_defaults(server):
    out = created(server.request("POST", CLAIMS, claim("prioritized", {"name": "req-0", "firstAvailable": [
        {"name": "large-black", "deviceClassName": "resource.example.com"},
        {"name": "small-white", "deviceClassName": "resource.example.com", "count": 2},
        {"name": "all-grey", "deviceClassName": "resource.example.com", "allocationMode": "All"},
    ]}, constraints=[{"requests": ["req-0/small-white"], "matchAttribute": "resource.example.com/numa"}])))
    subrequests = out["spec"]["devices"]["requests"][0]["firstAvailable"]
    assert [(s["allocationMode"], s.get("count")) for s in subrequests] == [("ExactCount", 1), ("ExactCount", 2),
                                                                          ("All", None)]


def test_claim_spec_is_immutable(server):
    out = created(server.request("POST", CLAIMS, claim("immutable")))
    out["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    resp = server.request("PUT", f"{CLAIMS}/immutable", out)
    invalid_cause(resp, "FieldValueInvalid", "spec", 'Invalid value: {"Devices":{"Requests":[{"Name":"gpu","Exactly":'
                  '{"DeviceClassName":"gpu.example.com","Selectors":null,"AllocationMode":"ExactCount","Count":2,'
                  '"AdminAccess":null,"Tolerations":null,"Capacity":null},"FirstAvailable":null}],'
                  '"Constraints":null,"Config":null}}: field is immutable')
    labeled = server.request("PATCH", f"{CLAIMS}/immutable", {"metadata": {"labels": {"team": "a"}}}, MERGE)
    assert labeled.status == 200 and labeled.json()["metadata"]["labels"] == {"team": "a"}


def exact(**fields) -> dict:
    return {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", **fields}}


@pytest.mark.parametrize(("requests", "devices", "reason", "field_path", "message"), [
    ([{"name": "GPU", "exactly": {"deviceClassName": "gpu.example.com"}}], {}, "FieldValueInvalid",
     "spec.devices.requests[0].name", f'Invalid value: "GPU": {DNS_LABEL_MSG}'),
    ([{"name": "gpu"}], {}, "FieldValueRequired", "spec.devices.requests[0]",
     "Required value: exactly one of `exactly` or `firstAvailable` is required"),
    ([{**exact(), "firstAvailable": [{"name": "a", "deviceClassName": "c"}]}], {}, "FieldValueInvalid",
     "spec.devices.requests[0]",
     "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"),
    ([{"name": "gpu", "exactly": {}}], {}, "FieldValueRequired", "spec.devices.requests[0].exactly.deviceClassName",
     "Required value"),
    ([{"name": "gpu", "exactly": {"deviceClassName": "GPU_Class"}}], {}, "FieldValueInvalid",
     "spec.devices.requests[0].exactly.deviceClassName", f'Invalid value: "GPU_Class": {DNS_SUBDOMAIN_MSG}'),
    ([exact(allocationMode="Some")], {}, "FieldValueNotSupported", "spec.devices.requests[0].exactly.allocationMode",
     'Unsupported value: "Some": supported values: "All", "ExactCount"'),
    ([exact(allocationMode="All", count=2)], {}, "FieldValueInvalid", "spec.devices.requests[0].exactly.count",
     "Invalid value: 2: must not be specified when allocationMode is 'All'"),
    ([exact(count=-1)], {}, "FieldValueInvalid", "spec.devices.requests[0].exactly.count",
     "Invalid value: -1: must be greater than zero"),
    ([exact(), exact()], {}, "FieldValueDuplicate", "spec.devices.requests[1].name", 'Duplicate value: "gpu"'),
    ([{"name": f"r{i}", "exactly": {"deviceClassName": "c"}} for i in range(33)], {}, "FieldValueTooMany",
     "spec.devices.requests", "Too many: 33: must have at most 32 items"),
    ([exact(selectors=[{}])], {}, "FieldValueRequired", "spec.devices.requests[0].exactly.selectors[0].cel",
     "Required value"),
    ([exact(tolerations=[{"operator": "Maybe"}])], {}, "FieldValueNotSupported",
     "spec.devices.requests[0].exactly.tolerations[0].operator",
     'Unsupported value: "Maybe": supported values: "Equal", "Exists"'),
    ([exact(tolerations=[{"key": "k", "operator": "Exists", "value": "x"}])], {}, "FieldValueInvalid",
     "spec.devices.requests[0].exactly.tolerations[0].value", 'Invalid value: "x": must be empty for operator `Exists`'),
    ([exact(tolerations=[{"key": "k", "effect": "NoWay"}])], {}, "FieldValueNotSupported",
     "spec.devices.requests[0].exactly.tolerations[0].effect",
     'Unsupported value: "NoWay": supported values: "NoExecute", "NoSchedule"'),
    ([{"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": "c"}] * 2}], {}, "FieldValueDuplicate",
     "spec.devices.requests[0].firstAvailable[1].name", 'Duplicate value: "a"'),
    ([{"name": "gpu", "firstAvailable": [{"name": f"s{i}", "deviceClassName": "c"} for i in range(9)]}], {},
     "FieldValueTooMany", "spec.devices.requests[0].firstAvailable", "Too many: 9: must have at most 8 items"),
    ([exact()], {"constraints": [{"requests": ["gpu"]}]}, "FieldValueRequired",
     "spec.devices.constraints[0].matchAttribute", "Required value"),
    ([exact()], {"constraints": [{"matchAttribute": "model"}]}, "FieldValueInvalid",
     "spec.devices.constraints[0].matchAttribute", 'Invalid value: "model": must include a domain'),
    ([exact()], {"constraints": [{"matchAttribute": "gpu.example.com/bad-name"}]}, "FieldValueInvalid",
     "spec.devices.constraints[0].matchAttribute", f'Invalid value: "bad-name": {C_IDENTIFIER_MSG}'),
    ([exact()], {"constraints": [{"requests": ["nope"], "matchAttribute": "gpu.example.com/numa"}]},
     "FieldValueInvalid", "spec.devices.constraints[0].requests[0]", f'Invalid value: "nope": {REQUEST_REF_MSG}'),
    ([exact()], {"config": [{"requests": ["gpu/sub"], "opaque": {"driver": "gpu.example.com", "parameters": {}}}]},
     "FieldValueInvalid", "spec.devices.config[0].requests[0]", f'Invalid value: "gpu/sub": {REQUEST_REF_MSG}'),
    ([exact()], {"config": [{"requests": ["gpu"]}]}, "FieldValueRequired", "spec.devices.config[0].opaque",
     "Required value"),
    ([exact()], {"config": [{"opaque": {"driver": "gpu.example.com", "parameters": "text"}}]}, "FieldValueInvalid",
     "spec.devices.config[0].opaque.parameters", 'Invalid value: "<value omitted>": must be a valid JSON object'),
])
def test_invalid_claims(server, requests, devices, reason, field_path, message):
    invalid_cause(server.request("POST", CLAIMS, claim("invalid", *requests, **devices)), reason, field_path,
                  message)


def test_claim_admin_access_needs_a_labelled_namespace(server):
    body = claim("admin", exact(adminAccess=True))
    invalid_cause(server.request("POST", CLAIMS, body), "FieldValueForbidden", "spec.devices.requests[0].adminAccess",
                  "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` "
                  "label on the containing namespace")
    ns = {"apiVersion": "v1", "kind": "Namespace",
          "metadata": {"name": "dra-admin", "labels": {"resource.kubernetes.io/admin-access": "true"}}}
    assert server.request("POST", "/api/v1/namespaces", ns).status == 201
    out = created(server.request("POST", f"{BASE}/namespaces/dra-admin/resourceclaims", body))
    assert out["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] is True
    in_template = template("admin-template", exact(adminAccess=True))
    invalid_cause(server.request("POST", TEMPLATES, in_template), "FieldValueForbidden",
                  "spec.devices.requests[0].adminAccess",
                  "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` "
                  "label on the containing namespace")
    applied = server.request("PATCH", f"{CLAIMS}/admin?fieldManager=me", json.dumps(body),
                             {"Content-Type": "application/apply-patch+yaml"})
    invalid_cause(applied, "FieldValueForbidden", "spec.devices.requests[0].adminAccess",
                  "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` "
                  "label on the containing namespace")
    # A status granting admin access needs the label too.
    created(server.request("POST", CLAIMS, claim("admin-status")))
    granted = put_status(server, "admin-status", {"allocation": allocation(adminAccess=True)})
    invalid_cause(granted, "FieldValueForbidden", "status.allocation.devices.results[0].adminAccess",
                  "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` "
                  "label on the containing namespace")


# ---- ResourceClaim status ----

ALLOCATION = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1",
                                       "device": "gpu-0"}],
                          "config": [{"source": "FromClaim", "requests": ["gpu"],
                                      "opaque": {"driver": "gpu.example.com", "parameters": {"b": 1, "a": 2}}}]},
              "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                  {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}}
POD_REF = {"resource": "pods", "name": "pod-a", "uid": "4ee4d2a4-8f0b-4a30-a6fa-2a3c1b0e6f01"}


def put_status(server, name: str, status: dict):
    current = server.request("GET", f"{CLAIMS}/{name}").json()
    current["status"] = status
    return server.request("PUT", f"{CLAIMS}/{name}/status", current)


def test_claim_status_allocation_reservation_and_printing(server):
    created(server.request("POST", CLAIMS, claim("allocated")))
    table = server.request("GET", f"{CLAIMS}/allocated", headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "State", "Age"]
    assert table["rows"][0]["cells"][:2] == ["allocated", "pending"]
    # The main endpoint never writes status.
    main = server.request("GET", f"{CLAIMS}/allocated").json()
    main["status"] = {"allocation": ALLOCATION}
    assert server.request("PUT", f"{CLAIMS}/allocated", main).json()["status"] == {}
    status = {"allocation": ALLOCATION, "reservedFor": [POD_REF],
              "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                           "networkData": {"interfaceName": "eth1", "ips": ["10.9.8.7/24"]}}]}
    resp = put_status(server, "allocated", status)
    assert resp.status == 200, resp.body
    assert resp.json()["status"]["allocation"] == ALLOCATION
    table = server.request("GET", f"{CLAIMS}/allocated", headers=TABLE).json()
    assert table["rows"][0]["cells"][1] == "allocated,reserved"
    # /status keeps the spec and the labels whatever it is sent.
    current = server.request("GET", f"{CLAIMS}/allocated").json()
    current["spec"]["devices"]["requests"][0]["name"] = "other"
    current["metadata"]["labels"] = {"x": "y"}
    kept = server.request("PUT", f"{CLAIMS}/allocated/status", current).json()
    assert kept["spec"]["devices"]["requests"][0]["name"] == "gpu" and "labels" not in kept["metadata"]
    # Once allocated, the allocation never changes.
    changed = copy.deepcopy(ALLOCATION)
    changed["devices"]["results"][0]["device"] = "gpu-1"
    changed["devices"]["config"] = []
    del changed["nodeSelector"]
    invalid_cause(put_status(server, "allocated", {"allocation": changed}), "FieldValueInvalid", "status.allocation",
                  'Invalid value: {"Devices":{"Results":[{"Request":"gpu","Driver":"gpu.example.com","Pool":"node-1",'
                  '"Device":"gpu-1","AdminAccess":null,"Tolerations":null,"BindingConditions":null,'
                  '"BindingFailureConditions":null,"ShareID":null,"ConsumedCapacity":null}],"Config":[]},'
                  '"NodeSelector":null,"AllocationTimestamp":null}: field is immutable')
    # Deallocation drops the status of the devices that were allocated.
    released = put_status(server, "allocated", {"devices": status["devices"]})
    assert released.status == 200, released.body
    assert released.json()["status"] == {}


def test_claim_status_patch(server):
    created(server.request("POST", CLAIMS, claim("patched")))
    resp = server.request("PATCH", f"{CLAIMS}/patched/status", {"status": {"allocation": ALLOCATION}}, MERGE)
    assert resp.status == 200, resp.body
    assert server.request("GET", f"{CLAIMS}/patched/status").json()["status"]["allocation"] == ALLOCATION


def allocation(**result) -> dict:
    return {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1",
                                     "device": "gpu-0", **result}]}}


@pytest.mark.parametrize(("status", "reason", "field_path", "message"), [
    ({"reservedFor": [POD_REF]}, "FieldValueForbidden", "status.reservedFor",
     "Forbidden: may not be specified when `allocated` is not set"),
    ({"allocation": allocation(), "reservedFor": [{"resource": "pods", "name": "p"}]}, "FieldValueRequired",
     "status.reservedFor[0].uid", "Required value"),
    ({"allocation": allocation(), "reservedFor": [POD_REF, POD_REF]}, "FieldValueDuplicate",
     "status.reservedFor[1].uid", f'Duplicate value: "{POD_REF["uid"]}"'),
    ({"allocation": allocation(request="nope")}, "FieldValueInvalid", "status.allocation.devices.results[0].request",
     f'Invalid value: "nope": {REQUEST_REF_MSG}'),
    ({"allocation": allocation(pool="pool/Bad")}, "FieldValueInvalid", "status.allocation.devices.results[0].pool",
     f'Invalid value: "Bad": {DNS_SUBDOMAIN_MSG}'),
    ({"allocation": allocation(device="")}, "FieldValueInvalid", "status.allocation.devices.results[0].device",
     f'Invalid value: "": {DNS_LABEL_MSG}'),
    ({"allocation": {"devices": {"config": [{"source": "FromSomewhere", "opaque": {"driver": "d.example.com",
                                                                                 "parameters": {}}}]}}},
     "FieldValueNotSupported", "status.allocation.devices.config[0].source",
     'Unsupported value: "FromSomewhere": supported values: "FromClaim", "FromClass"'),
    ({"allocation": allocation(), "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-9"}]},
     "FieldValueInvalid", "status.devices[0]",
     'Invalid value: {"Driver":"gpu.example.com","Pool":"node-1","Device":"gpu-9","ShareID":""}: '
     "must be an allocated device in the claim"),
    ({"allocation": allocation(), "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}] * 2},
     "FieldValueDuplicate", "status.devices[1].deviceID",
     'Duplicate value: {"Driver":"gpu.example.com","Pool":"node-1","Device":"gpu-0","ShareID":""}'),
    ({"allocation": allocation(), "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                                               "networkData": {"ips": ["10.9.8.7"]}}]},
     "FieldValueInvalid", "status.devices[0].networkData.ips[0]",
     'Invalid value: "10.9.8.7": must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)'),
    ({"allocation": allocation(), "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                                               "networkData": {"ips": ["2001:DB8::1/64"]}}]},
     "FieldValueInvalid", "status.devices[0].networkData.ips[0]",
     'Invalid value: "2001:DB8::1/64": must be in canonical form ("2001:db8::1/64")'),
    ({"allocation": allocation(), "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                                               "data": [1]}]},
     "FieldValueInvalid", "status.devices[0].data", 'Invalid value: "<value omitted>": must be a valid JSON object'),
    ({"allocation": allocation(), "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                                               "conditions": [{"type": "Ready", "status": "Maybe", "reason": "R",
                                                               "lastTransitionTime": "2025-01-01T00:00:00Z"}]}]},
     "FieldValueNotSupported", "status.devices[0].conditions[0].status",
     'Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'),
])
def test_invalid_claim_status(server, status, reason, field_path, message):
    name = f"status-{abs(hash(json.dumps(status, sort_keys=True))) % 10**8}"
    created(server.request("POST", CLAIMS, claim(name)))
    invalid_cause(put_status(server, name, status), reason, field_path, message)


# ---- ResourceClaimTemplate ----

def test_template_from_the_docs(server):
    body = template("example-resource-claim-template", {"name": "gpu-claim", "exactly": {
        "deviceClassName": "example-device-class", "selectors": [GPU_SELECTOR]}}, meta={"labels": {"app": "a"}})
    out = created(server.request("POST", TEMPLATES, body))
    assert out["spec"]["metadata"] == {"labels": {"app": "a"}}
    assert out["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    out["spec"]["spec"]["devices"]["requests"][0]["name"] = "renamed"
    resp = server.request("PUT", f"{TEMPLATES}/example-resource-claim-template", out)
    body = resp.json()
    assert resp.status == 422 and body["details"]["causes"][0]["field"] == "spec", body
    assert body["details"]["causes"][0]["message"].startswith(
        'Invalid value: {"labels":{"app":"a"},"Spec":{"Devices":{"Requests":[{"Name":'
        '"renamed","Exactly":{"DeviceClassName":"example-device-class","Selectors":[{"CEL":{"Expression":')
    table = server.request("GET", TEMPLATES, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]


@pytest.mark.parametrize(("body", "reason", "field_path", "message"), [
    (template("t1", meta={"name": "fixed"}), "FieldValueForbidden", "spec.metadata.name",
     "Forbidden: cannot be set for a template"),
    (template("t2", meta={"uid": "x"}), "FieldValueForbidden", "spec.metadata.uID",
     "Forbidden: cannot be set for a template"),
    (template("t3", meta={"labels": {"bad key": "v"}}), "FieldValueInvalid", "spec.metadata.labels",
     'Invalid value: "bad key": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must '
     "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
     "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
    (template("t4", {"name": "gpu"}), "FieldValueRequired", "spec.spec.devices.requests[0]",
     "Required value: exactly one of `exactly` or `firstAvailable` is required"),
])
def test_invalid_templates(server, body, reason, field_path, message):
    invalid_cause(server.request("POST", TEMPLATES, body), reason, field_path, message)


# ---- ResourceSlice ----

def test_slice_from_the_docs_defaults_and_generation(server):
    docs = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "cat-slice"},
            "spec": {"driver": "resource-driver.example.com",
                     "pool": {"generation": 1, "name": "black-cat-pool", "resourceSliceCount": 1},
                     "allNodes": True,
                     "devices": [{"name": "large-black-cat", "attributes": {
                         "color": {"string": "black"}, "size": {"string": "large"}, "cat": {"bool": True}}}]}}
    out = created(server.request("POST", SLICES, docs))
    assert out["metadata"]["generation"] == 1 and out["spec"] == docs["spec"]
    resp = server.request("PATCH", f"{SLICES}/cat-slice", {"spec": {"pool": {"generation": 2}}}, MERGE)
    assert resp.json()["metadata"]["generation"] == 2
    no_generation = resource_slice("no-generation", node="node-0")
    del no_generation["spec"]["pool"]["generation"]
    assert created(server.request("POST", SLICES, no_generation))["spec"]["pool"]["generation"] == 0


def test_slice_gated_fields_and_quantities(server):
    device = gpu_device("gpu-0", taints=[{"key": "dra.example.com/unhealthy", "effect": "NoSchedule"}],
                        bindsToNode=True, bindingConditions=["attached"], bindingFailureConditions=["failed"],
                        allowMultipleAllocations=True, consumesCounters=[{"counterSet": "s", "counters": {}}])
    device["capacity"] = {"memory": {"value": "1024Mi", "requestPolicy": {"default": "1Gi"}},
                          "cores": {"value": 8}}
    out = created(server.request("POST", SLICES, resource_slice("gated", node="node-9", devices=[device],
                                                                sharedCounters=[{"name": "s"}])))
    # DRADeviceTaints, DRADeviceBindingConditions, DRAConsumableCapacity and DRAPartitionableDevices are alpha.
    assert out["spec"]["devices"][0] == {"name": "gpu-0", "attributes": device["attributes"],
                                         "capacity": {"memory": {"value": "1Gi"}, "cores": {"value": "8"}}}
    assert "sharedCounters" not in out["spec"]
    per_device = resource_slice("per-device", node=None, perDeviceNodeSelection=True)
    invalid_cause(server.request("POST", SLICES, per_device), "FieldValueRequired", "spec",
                  "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` "
                  "is required")
    malformed = resource_slice("bad-quantity", devices=[{"name": "d", "capacity": {"memory": {"value": "1x"}}}])
    resp = server.request("POST", SLICES, malformed)
    assert resp.status == 400, resp.body
    assert resp.json()["message"].startswith('ResourceSlice in version "v1" cannot be handled as a ResourceSlice: ')


def test_slice_immutable_fields(server):
    out = created(server.request("POST", SLICES, resource_slice("immutable-slice", node="node-2")))
    out["spec"]["driver"] = "other.example.com"
    out["spec"]["pool"]["name"] = "other"
    resp = server.request("PUT", f"{SLICES}/immutable-slice", out)
    invalid_cause(resp, "FieldValueInvalid", "spec.driver", 'Invalid value: "other.example.com": field is immutable')
    invalid_cause(resp, "FieldValueInvalid", "spec.pool.name", 'Invalid value: "other": field is immutable')
    assert len(resp.json()["details"]["causes"]) == 2  # the spec is validated once on update
    moved = server.request("PATCH", f"{SLICES}/immutable-slice", {"spec": {"nodeName": None, "allNodes": True}},
                           MERGE)
    invalid_cause(moved, "FieldValueInvalid", "spec.nodeName", "Invalid value: null: field is immutable")


def test_slice_field_selectors_and_table(server):
    for name, node, driver in (("fs-a", "node-a", "gpu.example.com"), ("fs-b", "node-b", "gpu.example.com"),
                               ("fs-c", "node-a", "nic.example.com")):
        created(server.request("POST", SLICES, resource_slice(name, node=node, driver=driver)))
    created(server.request("POST", SLICES, resource_slice("fs-all", node=None, driver="nic.example.com",
                                                          allNodes=True)))

    def names(selector: str) -> list[str]:
        resp = server.request("GET", f"{SLICES}?fieldSelector={selector}")
        assert resp.status == 200, resp.body
        return sorted(i["metadata"]["name"] for i in resp.json()["items"] if i["metadata"]["name"].startswith("fs-"))

    assert names("spec.nodeName=node-a") == ["fs-a", "fs-c"]
    assert names("spec.driver=nic.example.com") == ["fs-all", "fs-c"]
    assert names("spec.nodeName=node-a,spec.driver=gpu.example.com") == ["fs-a"]
    assert names("spec.nodeName=") == ["fs-all"]
    assert names("metadata.name=fs-b") == ["fs-b"]
    bad = server.request("GET", f"{SLICES}?fieldSelector=spec.pool.name=x")
    assert bad.status == 400
    assert bad.json()["message"] == ("field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: "
                                     "spec.pool.name")
    table = server.request("GET", f"{SLICES}/fs-a", headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Node", "Driver", "Pool", "Age"]
    assert table["rows"][0]["cells"][:4] == ["fs-a", "node-a", "gpu.example.com", "node-a"]
    everywhere = server.request("GET", f"{SLICES}/fs-all", headers=TABLE).json()
    assert everywhere["rows"][0]["cells"][:4] == ["fs-all", "", "nic.example.com", "pool"]


def too_many_attributes() -> dict:
    return {f"a{i}": {"int": i} for i in range(33)}


@pytest.mark.parametrize(("body", "reason", "field_path", "message"), [
    (resource_slice("s1", node=None), "FieldValueRequired", "spec",
     "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"),
    (resource_slice("s2", allNodes=True), "FieldValueInvalid", "spec",
     'Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
     "`perDeviceNodeSelection` is required, but multiple fields are set"),
    (resource_slice("s3", node=None, allNodes=False), "FieldValueInvalid", "spec.allNodes",
     "Invalid value: false: must be either unset or set to true"),
    (resource_slice("s4", node=""), "FieldValueInvalid", "spec.nodeName",
     'Invalid value: "": must be either unset or set to a non-empty string'),
    (resource_slice("s5", node=None, nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
        {"matchExpressions": [{"key": "b", "operator": "In", "values": ["c"]}]}]}),
     "FieldValueInvalid", "spec.nodeSelector.nodeSelectorTerms",
     'Invalid value: [{"MatchExpressions":[{"Key":"a","Operator":"Exists","Values":null}],"MatchFields":null},'
     '{"MatchExpressions":[{"Key":"b","Operator":"In","Values":["c"]}],"MatchFields":null}]: '
     "must have exactly one node selector term"),
    (resource_slice("s6", node=None, nodeSelector={"nodeSelectorTerms": []}), "FieldValueRequired",
     "spec.nodeSelector.nodeSelectorTerms", "Required value: must have at least one node selector term"),
    (resource_slice("s7", driver=""), "FieldValueRequired", "spec.driver", "Required value"),
    (resource_slice("s8", driver="GPU_Driver"), "FieldValueInvalid", "spec.driver",
     f'Invalid value: "GPU_Driver": {DNS_SUBDOMAIN_MSG}'),
    (resource_slice("s9", node="node/Bad"), "FieldValueInvalid", "spec.pool.name",
     f'Invalid value: "Bad": {DNS_SUBDOMAIN_MSG}'),
    (resource_slice("s10", devices=[{"name": "Gpu"}]), "FieldValueInvalid", "spec.devices[0].name",
     f'Invalid value: "Gpu": {DNS_LABEL_MSG}'),
    (resource_slice("s11", devices=[{"name": "gpu"}, {"name": "gpu"}]), "FieldValueDuplicate",
     "spec.devices[1].name", 'Duplicate value: "gpu"'),
    (resource_slice("s12", devices=[{"name": f"d{i}"} for i in range(129)]), "FieldValueTooMany", "spec.devices",
     "Too many: 129: must have at most 128 items"),
    (resource_slice("s13", devices=[{"name": "d", "attributes": {"model": {"int": 1, "string": "x"}}}]),
     "FieldValueInvalid", "spec.devices[0].attributes[model]",
     'Invalid value: {"IntValue":1,"BoolValue":null,"StringValue":"x","VersionValue":null}: '
     "exactly one value must be specified"),
    (resource_slice("s14", devices=[{"name": "d", "attributes": {"model": {}}}]), "FieldValueRequired",
     "spec.devices[0].attributes[model]", "Required value: exactly one value must be specified"),
    (resource_slice("s15", devices=[{"name": "d", "attributes": {"driverVersion": {"version": "1.0"}}}]),
     "FieldValueInvalid", "spec.devices[0].attributes[driverVersion].version",
     'Invalid value: "1.0": must be a string compatible with semver.org spec 2.0.0'),
    (resource_slice("s16", devices=[{"name": "d", "attributes": {"model": {"string": "x" * 65}}}]),
     "FieldValueTooLong", "spec.devices[0].attributes[model].string", "Too long: may not be more than 64 bytes"),
    (resource_slice("s17", devices=[{"name": "d", "attributes": {"gpu.example.com/bad-name": {"int": 1}}}]),
     "FieldValueInvalid", "spec.devices[0].attributes[gpu.example.com/bad-name]",
     f'Invalid value: "bad-name": {C_IDENTIFIER_MSG}'),
    (resource_slice("s18", devices=[{"name": "d", "capacity": {"/memory": {"value": "1"}}}]),
     "FieldValueRequired", "spec.devices[0].capacity[/memory]", "Required value: the domain must not be empty"),
    (resource_slice("s19", devices=[{"name": "d", "attributes": too_many_attributes()}]), "FieldValueInvalid",
     "spec.devices[0]", "Invalid value: 33: the total number of attributes and capacities must not exceed 32"),
    (resource_slice("s20", devices=[{"name": "d", "attributes": {"x" * 40: {"int": 1}}}]), "FieldValueTooLong",
     f"spec.devices[0].attributes[{'x' * 40}]", "Too long: may not be more than 32 bytes"),
    (resource_slice("s21", pool={"name": "p", "resourceSliceCount": 0}), "FieldValueInvalid",
     "spec.pool.resourceSliceCount", "Invalid value: 0: must be greater than zero"),
    (resource_slice("s22", pool={"name": "p", "generation": -1, "resourceSliceCount": 1}), "FieldValueInvalid",
     "spec.pool.generation", "Invalid value: -1: must be greater than or equal to zero"),
])
def test_invalid_slices(server, body, reason, field_path, message):
    invalid_cause(server.request("POST", SLICES, body), reason, field_path, message)


# ---- protobuf and kubectl ----

def test_claim_protobuf_body(server):
    selector = bytes_field(1, bytes_field(1, b'device.driver == "gpu.example.com"'))
    exactly = bytes_field(1, b"gpu.example.com") + bytes_field(2, selector) + varint_field(4, 2)
    request = bytes_field(1, b"gpus") + bytes_field(2, exactly)
    spec = bytes_field(1, bytes_field(1, request))
    message = bytes_field(1, bytes_field(1, b"claim-proto")) + bytes_field(2, spec)
    body = b"k8s\x00" + bytes_field(1, bytes_field(1, b"resource.k8s.io/v1") + bytes_field(2, b"ResourceClaim")) + \
        bytes_field(2, message)
    out = created(server.request("POST", CLAIMS, body, PROTOBUF))
    assert out["spec"] == {"devices": {"requests": [{"name": "gpus", "exactly": {
        "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2,
        "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}]}}


MANIFESTS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: kubectl-gpu.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: kubectl-gpu-template
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: kubectl-gpu.example.com
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: kubectl-claim
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: kubectl-gpu.example.com
        allocationMode: All
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: kubectl-node-1-gpu.example.com
spec:
  driver: gpu.example.com
  nodeName: kubectl-node-1
  pool:
    name: kubectl-node-1
    generation: 1
    resourceSliceCount: 1
  devices:
  - name: gpu-0
    attributes:
      model:
        string: LATEST-GPU-MODEL
    capacity:
      memory:
        value: 80Gi
"""


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_create_and_get(server, tmp_path):
    path = tmp_path / "dra.yaml"
    path.write_text(MANIFESTS)
    out = server.kubectl("create", "-f", str(path)).stdout
    assert "deviceclass.resource.k8s.io/kubectl-gpu.example.com created" in out
    assert "resourceclaim.resource.k8s.io/kubectl-claim created" in out
    claims = server.kubectl("get", "resourceclaims", "kubectl-claim").stdout.split("\n")
    assert claims[0].split() == ["NAME", "STATE", "AGE"] and claims[1].split()[:2] == ["kubectl-claim", "pending"]
    slices = server.kubectl("get", "resourceslices", "--field-selector", "spec.nodeName=kubectl-node-1").stdout
    assert slices.split("\n")[0].split() == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert slices.split("\n")[1].split()[:4] == ["kubectl-node-1-gpu.example.com", "kubectl-node-1",
                                                 "gpu.example.com", "kubectl-node-1"]
    got = yaml.safe_load(server.kubectl("get", "resourceclaimtemplate", "kubectl-gpu-template", "-o", "yaml").stdout)
    assert got["spec"]["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "kubectl-gpu.example.com", "allocationMode": "ExactCount", "count": 1}
    classes = server.kubectl("get", "deviceclasses").stdout
    assert "kubectl-gpu.example.com" in classes
