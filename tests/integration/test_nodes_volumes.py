"""core/v1 nodes (status, proxy without kubelets), persistentvolumes, persistentvolumeclaims and
componentstatuses: kubectl columns, Kubernetes' defaults and validation messages, and the admission plugins
StorageObjectInUseProtection, DefaultStorageClass, PersistentVolumeClaimResize, DefaultTolerationSeconds and
TaintNodesByCondition."""

from __future__ import annotations

import json
import pathlib
import time

import pytest

from kube_apiserver.apimachinery.protobuf import bytes_field

NODES = "/api/v1/nodes"
PVS = "/api/v1/persistentvolumes"
PVCS = "/api/v1/namespaces/default/persistentvolumeclaims"
SC = "/apis/storage.k8s.io/v1/storageclasses"
MERGE = {"Content-Type": "application/merge-patch+json"}
DEFAULT_CLASS = {"storageclass.kubernetes.io/is-default-class": "true"}


def node(name: str, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec}


def pv(name: str, **spec) -> dict:
    spec = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}, **spec}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {k: v for k, v in spec.items() if v is not None}}


def pvc(name: str, **spec) -> dict:
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {k: v for k, v in spec.items() if v is not None}}


def storage_class(name: str, default: bool = False, expand: bool | None = None) -> dict:
    body = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": "example.com/disk"}
    if default:
        body["metadata"]["annotations"] = DEFAULT_CLASS
    if expand is not None:
        body["allowVolumeExpansion"] = expand
    return body


def create(server, path: str, body: dict) -> dict:
    created = server.request("POST", path, body)
    assert created.status == 201, created.body
    return created.json()


def refusal(server, path: str, body: dict) -> tuple[int, str, list, str]:
    resp = server.request("POST", path, body)
    status = resp.json()
    causes = [(c["reason"], c["field"]) for c in status.get("details", {}).get("causes", [])]
    return resp.status, status["reason"], causes, status["message"]


# ---- nodes ----

