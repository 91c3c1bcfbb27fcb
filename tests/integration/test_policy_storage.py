"""policy/v1 PodDisruptionBudgets and storage.k8s.io/v1: defaults, status subresources, kubectl, protobuf
bodies, tables, and a corpus of invalid objects answered with Kubernetes' exact errors."""

from __future__ import annotations

import json

import pytest

from kube_apiserver.apimachinery.protobuf import bytes_field, varint_field

PDB = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
STORAGE = "/apis/storage.k8s.io/v1"
SC, CSIDRIVERS, CSINODES = f"{STORAGE}/storageclasses", f"{STORAGE}/csidrivers", f"{STORAGE}/csinodes"
VA, VAC = f"{STORAGE}/volumeattachments", f"{STORAGE}/volumeattributesclasses"
CAPACITIES = f"{STORAGE}/namespaces/default/csistoragecapacities"
MERGE = {"Content-Type": "application/merge-patch+json"}
DNS_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
PERCENT = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
           "regex used for validation is '[0-9]+%')")
QUALIFIED = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def pdb(name: str, **spec) -> dict:
    spec.setdefault("selector", {"matchLabels": {"app": "a"}})
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name}, "spec": spec}


def sc(name: str, **extra) -> dict:
    body = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": "csi.example.com"}
    return {**body, **extra}


def csidriver(name: str, **spec) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name}, "spec": spec}


def csinode(name: str, *drivers: dict) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
            "spec": {"drivers": list(drivers)}}


def va(name: str, **spec) -> dict:
    spec = {"attacher": "csi.example.com", "nodeName": "node-1", "source": {"persistentVolumeName": "pv-1"}, **spec}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": name}, "spec": spec}


def vac(name: str, **extra) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass", "metadata": {"name": name},
            "driverName": "csi.example.com", "parameters": {"iops": "100"}, **extra}


def capacity(name: str, **extra) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": name},
            "storageClassName": "fast", **extra}


def created(server, path: str, body: dict) -> dict:
    resp = server.request("POST", path, body)
    assert resp.status == 201, resp.body
    return resp.json()


def put(server, path: str, body: dict) -> dict:
    resp = server.request("PUT", path, body)
    assert resp.status == 200, resp.body
    return resp.json()


def invalid(server, method: str, path: str, body: dict, headers: dict | None = None) -> dict:
    resp = server.request(method, path, body, headers)
    assert resp.status == 422, resp.body
    status = resp.json()
    assert status["reason"] == "Invalid" and status["code"] == 422
    return status


# ---- defaults ----