def test_node_defaults_and_status_on_create(server):
    body = node("worker-1", podCIDR="10.244.1.0/24", providerID="kind://worker-1")
    body["status"] = {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                      "conditions": [{"type": "Ready", "status": "True"}],
                      "addresses": [{"type": "InternalIP", "address": "172.18.0.3"}],
                      "nodeInfo": {"kubeletVersion": "v1.34.0"}}
    created = create(server, NODES, body)
    assert created["spec"] == {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"],
                               "providerID": "kind://worker-1",
                               "taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]}
    assert created["status"]["allocatable"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    assert created["status"]["conditions"] == [{"type": "Ready", "status": "True"}]
    # The main resource never writes the status; nodes/status does.
    changed = server.request("PATCH", f"{NODES}/worker-1", {"status": {"nodeInfo": {"kubeletVersion": "v9"}}},
                             MERGE).json()
    assert changed["status"]["nodeInfo"]["kubeletVersion"] == "v1.34.0"
    written = server.request("PATCH", f"{NODES}/worker-1/status", {"status": {"nodeInfo": {"osImage": "Debian"}}},
                             MERGE).json()
    info = written["status"]["nodeInfo"]
    assert (info["kubeletVersion"], info["osImage"], info["bootID"]) == ("v1.34.0", "Debian", "")


def test_node_without_status_reads_back_go_zero_values(server):
    created = create(server, NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bare"}})
    # TaintNodesByCondition: new nodes are not ready until their node lifecycle controller says so.
    assert created["spec"] == {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]}
    assert created["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 0}}
    assert set(created["status"]["nodeInfo"].values()) == {""} and len(created["status"]["nodeInfo"]) == 10


def test_node_update_rules(server):
    create(server, NODES, node("updated", podCIDRs=["10.9.0.0/24"], providerID="p://1", externalID="e"))
    cidr = server.request("PATCH", f"{NODES}/updated", {"spec": {"podCIDRs": ["10.8.0.0/24"]}}, MERGE).json()
    assert cidr["details"]["causes"] == [{"reason": "FieldValueForbidden", "field": "spec.podCIDRs",
                                          "message": 'Forbidden: node updates may not change podCIDR except from '
                                                     '"" to valid'}]
    provider = server.request("PATCH", f"{NODES}/updated", {"spec": {"providerID": "p://2"}}, MERGE).json()
    assert provider["message"] == ('Node "updated" is invalid: spec.providerID: Forbidden: node updates may not '
                                   'change providerID except from "" to valid')
    external = server.request("PATCH", f"{NODES}/updated", {"spec": {"externalID": "f"}}, MERGE).json()
    assert external["message"] == 'Node "updated" is invalid: spec.externalID: Forbidden: may not be updated'
    taints = {"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoSchedule"}]}}
    duplicate = server.request("PATCH", f"{NODES}/updated", taints, MERGE).json()
    assert duplicate["details"]["causes"][0] == {
        "reason": "FieldValueDuplicate", "field": "metadata.taints[1]",
        "message": 'Duplicate value: {"Key":"k","Value":"","Effect":"NoSchedule","TimeAdded":null}: taints must '
                   "be unique by key and effect pair"}
    addresses = {"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}] * 2}}
    twice = server.request("PATCH", f"{NODES}/updated/status", addresses, MERGE).json()
    assert twice["details"]["causes"] == [{"reason": "FieldValueDuplicate", "field": "status.addresses[1]",
                                           "message": 'Duplicate value: {"type":"InternalIP","address":"10.0.0.1"}'}]


def test_discovery_matches_v1_34(server):
    table = json.loads((pathlib.Path(__file__).parent.parent / "data" / "discovery-v1.34.json").read_text())
    mine = ("nodes", "nodes/status", "nodes/proxy", "persistentvolumes", "persistentvolumes/status",
            "persistentvolumeclaims", "persistentvolumeclaims/status", "componentstatuses")
    expected = {e["name"]: e for e in table if e["group"] == "" and e["name"] in mine}
    served = {r["name"]: r for r in server.request("GET", "/api/v1").json()["resources"] if r["name"] in mine}
    assert set(served) == set(mine)
    for name, resource in served.items():
        want = expected[name]
        assert (resource["kind"], resource["namespaced"], sorted(resource["verbs"])) == (
            want["kind"], want["namespaced"], sorted(want["verbs"])), name
        assert resource.get("shortNames", []) == want.get("shortNames", []), name


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_get_nodes_columns_and_cordon(server):
    body = node("columns")
    body["metadata"]["labels"] = {"node-role.kubernetes.io/control-plane": ""}
    body["status"] = {"conditions": [{"type": "Ready", "status": "False"}], "nodeInfo": {"kubeletVersion": "v1.34.1"}}
    create(server, NODES, body)
    lines = server.kubectl("get", "no", "columns").stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    row = lines[1].split()
    assert row[:3] == ["columns", "NotReady", "control-plane"] and row[4] == "v1.34.1"
    wide = server.kubectl("get", "nodes", "columns", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[5:] == ["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    assert wide[1].split()[5:] == ["<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"]
    assert "node/columns cordoned" in server.kubectl("cordon", "columns").stdout
    cordoned = server.kubectl("get", "node", "columns", "--no-headers").stdout.split()
    assert cordoned[1] == "NotReady,SchedulingDisabled"
    unschedulable = server.request("GET", f"{NODES}?fieldSelector=spec.unschedulable=true").json()["items"]
    assert [n["metadata"]["name"] for n in unschedulable] == ["columns"]
    assert "no" in server.kubectl("api-resources", "--api-group=").stdout.split()


def test_node_proxy_answers_without_a_kubelet(server):
    missing = server.request("GET", f"{NODES}/nowhere/proxy/healthz")
    assert (missing.status, missing.json()["message"]) == (404, 'nodes "nowhere" not found')
    bad = server.request("GET", f"{NODES}/a:b:c:d/proxy/")
    assert (bad.status, bad.json()["message"]) == (400, 'invalid node request "a:b:c:d"')
    create(server, NODES, node("no-address"))
    bare = server.request("GET", f"{NODES}/no-address/proxy/")
    assert (bare.status, bare.json()["message"]) == (500, "no preferred addresses found; known addresses: []")
    body = node("proxied")
    body["status"] = {"addresses": [{"type": "InternalIP", "address": "10.0.0.7"}],
                      "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}
    create(server, NODES, body)
    proxied = server.request("GET", f"{NODES}/proxied/proxy/metrics").json()
    assert (proxied["code"], proxied["reason"]) == (503, "ServiceUnavailable")
    assert proxied["message"] == ("error trying to reach service: this API server does not connect to kubelets "
                                  "(node proxied, kubelet 10.0.0.7:10250)")


# ---- persistent volumes ----

def test_persistent_volume_defaults_and_protection(server):
    created = create(server, PVS, pv("pv-defaults"))
    assert created["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    spec = created["spec"]
    assert (spec["persistentVolumeReclaimPolicy"], spec["volumeMode"]) == ("Retain", "Filesystem")
    assert spec["hostPath"] == {"path": "/data", "type": ""}
    assert created["status"]["phase"] == "Pending" and created["status"]["lastPhaseTransitionTime"]
    by_name = server.request("GET", f"{PVS}?fieldSelector=name=pv-defaults").json()["items"]
    assert [p["metadata"]["name"] for p in by_name] == ["pv-defaults"]
    # A bound volume waits for the pv-protection controller, which releases it only once unbound.
    bound = server.request("GET", f"{PVS}/pv-defaults").json()
    bound["status"]["phase"] = "Bound"
    assert server.request("PUT", f"{PVS}/pv-defaults/status", bound).status == 200
    deleted = server.request("DELETE", f"{PVS}/pv-defaults").json()
    assert deleted["metadata"]["deletionTimestamp"]
    time.sleep(0.5)
    terminating = server.request("GET", PVS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    row = next(r for r in terminating.json()["rows"] if r["cells"][0] == "pv-defaults")
    assert row["cells"][4] == "Terminating"


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_get_pv_columns(server):
    create(server, PVS, pv("pv-columns", storageClassName="slow", claimRef={"namespace": "default", "name": "c"},
                           accessModes=["ReadWriteOnce", "ReadOnlyMany"]))
    lines = server.kubectl("get", "pv", "pv-columns").stdout.splitlines()
    assert lines[0].split() == ["NAME", "CAPACITY", "ACCESS", "MODES", "RECLAIM", "POLICY", "STATUS", "CLAIM",
                                "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"]
    assert lines[1].split()[:8] == ["pv-columns", "1Gi", "RWO,ROX", "Retain", "Pending", "default/c", "slow",
                                    "<unset>"]


def test_persistent_volume_source_is_immutable(server):
    create(server, PVS, pv("pv-immutable"))
    changed = server.request("PATCH", f"{PVS}/pv-immutable", {"spec": {"hostPath": {"path": "/other"}}}, MERGE)
    assert changed.status == 422
    body = changed.json()
    assert body["details"]["causes"][0]["field"] == "spec.persistentvolumesource"
    assert body["message"].startswith('PersistentVolume "pv-immutable" is invalid: spec.persistentvolumesource: '
                                      "Forbidden: spec.persistentvolumesource is immutable after creation\n")
    grown = server.request("PATCH", f"{PVS}/pv-immutable", {"spec": {"capacity": {"storage": "2Gi"}}}, MERGE)
    assert grown.status == 200 and grown.json()["spec"]["capacity"] == {"storage": "2Gi"}
    released = server.request("PATCH", f"{PVS}/pv-immutable/status", {"status": {"phase": "Released"}}, MERGE).json()
    assert released["status"]["phase"] == "Released"


def test_protobuf_persistent_volume(server):
    meta = bytes_field(1, b"pv-proto")
    capacity = bytes_field(1, bytes_field(1, b"storage") + bytes_field(2, bytes_field(1, b"5Gi")))
    nfs = bytes_field(5, bytes_field(1, b"nfs.example.com") + bytes_field(2, b"/exports"))
    spec = capacity + bytes_field(2, nfs) + bytes_field(3, b"ReadWriteMany") + bytes_field(6, b"nfs")
    message = bytes_field(1, meta) + bytes_field(2, spec)
    type_meta = bytes_field(1, b"v1") + bytes_field(2, b"PersistentVolume")
    body = b"k8s\x00" + bytes_field(1, type_meta) + bytes_field(2, message)
    resp = server.request("POST", PVS, body, {"Content-Type": "application/vnd.kubernetes.protobuf",
                                              "Accept": "application/json"})
    assert resp.status == 201, resp.body
    spec_out = resp.json()["spec"]
    assert spec_out["nfs"] == {"server": "nfs.example.com", "path": "/exports"}
    assert (spec_out["capacity"], spec_out["accessModes"], spec_out["storageClassName"]) == (
        {"storage": "5Gi"}, ["ReadWriteMany"], "nfs")


# ---- persistent volume claims ----

def test_claim_defaults_protection_and_default_class(server):
    create(server, SC, storage_class("older-default", default=True))
    time.sleep(1.1)  # creation timestamps have second precision: the newest default wins
    create(server, SC, storage_class("newer-default", default=True))
    created = create(server, PVCS, pvc("claim-defaults"))
    assert created["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert created["spec"]["storageClassName"] == "newer-default"
    assert created["spec"]["volumeMode"] == "Filesystem"
    assert created["status"] == {"phase": "Pending"}
    explicit = create(server, PVCS, pvc("claim-no-class", storageClassName=""))
    assert explicit["spec"]["storageClassName"] == ""
    beta = pvc("claim-beta")
    beta["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "slow"}
    assert "storageClassName" not in create(server, PVCS, beta)["spec"]
    for name in ("older-default", "newer-default"):
        assert server.request("DELETE", f"{SC}/{name}").status == 200


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_get_pvc_columns(server):
    create(server, PVCS, pvc("claim-columns", storageClassName="standard"))
    lines = server.kubectl("get", "pvc", "claim-columns").stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS",
                                "VOLUMEATTRIBUTESCLASS", "AGE"]
    assert lines[1].split()[:4] == ["claim-columns", "Pending", "standard", "<unset>"]
    bound = {"status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}}
    assert server.request("PATCH", f"{PVCS}/claim-columns", {"spec": {"volumeName": "pv-x"}}, MERGE).status == 200
    assert server.request("PATCH", f"{PVCS}/claim-columns/status", bound, MERGE).status == 200
    row = server.kubectl("get", "pvc", "claim-columns", "--no-headers").stdout.split()
    assert row[:6] == ["claim-columns", "Bound", "pv-x", "1Gi", "RWO", "standard"]


def test_claim_spec_is_immutable_but_bound_claims_expand(server):
    create(server, SC, storage_class("fixed", expand=False))
    create(server, SC, storage_class("growing", expand=True))
    for name in ("claim-fixed", "claim-growing"):
        create(server, PVCS, pvc(name, storageClassName=name.removeprefix("claim-")))
    more = {"spec": {"resources": {"requests": {"storage": "2Gi"}}}}
    pending = server.request("PATCH", f"{PVCS}/claim-fixed", more, MERGE).json()
    assert (pending["code"], pending["details"]["causes"][0]["field"]) == (422, "spec")
    assert pending["message"].startswith(
        'PersistentVolumeClaim "claim-fixed" is invalid: spec: Forbidden: spec is immutable after creation except '
        "resources.requests and volumeAttributesClassName for bound claims\n")
    bound = {"status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}}
    for name in ("claim-fixed", "claim-growing"):
        assert server.request("PATCH", f"{PVCS}/{name}/status", bound, MERGE).status == 200
    refused = server.request("PATCH", f"{PVCS}/claim-fixed", more, MERGE).json()
    assert (refused["code"], refused["reason"]) == (403, "Forbidden")
    assert refused["message"] == ('persistentvolumeclaims "claim-fixed" is forbidden: only dynamically provisioned '
                                  "pvc can be resized and the storageclass that provisions the pvc must support "
                                  "resize")
    grown = server.request("PATCH", f"{PVCS}/claim-growing", more, MERGE)
    assert grown.status == 200 and grown.json()["spec"]["resources"]["requests"] == {"storage": "2Gi"}
    modes = server.request("PATCH", f"{PVCS}/claim-growing", {"spec": {"accessModes": ["ReadWriteMany"]}}, MERGE)
    assert modes.status == 422


def test_claim_class_is_set_once_and_volume_name_once(server):
    create(server, PVCS, pvc("claim-late-class"))  # no default class: none is chosen
    named = server.request("PATCH", f"{PVCS}/claim-late-class", {"spec": {"storageClassName": "late"}}, MERGE)
    assert named.status == 200 and named.json()["spec"]["storageClassName"] == "late"
    renamed = server.request("PATCH", f"{PVCS}/claim-late-class", {"spec": {"storageClassName": "other"}}, MERGE)
    assert renamed.status == 422
    assert server.request("PATCH", f"{PVCS}/claim-late-class", {"spec": {"volumeName": "v1"}}, MERGE).status == 200
    rebound = server.request("PATCH", f"{PVCS}/claim-late-class", {"spec": {"volumeName": "v2"}}, MERGE).json()
    assert "-\tVolumeName: \"v1\",\n+\tVolumeName: \"v2\"," in rebound["message"].replace(" \t", "\t")
    mode = server.request("PATCH", f"{PVCS}/claim-late-class/status", {"status": {"phase": "Lost"}}, MERGE).json()
    assert mode["status"] == {"phase": "Lost"} and mode["spec"]["volumeName"] == "v1"


# ---- component statuses ----

@pytest.mark.usefixtures("kubectl_available")
def test_component_statuses(server):
    out = server.kubectl("get", "cs")
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "MESSAGE", "ERROR"]
    assert lines[1].split() == ["etcd-0", "Healthy", "ok"]
    assert "v1 ComponentStatus is deprecated in v1.19+" in out.stderr
    got = server.request("GET", "/api/v1/componentstatuses/etcd-0").json()
    assert got["conditions"] == [{"type": "Healthy", "status": "True", "message": "ok"}]
    missing = server.request("GET", "/api/v1/componentstatuses/scheduler")
    assert (missing.status, missing.json()["message"]) == (500, "Component not found: scheduler")
    assert server.request("DELETE", "/api/v1/componentstatuses/etcd-0").status == 405
    selected = server.request("GET", "/api/v1/componentstatuses?fieldSelector=metadata.name=other").json()
    assert selected["items"] == []


# ---- admission and RBAC ----

def test_pods_get_default_toleration_seconds(server):
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "tolerating"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}],
                     "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}]}}
    created = create(server, "/api/v1/namespaces/default/pods", body)
    assert created["spec"]["tolerations"] == [
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists"},
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}]


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_create_clusterrole_for_nodes(server):
    out = server.kubectl("create", "clusterrole", "cr", "--verb=get", "--resource=nodes")
    assert "clusterrole.rbac.authorization.k8s.io/cr created" in out.stdout
    role = server.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/cr").json()
    assert role["rules"] == [{"verbs": ["get"], "apiGroups": [""], "resources": ["nodes"]}]


def test_admission_plugins_follow_the_flags(tmp_path):
    from tests.conftest import Server

    srv = Server(str(tmp_path), ["--disable-admission-plugins=StorageObjectInUseProtection,DefaultStorageClass,"
                                 "DefaultTolerationSeconds,TaintNodesByCondition"]).start()
    try:
        create(srv, SC, storage_class("ignored-default", default=True))
        claim = create(srv, PVCS, pvc("unprotected"))
        assert "finalizers" not in claim["metadata"] and "storageClassName" not in claim["spec"]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
        assert "tolerations" not in create(srv, "/api/v1/namespaces/default/pods", pod)["spec"]
        assert create(srv, NODES, node("untainted"))["spec"] == {}
    finally:
        srv.stop()


# ---- invalid objects ----

STORAGE_REQUIRED = ("FieldValueRequired", "spec.resources[storage]")
INVALID = [
    (NODES, node("taints", taints=[{"key": "k", "effect": "Sometimes"}]), 422, "Invalid",
     [("FieldValueNotSupported", "metadata.taints[0].effect")],
     'Node "taints" is invalid: metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: '
     '"NoSchedule", "PreferNoSchedule", "NoExecute"'),
    (NODES, node("cidrs", podCIDRs=["10.0.0.0/24", "10.1.0.0/24"]), 422, "Invalid",
     [("FieldValueInvalid", "spec.podCIDRs")],
     'Node "cidrs" is invalid: spec.podCIDRs: Invalid value: ["10.0.0.0/24","10.1.0.0/24"]: may specify no more '
     "than one CIDR for each IP family"),
    (PVS, pv("no-modes", accessModes=None), 422, "Invalid", [("FieldValueRequired", "spec.accessModes")],
     'PersistentVolume "no-modes" is invalid: spec.accessModes: Required value'),
    (PVS, pv("no-capacity", capacity=None), 422, "Invalid",
     [("FieldValueRequired", "spec.capacity"), ("FieldValueNotSupported", "spec.capacity")],
     'PersistentVolume "no-capacity" is invalid: [spec.capacity: Required value, spec.capacity: Unsupported '
     'value: null: supported values: "storage"]'),
    (PVS, pv("no-source", hostPath=None), 422, "Invalid", [("FieldValueRequired", "spec")],
     'PersistentVolume "no-source" is invalid: spec: Required value: must specify a volume type'),
    (PVS, pv("two-sources", nfs={"server": "s", "path": "/p"}), 422, "Invalid",
     [("FieldValueForbidden", "spec.nfs")],
     'PersistentVolume "two-sources" is invalid: spec.nfs: Forbidden: may not specify more than 1 volume type'),
    (PVS, pv("zero", capacity={"storage": "0"}), 422, "Invalid", [("FieldValueInvalid", "spec.capacity[storage]")],
     'PersistentVolume "zero" is invalid: spec.capacity[storage]: Invalid value: "0": must be greater than zero'),
    (PVS, pv("local", hostPath=None, local={"path": "/mnt"}), 422, "Invalid",
     [("FieldValueRequired", "spec.nodeAffinity")],
     'PersistentVolume "local" is invalid: spec.nodeAffinity: Required value: Local volume requires node affinity'),
    (PVCS, pvc("claim-no-modes", accessModes=None), 422, "Invalid", [("FieldValueRequired", "spec.accessModes")],
     'PersistentVolumeClaim "claim-no-modes" is invalid: spec.accessModes: Required value: at least 1 access mode '
     "is required"),
    (PVCS, pvc("claim-mode", accessModes=["ReadWriteSometimes"]), 422, "Invalid",
     [("FieldValueNotSupported", "spec.accessModes")],
     'PersistentVolumeClaim "claim-mode" is invalid: spec.accessModes: Unsupported value: "ReadWriteSometimes": '
     'supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'),
    (PVCS, pvc("claim-once-pod", accessModes=["ReadWriteOncePod", "ReadWriteOnce"]), 422, "Invalid",
     [("FieldValueForbidden", "spec.accessModes")],
     'PersistentVolumeClaim "claim-once-pod" is invalid: spec.accessModes: Forbidden: may not use ReadWriteOncePod '
     "with other access modes"),
    (PVCS, pvc("claim-no-storage", resources={}), 422, "Invalid", [STORAGE_REQUIRED],
     'PersistentVolumeClaim "claim-no-storage" is invalid: spec.resources[storage]: Required value'),
    (PVCS, pvc("claim-class", storageClassName="Fast_Disks"), 422, "Invalid",
     [("FieldValueInvalid", "spec.storageClassName")],
     'PersistentVolumeClaim "claim-class" is invalid: spec.storageClassName: Invalid value: "Fast_Disks": a '
     "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
     "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
    (PVS, pv("typed", capacity="1Gi"), 400, "BadRequest", [],
     'PersistentVolume in version "v1" cannot be handled as a PersistentVolume: json: cannot unmarshal string into '
     "Go struct field PersistentVolumeSpec.spec.capacity of type v1.ResourceList"),
    (PVCS, pvc("claim-source", dataSource={"kind": "Secret", "name": "s"}), 201, "", [], ""),
    (PVCS, pvc("claim-refs", dataSource={"kind": "PersistentVolumeClaim", "name": "a"},
               dataSourceRef={"kind": "PersistentVolumeClaim", "name": "b"}), 422, "Invalid",
     [("FieldValueInvalid", "spec")],
     'PersistentVolumeClaim "claim-refs" is invalid: spec: Invalid value: {}: must match dataSourceRef'),
    (PVCS, pvc("claim-quantity", resources={"requests": {"storage": "lots"}}), 400, "BadRequest", [],
     'PersistentVolumeClaim in version "v1" cannot be handled as a PersistentVolumeClaim: quantities must match the '
     "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
]


@pytest.mark.parametrize(("path", "body", "code", "reason", "causes", "message"), INVALID,
                         ids=[case[1]["metadata"]["name"] for case in INVALID])
def test_invalid_objects_are_refused(server, path, body, code, reason, causes, message):
    if code == 201:
        created = create(server, path, body)  # a dataSource other than a claim or snapshot is dropped
        assert "dataSource" not in created["spec"] and "dataSourceRef" not in created["spec"]
        return
    assert refusal(server, path, body) == (code, reason, causes, message)


def test_pod_kubelet_subresources_find_the_node(server):
    pods = "/api/v1/namespaces/default/pods"
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "on-node"},
            "spec": {"nodeName": "kubelet-node", "containers": [{"name": "c", "image": "nginx"}]}}
    create(server, pods, body)
    unknown = server.request("GET", f"{pods}/on-node/log")
    assert (unknown.status, unknown.json()["message"]) == (404, 'nodes "kubelet-node" not found')
    known = node("kubelet-node")
    known["status"] = {"addresses": [{"type": "Hostname", "address": "kubelet-node"}]}
    create(server, NODES, known)
    logs = server.request("GET", f"{pods}/on-node/log").json()
    assert (logs["code"], logs["message"]) == (503, "error trying to reach service: this API server does not "
                                                    "connect to kubelets (node kubelet-node, kubelet "
                                                    "kubelet-node:10250)")