def test_defaults_as_a_real_server_applies_them(server):
    got = created(server, SC, sc("sc-defaults"))
    assert (got["reclaimPolicy"], got["volumeBindingMode"]) == ("Delete", "Immediate")
    spec = created(server, CSIDRIVERS, csidriver("defaults.csi.example.com"))["spec"]
    assert spec == {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
                    "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
                    "requiresRepublish": False, "seLinuxMount": False}
    gated = created(server, CSIDRIVERS, csidriver("gated.csi.example.com", nodeAllocatableUpdatePeriodSeconds=60))
    assert "nodeAllocatableUpdatePeriodSeconds" not in gated["spec"]  # MutableCSINodeAllocatableCount is off
    assert "generation" not in created(server, CSIDRIVERS, csidriver("gen.csi.example.com"))["metadata"]
    budget = created(server, PDB, pdb("pdb-defaults", minAvailable=1, unhealthyPodEvictionPolicy="AlwaysAllow"))
    assert budget["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    assert budget["metadata"]["generation"] == 1
    attachment = created(server, VA, {**va("va-defaults"), "status": {"attached": True}})
    assert attachment["status"] == {"attached": False}
    node = created(server, CSINODES, csinode("node-defaults", {"name": "d.example.com", "nodeID": "n1"}))
    assert node["spec"]["drivers"] == [{"name": "d.example.com", "nodeID": "n1", "topologyKeys": None}]


def test_capacity_quantities_are_canonical(server):
    got = created(server, CAPACITIES, capacity("cap-canonical", capacity="1024Mi", maximumVolumeSize="1.5Gi"))
    assert (got["capacity"], got["maximumVolumeSize"]) == ("1Gi", "1536Mi")
    bad = server.request("POST", CAPACITIES, capacity("cap-malformed", capacity="ten"))
    assert bad.status == 400 and bad.json()["message"] == (
        'CSIStorageCapacity in version "v1" cannot be handled as a CSIStorageCapacity: quantities must match the '
        "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def test_pdb_selector_drops_the_v1beta1_label(server):
    selector = {"matchLabels": {"app": "a", "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match": "x"}}
    got = created(server, PDB, pdb("pdb-strip", maxUnavailable="10%", selector=selector))
    assert got["spec"]["selector"] == {"matchLabels": {"app": "a"}}


# ---- status subresources ----

def test_pdb_status_subresource_and_generation(server):
    budget = created(server, PDB, {**pdb("pdb-status", minAvailable=2), "status": {"disruptionsAllowed": 5}})
    assert budget["status"]["disruptionsAllowed"] == 0
    status = dict(budget, status={"disruptionsAllowed": 3, "currentHealthy": 4, "desiredHealthy": 2,
                                  "expectedPods": 4, "observedGeneration": 1},
                  spec={**budget["spec"], "minAvailable": 3})
    after = put(server, f"{PDB}/pdb-status/status", status)
    assert after["status"]["disruptionsAllowed"] == 3 and after["spec"]["minAvailable"] == 2  # spec ignored
    assert after["metadata"]["generation"] == 1
    relabel = dict(after, metadata={**after["metadata"], "labels": {"x": "y"}}, status={"disruptionsAllowed": 9})
    relabeled = put(server, f"{PDB}/pdb-status", relabel)
    assert relabeled["metadata"]["generation"] == 1 and relabeled["status"]["disruptionsAllowed"] == 3
    spec_change = dict(relabeled, spec={**relabeled["spec"], "minAvailable": "50%"}, status={})
    changed = put(server, f"{PDB}/pdb-status", spec_change)
    assert changed["metadata"]["generation"] == 2 and changed["spec"]["minAvailable"] == "50%"
    assert changed["status"]["currentHealthy"] == 4  # a spec PUT ignores status
    got = server.request("GET", f"{PDB}/pdb-status/status").json()
    assert got["kind"] == "PodDisruptionBudget" and got["status"]["expectedPods"] == 4


def test_pdb_status_is_validated_alone(server):
    budget = created(server, PDB, pdb("pdb-bad-status", minAvailable=1))
    bad = dict(budget, status={"disruptionsAllowed": -1, "conditions": [
        {"type": "DisruptionAllowed", "status": "Maybe", "reason": "9lives", "message": "",
         "lastTransitionTime": "2025-01-01T00:00:00Z"}]})
    status = invalid(server, "PUT", f"{PDB}/pdb-bad-status/status", bad)
    assert [(c["field"], c["reason"]) for c in status["details"]["causes"]] == [
        ("status.conditions[0].status", "FieldValueNotSupported"), ("status.conditions[0].reason", "FieldValueInvalid"),
        ("status.disruptionsAllowed", "FieldValueInvalid")]
    assert status["details"]["causes"][0]["message"] == ('Unsupported value: "Maybe": supported values: "False", '
                                                         '"True", "Unknown"')
    assert status["details"]["causes"][2]["message"] == "Invalid value: -1: must be greater than or equal to 0"


def test_volumeattachment_status_subresource(server):
    attachment = created(server, VA, va("va-status"))
    status = dict(attachment, metadata={**attachment["metadata"], "labels": {"from": "status"}},
                  spec={**attachment["spec"], "nodeName": "node-2"},
                  status={"attached": True, "attachmentMetadata": {"dev": "/dev/sdb"},
                          "attachError": {"message": "boom", "errorCode": 5}})
    after = put(server, f"{VA}/va-status/status", status)
    assert after["status"]["attached"] is True and after["spec"]["nodeName"] == "node-1"
    assert "labels" not in after["metadata"]  # ResetObjectMetaForStatus
    assert after["status"]["attachError"] == {"message": "boom"}  # errorCode needs MutableCSINodeAllocatableCount
    relabel = dict(after, metadata={**after["metadata"], "labels": {"x": "y"}}, status={"attached": False})
    relabeled = put(server, f"{VA}/va-status", relabel)
    assert relabeled["status"]["attached"] is True and relabeled["metadata"]["labels"] == {"x": "y"}


def test_csidriver_spec_changes_bump_generation(server):
    driver = created(server, CSIDRIVERS, csidriver("bump.csi.example.com"))
    changed = put(server, f"{CSIDRIVERS}/bump.csi.example.com",
                  dict(driver, spec={**driver["spec"], "podInfoOnMount": True}))
    assert changed["metadata"]["generation"] == 1
    same = put(server, f"{CSIDRIVERS}/bump.csi.example.com",
               dict(changed, metadata={**changed["metadata"], "labels": {"a": "b"}}))
    assert same["metadata"]["generation"] == 1


# ---- protobuf bodies (what kubectl and client-go send) ----

def proto_object(api_version: str, kind: str, message: bytes) -> bytes:
    type_meta = bytes_field(1, api_version.encode()) + bytes_field(2, kind.encode())
    return b"k8s\x00" + bytes_field(1, type_meta) + bytes_field(2, message)


def test_protobuf_csidriver_keeps_false_pointers(server):
    meta = bytes_field(1, b"proto.csi.example.com")
    spec = varint_field(1, 0) + varint_field(2, 1) + bytes_field(6, bytes_field(1, b"vault") + varint_field(2, 3600))
    body = proto_object("storage.k8s.io/v1", "CSIDriver", bytes_field(1, meta) + bytes_field(2, spec))
    resp = server.request("POST", CSIDRIVERS, body, {"Content-Type": "application/vnd.kubernetes.protobuf",
                                                     "Accept": "application/json"})
    assert resp.status == 201, resp.body
    spec_out = resp.json()["spec"]
    assert spec_out["attachRequired"] is False and spec_out["podInfoOnMount"] is True
    assert spec_out["tokenRequests"] == [{"audience": "vault", "expirationSeconds": 3600}]


def test_protobuf_storageclass(server):
    meta = bytes_field(1, b"sc-proto")
    params = bytes_field(3, bytes_field(1, b"type") + bytes_field(2, b"ssd"))
    message = bytes_field(1, meta) + bytes_field(2, b"csi.example.com") + params + varint_field(6, 0) + \
        bytes_field(7, b"WaitForFirstConsumer")
    resp = server.request("POST", SC, proto_object("storage.k8s.io/v1", "StorageClass", message),
                          {"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert resp.status == 201, resp.body
    got = resp.json()
    assert got["parameters"] == {"type": "ssd"} and got["allowVolumeExpansion"] is False
    assert (got["reclaimPolicy"], got["volumeBindingMode"]) == ("Delete", "WaitForFirstConsumer")


# ---- kubectl ----

@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_create_and_get_pdb(server):
    out = server.kubectl("create", "poddisruptionbudget", "kpdb", "--selector=app=a", "--min-available=1")
    assert "poddisruptionbudget.policy/kpdb created" in out.stdout
    got = json.loads(server.kubectl("get", "pdb", "kpdb", "-o", "json").stdout)
    assert got["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "a"}}}
    lines = server.kubectl("get", "pdb").stdout.splitlines()
    assert lines[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]
    row = next(line.split() for line in lines if line.startswith("kpdb "))
    assert row[:4] == ["kpdb", "1", "N/A", "0"]


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_get_storageclasses_and_csidrivers(server):
    created(server, SC, sc("sc-default", metadata={"name": "sc-default", "annotations": {
        "storageclass.kubernetes.io/is-default-class": "true"}}, allowVolumeExpansion=True))
    lines = server.kubectl("get", "sc").stdout.splitlines()
    assert lines[0].split() == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION",
                                "AGE"]
    row = next(line.split() for line in lines if line.startswith("sc-default "))
    assert row[:6] == ["sc-default", "(default)", "csi.example.com", "Delete", "Immediate", "true"]
    created(server, CSIDRIVERS, csidriver("table.csi.example.com", tokenRequests=[{"audience": "a"}]))
    lines = server.kubectl("get", "csidrivers").stdout.splitlines()
    assert lines[0].split() == ["NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS",
                                "REQUIRESREPUBLISH", "MODES", "AGE"]
    row = next(line.split() for line in lines if line.startswith("table.csi.example.com "))
    assert row[:7] == ["table.csi.example.com", "true", "false", "false", "a", "false", "Persistent"]


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_tables_of_the_other_storage_kinds(server):
    created(server, VAC, vac("vac-table"))
    created(server, CAPACITIES, capacity("cap-table", capacity="10Gi"))
    created(server, VA, va("va-table"))
    created(server, CSINODES, csinode("node-table", {"name": "d.example.com", "nodeID": "n1"}))
    assert server.kubectl("get", "vac").stdout.splitlines()[0].split() == ["NAME", "DRIVERNAME", "AGE"]
    cap = server.kubectl("get", "csistoragecapacities").stdout.splitlines()
    assert cap[0].split() == ["NAME", "STORAGECLASSNAME", "CAPACITY"]
    assert ["cap-table", "fast", "10Gi"] in [line.split() for line in cap]
    lines = server.kubectl("get", "volumeattachments").stdout.splitlines()
    assert lines[0].split() == ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    row = next(line.split() for line in lines if line.startswith("va-table "))
    assert row[:5] == ["va-table", "csi.example.com", "pv-1", "node-1", "false"]
    lines = server.kubectl("get", "csinodes").stdout.splitlines()
    assert lines[0].split() == ["NAME", "DRIVERS", "AGE"]
    assert next(line.split() for line in lines if line.startswith("node-table "))[:2] == ["node-table", "1"]


# ---- invalid objects ----

CREATE_CORPUS = [
    (PDB, pdb("bad-both", minAvailable=1, maxUnavailable=1), "PodDisruptionBudget.policy", "spec",
     "FieldValueInvalid", 'Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"a"}},'
     '"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set'),
    (PDB, pdb("bad-pct", minAvailable="150%"), "PodDisruptionBudget.policy", "spec.minAvailable",
     "FieldValueInvalid", 'Invalid value: "150%": must not be greater than 100%'),
    (PDB, pdb("bad-str", minAvailable="abc"), "PodDisruptionBudget.policy", "spec.minAvailable",
     "FieldValueInvalid", f'Invalid value: "abc": {PERCENT}'),
    (PDB, pdb("bad-neg", maxUnavailable=-1), "PodDisruptionBudget.policy", "spec.maxUnavailable",
     "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"),
    (PDB, pdb("bad-policy", unhealthyPodEvictionPolicy="Sometimes"), "PodDisruptionBudget.policy",
     "spec.unhealthyPodEvictionPolicy", "FieldValueNotSupported",
     'Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"'),
    (PDB, pdb("bad-op", selector={"matchExpressions": [{"key": "app", "operator": "Near"}]}),
     "PodDisruptionBudget.policy", "spec.selector.matchExpressions[0].operator", "FieldValueInvalid",
     'Invalid value: "Near": not a valid selector operator'),
    (SC, sc("sc-noprov", provisioner=""), "StorageClass.storage.k8s.io", "provisioner", "FieldValueRequired",
     "Required value"),
    (SC, sc("sc-badprov", provisioner="-Bad-"), "StorageClass.storage.k8s.io", "provisioner", "FieldValueInvalid",
     f'Invalid value: "-bad-": {QUALIFIED}'),
    (SC, sc("sc-recycle", reclaimPolicy="Recycle"), "StorageClass.storage.k8s.io", "reclaimPolicy",
     "FieldValueNotSupported", 'Unsupported value: "Recycle": supported values: "Delete", "Retain"'),
    (SC, sc("sc-mode", volumeBindingMode="Later"), "StorageClass.storage.k8s.io", "volumeBindingMode",
     "FieldValueNotSupported", 'Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"'),
    (SC, sc("sc-param", parameters={"": "x"}), "StorageClass.storage.k8s.io", "parameters", "FieldValueInvalid",
     'Invalid value: "": field can not be empty.'),
    (SC, sc("sc-topo", allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": []}]}]),
     "StorageClass.storage.k8s.io", "allowedTopologies[0].matchLabelExpressions[0].values", "FieldValueRequired",
     "Required value"),
    (SC, sc("Bad_Name"), "StorageClass.storage.k8s.io", "metadata.name", "FieldValueInvalid",
     f'Invalid value: "Bad_Name": {DNS_SUBDOMAIN}'),
    (CSIDRIVERS, csidriver("fs.csi.example.com", fsGroupPolicy="Bogus"), "CSIDriver.storage.k8s.io",
     "spec.fsGroupPolicy", "FieldValueNotSupported",
     'Unsupported value: "Bogus": supported values: "File", "None", "ReadWriteOnceWithFSType"'),
    (CSIDRIVERS, csidriver("modes.csi.example.com", volumeLifecycleModes=["Sometimes"]), "CSIDriver.storage.k8s.io",
     "spec.volumeLifecycleModes", "FieldValueNotSupported",
     'Unsupported value: "Sometimes": supported values: "Persistent", "Ephemeral"'),
    (CSIDRIVERS, csidriver("tok.csi.example.com", tokenRequests=[{"audience": "a", "expirationSeconds": 60}]),
     "CSIDriver.storage.k8s.io", "spec.tokenRequests[0].expirationSeconds", "FieldValueInvalid",
     "Invalid value: 60: may not specify a duration less than 10 minutes"),
    (CSIDRIVERS, csidriver("dup.csi.example.com", tokenRequests=[{"audience": "a"}, {"audience": "a"}]),
     "CSIDriver.storage.k8s.io", "spec.tokenRequests[1].audience", "FieldValueDuplicate", 'Duplicate value: "a"'),
    (CSINODES, csinode("node-dup", {"name": "d.example.com", "nodeID": "1"}, {"name": "d.example.com", "nodeID": "2"}),
     "CSINode.storage.k8s.io", "spec.drivers[1].name", "FieldValueDuplicate", 'Duplicate value: "d.example.com"'),
    (CSINODES, csinode("node-noid", {"name": "d.example.com", "nodeID": ""}), "CSINode.storage.k8s.io",
     "spec.drivers[0].nodeID", "FieldValueRequired", "Required value"),
    (VA, va("va-nosource", source={}), "VolumeAttachment.storage.k8s.io", "spec.source", "FieldValueRequired",
     "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"),
    (VA, va("va-node", nodeName="Node_1"), "VolumeAttachment.storage.k8s.io", "spec.nodeName", "FieldValueInvalid",
     f'Invalid value: "Node_1": {DNS_SUBDOMAIN}'),
    (VAC, vac("vac-noparams", parameters={}), "VolumeAttributesClass.storage.k8s.io", "parameters",
     "FieldValueRequired", "Required value: must contain at least one key/value pair"),
    (VAC, vac("vac-nodriver", driverName=""), "VolumeAttributesClass.storage.k8s.io", "driverName",
     "FieldValueRequired", "Required value"),
    (CAPACITIES, capacity("cap-neg", capacity="-1Gi"), "CSIStorageCapacity.storage.k8s.io", "capacity",
     "FieldValueInvalid", 'Invalid value: "-1Gi": must be greater than or equal to 0'),
    (CAPACITIES, capacity("cap-noclass", storageClassName=""), "CSIStorageCapacity.storage.k8s.io",
     "storageClassName", "FieldValueInvalid", f'Invalid value: "": {DNS_SUBDOMAIN}'),
]


@pytest.mark.parametrize(("path", "body", "kind", "field", "reason", "message"), CREATE_CORPUS,
                         ids=[c[1]["metadata"]["name"] for c in CREATE_CORPUS])
def test_invalid_create(server, path, body, kind, field, reason, message):
    status = invalid(server, "POST", path, body)
    assert status["details"]["causes"] == [{"reason": reason, "message": message, "field": field}]
    assert status["message"] == f'{kind} "{body["metadata"]["name"]}" is invalid: {field}: {message}'


def test_va_without_attacher_reports_each_rule(server):
    status = invalid(server, "POST", VA, va("va-noattacher", attacher=""))
    causes = [(c["field"], c["reason"]) for c in status["details"]["causes"]]
    assert causes == [("spec.attacher", "FieldValueRequired"), ("spec.attacher", "FieldValueRequired"),
                      ("spec.attacher", "FieldValueInvalid")]
    assert status["message"] == ('VolumeAttachment.storage.k8s.io "va-noattacher" is invalid: [spec.attacher: '
                                 f'Required value, spec.attacher: Invalid value: "": {DNS_SUBDOMAIN}]')


UPDATE_CORPUS = [
    (SC, sc("sc-upd-prov"), {"provisioner": "other.example.com"}, "provisioner", "FieldValueForbidden",
     "Forbidden: updates to provisioner are forbidden."),
    (SC, sc("sc-upd-params"), {"parameters": {"a": "b"}}, "parameters", "FieldValueForbidden",
     "Forbidden: updates to parameters are forbidden."),
    (SC, sc("sc-upd-reclaim"), {"reclaimPolicy": "Retain"}, "reclaimPolicy", "FieldValueForbidden",
     "Forbidden: updates to reclaimPolicy are forbidden."),
    (SC, sc("sc-upd-mode"), {"volumeBindingMode": "WaitForFirstConsumer"}, "volumeBindingMode", "FieldValueInvalid",
     'Invalid value: "WaitForFirstConsumer": field is immutable'),
    (CSIDRIVERS, csidriver("upd.csi.example.com"), {"spec": {"attachRequired": False}}, "spec.attachedRequired",
     "FieldValueInvalid", "Invalid value: false: field is immutable"),
    (CSIDRIVERS, csidriver("updm.csi.example.com"), {"spec": {"volumeLifecycleModes": ["Ephemeral"]}},
     "spec.volumeLifecycleModes", "FieldValueInvalid", 'Invalid value: ["Ephemeral"]: field is immutable'),
    (CSINODES, csinode("node-upd", {"name": "d.example.com", "nodeID": "n1"}),
     {"spec": {"drivers": [{"name": "d.example.com", "nodeID": "n2"}]}}, "spec.drivers", "FieldValueInvalid",
     'Invalid value: {"Name":"d.example.com","NodeID":"n2","TopologyKeys":null,"Allocatable":null}: '
     "field is immutable"),
    (VA, va("va-upd"), {"spec": {"source": {"persistentVolumeName": "pv-2"}}}, "spec", "FieldValueInvalid",
     'Invalid value: {"Attacher":"csi.example.com","Source":{"PersistentVolumeName":"pv-2","InlineVolumeSpec":null},'
     '"NodeName":"node-1"}: field is immutable'),
    (VAC, vac("vac-upd"), {"driverName": "other.example.com"}, "driverName", "FieldValueForbidden",
     "Forbidden: updates to driverName are forbidden."),
    (VAC, vac("vac-upd-params"), {"parameters": {"iops": "200"}}, "parameters", "FieldValueForbidden",
     "Forbidden: updates to parameters are forbidden."),
    (CAPACITIES, capacity("cap-upd"), {"storageClassName": "slow"}, "storageClassName", "FieldValueInvalid",
     'Invalid value: "slow": field is immutable'),
    (CAPACITIES, capacity("cap-upd-topo"), {"nodeTopology": {"matchLabels": {"zone": "b"}}}, "nodeTopology",
     "FieldValueInvalid", 'Invalid value: {"matchLabels":{"zone":"b"}}: field is immutable'),
]


@pytest.mark.parametrize(("path", "body", "patch", "field", "reason", "message"), UPDATE_CORPUS,
                         ids=[c[1]["metadata"]["name"] for c in UPDATE_CORPUS])
def test_invalid_update(server, path, body, patch, field, reason, message):
    created(server, path, body)
    status = invalid(server, "PATCH", f"{path}/{body['metadata']['name']}", patch, MERGE)
    assert {"reason": reason, "message": message, "field": field} in status["details"]["causes"]
    assert f"{field}: {message}" in status["message"]
