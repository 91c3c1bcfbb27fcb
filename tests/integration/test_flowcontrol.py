"""flowcontrol.apiserver.k8s.io/v1 FlowSchemas and PriorityLevelConfigurations: the bootstrap configuration,
defaults, the status subresources, kubectl tables, protobuf bodies, the fixed mandatory objects, and a corpus
of invalid objects answered with Kubernetes' exact errors."""

from __future__ import annotations

import copy

import pytest

from conftest import Server
from kube_apiserver.apimachinery.protobuf import bytes_field, varint_field

GV = "/apis/flowcontrol.apiserver.k8s.io/v1"
FS, PL = f"{GV}/flowschemas", f"{GV}/prioritylevelconfigurations"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
AUTO = "apf.kubernetes.io/autoupdate-spec"
DNS_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
VERBS = '"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"'
EVERYTHING = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True,
                                 "namespaces": ["*"]}],
              "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}
SUGGESTED_SCHEMAS = ["probes", "system-leader-election", "system-node-high", "system-nodes", "kube-controller-manager",
                     "kube-scheduler", "kube-system-service-accounts", "service-accounts", "global-default"]
SUGGESTED_LEVELS = ["system", "node-high", "leader-election", "workload-high", "workload-low", "global-default"]


def group(name: str) -> dict:
    return {"kind": "Group", "group": {"name": name}}


def fs(name: str, rule: dict | None = None, **spec) -> dict:
    spec.setdefault("priorityLevelConfiguration", {"name": "global-default"})
    spec.setdefault("rules", [rule or {"subjects": [group("team-a")], **EVERYTHING}])
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": name},
            "spec": spec}


def resource_rule(**extra) -> dict:
    return {"subjects": [group("team-a")], "resourceRules": [{"verbs": ["get"], "apiGroups": [""],
                                                              "resources": ["pods"], "namespaces": ["*"], **extra}]}


def subject_rule(subject: dict) -> dict:
    return {"subjects": [subject], "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}


def url_rule(verbs: list, urls: list) -> dict:
    return {"subjects": [group("team-a")], "nonResourceRules": [{"verbs": verbs, "nonResourceURLs": urls}]}


def pl(name: str, **spec) -> dict:
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": name}, "spec": spec}


def limited(**fields) -> dict:
    fields.setdefault("limitResponse", {"type": "Reject"})
    return {"type": "Limited", "limited": fields}


def queued(**queuing) -> dict:
    return limited(limitResponse={"type": "Queue", "queuing": queuing})


def created(server, path: str, body: dict) -> dict:
    resp = server.request("POST", path, body)
    assert resp.status == 201, resp.body
    return resp.json()


def put(server, path: str, body: dict, status: int = 200) -> dict:
    resp = server.request("PUT", path, body)
    assert resp.status == status, resp.body
    return resp.json()


def invalid(server, method: str, path: str, body: dict) -> dict:
    resp = server.request(method, path, body)
    assert resp.status == 422, resp.body
    status = resp.json()
    assert status["reason"] == "Invalid" and status["code"] == 422
    return status


def causes(status: dict) -> list[tuple[str, str, str]]:
    return [(c["field"], c["reason"], c["message"]) for c in status["details"]["causes"]]


# ---- the configuration kube-apiserver maintains ----

def test_bootstrap_objects_exist(server):
    schemas = {i["metadata"]["name"]: i for i in server.request("GET", FS).json()["items"]}
    levels = {i["metadata"]["name"]: i for i in server.request("GET", PL).json()["items"]}
    assert {"exempt", "catch-all", *SUGGESTED_SCHEMAS} <= set(schemas)
    assert {"exempt", "catch-all", *SUGGESTED_LEVELS} <= set(levels)
    for obj in [*schemas.values(), *levels.values()]:
        assert obj["metadata"]["annotations"] == {AUTO: "true"}
        assert obj["metadata"]["generation"] == 1 and obj["status"] == {}
    assert schemas["exempt"]["spec"] == {"priorityLevelConfiguration": {"name": "exempt"}, "matchingPrecedence": 1,
                                         "rules": [{"subjects": [group("system:masters")], **EVERYTHING}]}
    assert schemas["catch-all"]["spec"] == {
        "priorityLevelConfiguration": {"name": "catch-all"}, "matchingPrecedence": 10000,
        "distinguisherMethod": {"type": "ByUser"},
        "rules": [{"subjects": [group("system:unauthenticated"), group("system:authenticated")], **EVERYTHING}]}
    assert levels["exempt"]["spec"] == {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0,
                                                                     "lendablePercent": 0}}
    assert levels["catch-all"]["spec"] == limited(nominalConcurrencyShares=5, lendablePercent=0)
    assert levels["workload-low"]["spec"] == {"type": "Limited", "limited": {
        "nominalConcurrencyShares": 100, "lendablePercent": 90,
        "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 6, "queueLengthLimit": 50}}}}


def test_suggested_flow_schemas(server):
    probes = server.request("GET", f"{FS}/probes").json()["spec"]
    assert probes == {"priorityLevelConfiguration": {"name": "exempt"}, "matchingPrecedence": 2, "rules": [{
        "subjects": [group("system:unauthenticated"), group("system:authenticated")],
        "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}]}
    election = server.request("GET", f"{FS}/system-leader-election").json()["spec"]
    assert (election["matchingPrecedence"], election["distinguisherMethod"]) == (100, {"type": "ByUser"})
    assert election["rules"] == [{
        "subjects": [{"kind": "User", "user": {"name": "system:kube-controller-manager"}},
                     {"kind": "User", "user": {"name": "system:kube-scheduler"}},
                     {"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": "*"}}],
        "resourceRules": [{"verbs": ["get", "create", "update"], "apiGroups": ["coordination.k8s.io"],
                           "resources": ["leases"], "namespaces": ["*"]}]}]
    node_high = server.request("GET", f"{FS}/system-node-high").json()["spec"]
    assert node_high["rules"][0]["resourceRules"][0] == {"verbs": ["*"], "apiGroups": [""], "resources": [
        "nodes", "nodes/status"], "clusterScope": True, "namespaces": ["*"]}


def test_discovery_lists_status_subresources(server):
    names = {r["name"] for r in server.request("GET", GV).json()["resources"]}
    assert {"flowschemas", "flowschemas/status", "prioritylevelconfigurations",
            "prioritylevelconfigurations/status"} <= names


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_get_flowschemas(server):
    lines = server.kubectl("get", "flowschemas").stdout.splitlines()
    assert lines[0].split() == ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE",
                                "MISSINGPL"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    order = [line.split()[0] for line in lines[1:] if line.split()[0] in ("exempt", "catch-all",
                                                                          *SUGGESTED_SCHEMAS)]
    assert order == ["exempt", *SUGGESTED_SCHEMAS, "catch-all"]  # by matching precedence, then name
    assert rows["exempt"][:4] + rows["exempt"][5:] == ["exempt", "exempt", "1", "<none>", "?"]
    assert rows["kube-scheduler"][:4] == ["kube-scheduler", "workload-high", "800", "ByNamespace"]


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_get_prioritylevelconfigurations(server):
    lines = server.kubectl("get", "prioritylevelconfigurations").stdout.splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE",
                                "QUEUELENGTHLIMIT", "AGE"]
    rows = {line.split()[0]: line.split()[:6] for line in lines[1:]}
    assert rows["exempt"] == ["exempt", "Exempt", "<none>", "<none>", "<none>", "<none>"]
    assert rows["catch-all"] == ["catch-all", "Limited", "5", "<none>", "<none>", "<none>"]
    assert rows["leader-election"] == ["leader-election", "Limited", "10", "16", "4", "50"]


def test_server_side_tables(server):
    table = server.request("GET", f"{FS}/global-default", headers={"Accept": TABLE}).json()
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"), ("PriorityLevel", "string"), ("MatchingPrecedence", "string"),
        ("DistinguisherMethod", "string"), ("Age", "string"), ("MissingPL", "string")]
    cells = table["rows"][0]["cells"]
    assert cells[:4] + cells[5:] == ["global-default", "global-default", 9900, "ByUser", "?"]
    table = server.request("GET", f"{PL}/system", headers={"Accept": TABLE}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Type", "NominalConcurrencyShares", "Queues", "HandSize", "QueueLengthLimit", "Age"]
    assert table["rows"][0]["cells"][:6] == ["system", "Limited", 30, 64, 6, 50]


# ---- defaults and the stored form ----

def test_defaults(server):
    level = created(server, PL, pl("pl-defaults", **queued()))
    assert level["spec"]["limited"] == {"nominalConcurrencyShares": 30, "lendablePercent": 0, "limitResponse": {
        "type": "Queue", "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}}}
    assert level["metadata"]["generation"] == 1 and level["status"] == {}
    jail = created(server, PL, pl("pl-jail", **limited(nominalConcurrencyShares=0, borrowingLimitPercent=0)))
    assert jail["spec"]["limited"] == {"nominalConcurrencyShares": 0, "lendablePercent": 0,
                                       "borrowingLimitPercent": 0, "limitResponse": {"type": "Reject"}}
    schema = created(server, FS, fs("fs-defaults", resource_rule(clusterScope=True, namespaces=[])))
    assert schema["spec"]["matchingPrecedence"] == 1000 and "distinguisherMethod" not in schema["spec"]
    assert schema["spec"]["rules"][0]["resourceRules"] == [{"verbs": ["get"], "apiGroups": [""],
                                                            "resources": ["pods"], "clusterScope": True,
                                                            "namespaces": None}]


def proto_object(kind: str, message: bytes) -> bytes:
    type_meta = bytes_field(1, b"flowcontrol.apiserver.k8s.io/v1") + bytes_field(2, kind.encode())
    return b"k8s\x00" + bytes_field(1, type_meta) + bytes_field(2, message)


def test_protobuf_bodies(server):
    queuing = bytes_field(2, bytes_field(1, b"Queue") + bytes_field(2, varint_field(1, 16)))
    spec = bytes_field(1, b"Limited") + bytes_field(2, varint_field(1, 0) + queuing)
    body = proto_object("PriorityLevelConfiguration", bytes_field(1, bytes_field(1, b"pl-proto")) +
                        bytes_field(2, spec))
    resp = server.request("POST", PL, body, {"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert resp.status == 201, resp.body
    assert resp.json()["spec"]["limited"] == {"nominalConcurrencyShares": 0, "lendablePercent": 0, "limitResponse": {
        "type": "Queue", "queuing": {"queues": 16, "handSize": 8, "queueLengthLimit": 50}}}
    subject = bytes_field(1, b"ServiceAccount") + bytes_field(4, bytes_field(1, b"ns-a") + bytes_field(2, b"*"))
    rule = bytes_field(1, subject) + bytes_field(3, bytes_field(1, b"get") + bytes_field(6, b"/metrics"))
    spec = bytes_field(1, bytes_field(1, b"pl-proto")) + varint_field(2, 42) + \
        bytes_field(3, bytes_field(1, b"ByNamespace")) + bytes_field(4, rule)
    body = proto_object("FlowSchema", bytes_field(1, bytes_field(1, b"fs-proto")) + bytes_field(2, spec))
    resp = server.request("POST", FS, body, {"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert resp.status == 201, resp.body
    assert resp.json()["spec"] == {"priorityLevelConfiguration": {"name": "pl-proto"}, "matchingPrecedence": 42,
                                   "distinguisherMethod": {"type": "ByNamespace"}, "rules": [{
                                       "subjects": [{"kind": "ServiceAccount", "serviceAccount": {
                                           "namespace": "ns-a", "name": "*"}}],
                                       "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics"]}]}]}


# ---- status subresources ----

DANGLING = {"type": "Dangling", "status": "False", "lastTransitionTime": "2025-01-01T00:00:00Z",
            "reason": "Found", "message": "This FlowSchema references the PriorityLevelConfiguration object named "
                                          "\"global-default\" and it exists"}


def test_status_subresource_writes_only_status(server):
    obj = created(server, FS, fs("fs-status"))
    changed = copy.deepcopy(obj)
    changed["spec"]["matchingPrecedence"] = 5000
    changed["metadata"]["labels"] = {"team": "a"}
    changed["status"] = {"conditions": [DANGLING]}
    out = put(server, f"{FS}/fs-status/status", changed)
    assert out["status"] == {"conditions": [DANGLING]}
    assert out["spec"] == obj["spec"] and "labels" not in out["metadata"] and out["metadata"]["generation"] == 1
    table = server.request("GET", f"{FS}/fs-status", headers={"Accept": TABLE}).json()
    assert table["rows"][0]["cells"][5] == "False"
    out["spec"]["matchingPrecedence"] = 5000
    out["status"] = {}
    main = put(server, f"{FS}/fs-status", out)
    assert main["status"] == {"conditions": [DANGLING]} and main["metadata"]["generation"] == 2
    again = put(server, f"{FS}/fs-status", main)
    assert again["metadata"]["generation"] == 2
    created_status = created(server, PL, {**pl("pl-status", **limited()), "status": {"conditions": [DANGLING]}})
    assert created_status["status"] == {}


def test_status_validation(server):
    obj = created(server, PL, pl("pl-status-bad", **limited()))
    obj["status"] = {"conditions": [{"type": "", "status": "True"}, {"type": "A"}, {"type": "A"}]}
    status = invalid(server, "PUT", f"{PL}/pl-status-bad/status", obj)
    assert causes(status) == [("status.conditions[0].type", "FieldValueRequired", "Required value: must not be empty"),
                              ("status.conditions[2].type", "FieldValueDuplicate", 'Duplicate value: "A"')]


# ---- the mandatory objects ----

def test_mandatory_priority_levels_are_fixed(server):
    catch_all = server.request("GET", f"{PL}/catch-all").json()
    catch_all["spec"]["limited"]["nominalConcurrencyShares"] = 6
    status = invalid(server, "PUT", f"{PL}/catch-all", catch_all)
    assert status["message"] == (
        'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "catch-all" is invalid: spec: Invalid value: '
        '{"Type":"Limited","Limited":{"NominalConcurrencyShares":6,"LimitResponse":{"Type":"Reject","Queuing":null},'
        '"LendablePercent":0,"BorrowingLimitPercent":null},"Exempt":null}: spec of \'catch-all\' must equal the '
        'fixed value')
    exempt = server.request("GET", f"{PL}/exempt").json()
    exempt["spec"]["limited"] = {"limitResponse": {"type": "Reject"}}
    assert causes(invalid(server, "PUT", f"{PL}/exempt", exempt)) == [
        ("spec.limited", "FieldValueForbidden", "Forbidden: must be nil if the type is not Limited"),
        ("spec", "FieldValueInvalid",
         'Invalid value: {"Type":"Exempt","Limited":{"NominalConcurrencyShares":30,"LimitResponse":{"Type":"Reject",'
         '"Queuing":null},"LendablePercent":0,"BorrowingLimitPercent":null},"Exempt":{"NominalConcurrencyShares":0,'
         '"LendablePercent":0}}: spec of \'exempt\' except the \'spec.exempt\' field must equal the fixed value')]


def test_exempt_level_may_change_its_exempt_section(server):
    exempt = server.request("GET", f"{PL}/exempt").json()
    exempt["spec"]["exempt"] = {"nominalConcurrencyShares": 10}
    out = put(server, f"{PL}/exempt", exempt)
    assert out["spec"]["exempt"] == {"nominalConcurrencyShares": 10, "lendablePercent": 0}
    assert out["metadata"]["generation"] == 2
    out["spec"]["exempt"] = {"nominalConcurrencyShares": 0, "lendablePercent": 0}
    put(server, f"{PL}/exempt", out)


def test_mandatory_flow_schemas_are_fixed(server):
    catch_all = server.request("GET", f"{FS}/catch-all").json()
    catch_all["spec"]["matchingPrecedence"] = 9999
    status = invalid(server, "PUT", f"{FS}/catch-all", catch_all)
    subjects = ('{"Kind":"Group","User":null,"Group":{"Name":"system:unauthenticated"},"ServiceAccount":null},'
                '{"Kind":"Group","User":null,"Group":{"Name":"system:authenticated"},"ServiceAccount":null}')
    assert causes(status) == [("spec", "FieldValueInvalid", (
        'Invalid value: {"PriorityLevelConfiguration":{"Name":"catch-all"},"MatchingPrecedence":9999,'
        '"DistinguisherMethod":{"Type":"ByUser"},"Rules":[{"Subjects":[' + subjects + '],"ResourceRules":[{'
        '"Verbs":["*"],"APIGroups":["*"],"Resources":["*"],"ClusterScope":true,"Namespaces":["*"]}],'
        '"NonResourceRules":[{"Verbs":["*"],"NonResourceURLs":["*"]}]}]}: spec of \'catch-all\' must equal the '
        "fixed value"))]
    exempt = server.request("GET", f"{FS}/exempt").json()
    exempt["metadata"]["labels"] = {"seen": "yes"}
    assert put(server, f"{FS}/exempt", exempt)["metadata"]["generation"] == 1  # only the spec is fixed


# ---- invalid objects ----

FS_CORPUS = [
    (fs("fs-prec-high", matchingPrecedence=10001), "spec.matchingPrecedence", "FieldValueInvalid",
     "Invalid value: 10001: must not be greater than 10000"),
    (fs("fs-prec-neg", matchingPrecedence=-5), "spec.matchingPrecedence", "FieldValueInvalid",
     "Invalid value: -5: must be a positive value"),
    (fs("fs-prec-one", matchingPrecedence=1), "spec.matchingPrecedence", "FieldValueInvalid",
     "Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"),
    (fs("fs-method", distinguisherMethod={"type": "ByGroup"}), "spec.distinguisherMethod.type",
     "FieldValueNotSupported", 'Unsupported value: {"Type":"ByGroup"}: supported values: "ByNamespace", "ByUser"'),
    (fs("fs-noplc", priorityLevelConfiguration={}), "spec.priorityLevelConfiguration.name", "FieldValueRequired",
     "Required value: must reference a priority level"),
    (fs("fs-badplc", priorityLevelConfiguration={"name": "Bad_Level"}), "spec.priorityLevelConfiguration.name",
     "FieldValueInvalid", f'Invalid value: "Bad_Level": {DNS_SUBDOMAIN}'),
    (fs("fs-nosubjects", {"subjects": [], **EVERYTHING}), "spec.rules[0].subjects", "FieldValueRequired",
     "Required value: subjects must contain at least one value"),
    (fs("fs-norules", {"subjects": [group("a")]}), "spec.rules[0]", "FieldValueRequired",
     "Required value: at least one of resourceRules and nonResourceRules has to be non-empty"),
    (fs("fs-kind", subject_rule({"kind": "Robot"})), "spec.rules[0].subjects[0].kind", "FieldValueNotSupported",
     'Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"'),
    (fs("fs-nouser", subject_rule({"kind": "User"})), "spec.rules[0].subjects[0].user", "FieldValueRequired",
     "Required value: user is required when subject kind is 'User'"),
    (fs("fs-username", subject_rule({"kind": "User", "user": {"name": ""}})), "spec.rules[0].subjects[0].user.name",
     "FieldValueRequired", "Required value"),
    (fs("fs-nogroup", subject_rule({"kind": "Group"})), "spec.rules[0].subjects[0].group", "FieldValueRequired",
     "Required value: group is required when subject kind is 'Group'"),
    (fs("fs-nosa", subject_rule({"kind": "ServiceAccount"})), "spec.rules[0].subjects[0].serviceAccount",
     "FieldValueRequired", "Required value: serviceAccount is required when subject kind is 'ServiceAccount'"),
    (fs("fs-sans", subject_rule({"kind": "ServiceAccount", "serviceAccount": {"name": "*"}})),
     "spec.rules[0].subjects[0].serviceAccount.namespace", "FieldValueRequired",
     "Required value: must specify namespace for service account"),
    (fs("fs-saname", subject_rule({"kind": "ServiceAccount", "serviceAccount": {"namespace": "a", "name": "Bad!"}})),
     "spec.rules[0].subjects[0].serviceAccount.name", "FieldValueInvalid", f'Invalid value: "Bad!": {DNS_SUBDOMAIN}'),
    (fs("fs-sa-ns", subject_rule({"kind": "ServiceAccount", "serviceAccount": {"namespace": "A", "name": "*"}})),
     "spec.rules[0].subjects[0].serviceAccount.namespace", "FieldValueInvalid", f'Invalid value: "A": {DNS_LABEL}'),
    (fs("fs-user-sa", subject_rule({"kind": "User", "user": {"name": "u"}, "serviceAccount": {"name": "x"}})),
     "spec.rules[0].subjects[0].serviceAccount", "FieldValueForbidden",
     "Forbidden: serviceAccount is forbidden when subject kind is not 'ServiceAccount'"),
    (fs("fs-noverbs", resource_rule(verbs=[])), "spec.rules[0].resourceRules[0].verbs", "FieldValueRequired",
     "Required value: verbs must contain at least one value"),
    (fs("fs-starverbs", resource_rule(verbs=["*", "get"])), "spec.rules[0].resourceRules[0].verbs",
     "FieldValueInvalid", "Invalid value: [\"*\",\"get\"]: if '*' is present, must not specify other verbs"),
    (fs("fs-badverb", resource_rule(verbs=["get", "fly"])), "spec.rules[0].resourceRules[0].verbs",
     "FieldValueNotSupported", f'Unsupported value: ["get","fly"]: supported values: {VERBS}'),
    (fs("fs-nogroups", resource_rule(apiGroups=[])), "spec.rules[0].resourceRules[0].apiGroups",
     "FieldValueRequired", "Required value: resource rules must supply at least one api group"),
    (fs("fs-stargroups", resource_rule(apiGroups=["apps", "*"])), "spec.rules[0].resourceRules[0].apiGroups",
     "FieldValueInvalid", "Invalid value: [\"apps\",\"*\"]: if '*' is present, must not specify other api groups"),
    (fs("fs-noresources", resource_rule(resources=[])), "spec.rules[0].resourceRules[0].resources",
     "FieldValueRequired", "Required value: resource rules must supply at least one resource"),
    (fs("fs-starres", resource_rule(resources=["*", "pods"])), "spec.rules[0].resourceRules[0].resources",
     "FieldValueInvalid", "Invalid value: [\"*\",\"pods\"]: if '*' is present, must not specify other resources"),
    (fs("fs-nons", resource_rule(namespaces=[])), "spec.rules[0].resourceRules[0].namespaces", "FieldValueRequired",
     "Required value: resource rules that are not cluster scoped must supply at least one namespace"),
    (fs("fs-starns", resource_rule(namespaces=["*", "default"])), "spec.rules[0].resourceRules[0].namespaces",
     "FieldValueInvalid", "Invalid value: [\"*\",\"default\"]: if '*' is present, must not specify other namespaces"),
    (fs("fs-badns", resource_rule(namespaces=["Default"])), "spec.rules[0].resourceRules[0].namespaces[0]",
     "FieldValueInvalid", f"Invalid value: \"Default\": each member of this list must be '*' or a DNS-1123 label; "
                          f"{DNS_LABEL}"),
    (fs("fs-nourls", url_rule(["get"], [])), "spec.rules[0].nonResourceRules[0].nonResourceURLs",
     "FieldValueRequired", "Required value: nonResourceURLs must contain at least one value"),
    (fs("fs-starurls", url_rule(["get"], ["*", "/x"])), "spec.rules[0].nonResourceRules[0].nonResourceURLs",
     "FieldValueInvalid", "Invalid value: [\"*\",\"/x\"]: if '*' is present, must not specify other non-resource URLs"),
    (fs("fs-nourlverbs", url_rule([], ["/x"])), "spec.rules[0].nonResourceRules[0].verbs", "FieldValueRequired",
     "Required value: verbs must contain at least one value"),
    (fs("fs-emptyurl", url_rule(["get"], [""])), "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]",
     "FieldValueInvalid", 'Invalid value: "": must not be empty'),
    (fs("fs-relurl", url_rule(["get"], ["healthz"])), "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]",
     "FieldValueInvalid", 'Invalid value: "healthz": must start with slash'),
    (fs("fs-spaceurl", url_rule(["get"], ["/a b"])), "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]",
     "FieldValueInvalid", 'Invalid value: "/a b": must not contain white-space'),
    (fs("fs-slashurl", url_rule(["get"], ["/a//b"])), "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]",
     "FieldValueInvalid", 'Invalid value: "/a//b": must not contain double slash'),
    (fs("fs-globurl", url_rule(["get"], ["/healthz/*/x"])), "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]",
     "FieldValueInvalid", 'Invalid value: "/healthz/*/x": wildcard can only do suffix matching'),
    (fs("Bad_Schema"), "metadata.name", "FieldValueInvalid", f'Invalid value: "Bad_Schema": {DNS_SUBDOMAIN}'),
]


@pytest.mark.parametrize(("body", "field", "reason", "message"), FS_CORPUS,
                         ids=[c[0]["metadata"]["name"] for c in FS_CORPUS])
def test_invalid_flow_schema(server, body, field, reason, message):
    status = invalid(server, "POST", FS, body)
    assert causes(status) == [(field, reason, message)]
    assert status["message"] == (f'FlowSchema.flowcontrol.apiserver.k8s.io "{body["metadata"]["name"]}" is invalid: '
                                 f"{field}: {message}")


PL_CORPUS = [
    (pl("pl-notype"), "spec.type", "FieldValueNotSupported", 'Unsupported value: "": supported values: "Exempt", '
                                                             '"Limited"'),
    (pl("pl-exempt", type="Exempt"), "spec.type", "FieldValueInvalid",
     "Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'"),
    (pl("pl-nolimited", type="Limited"), "spec.limited", "FieldValueRequired",
     "Required value: must not be empty when type is Limited"),
    (pl("pl-both", **limited(), exempt={}), "spec.exempt", "FieldValueForbidden",
     "Forbidden: must be nil if the type is Limited"),
    (pl("pl-shares", **limited(nominalConcurrencyShares=-1)), "spec.limited.nominalConcurrencyShares",
     "FieldValueInvalid", "Invalid value: -1: must be a non-negative integer"),
    (pl("pl-lend", **limited(lendablePercent=101)), "spec.limited.lendablePercent", "FieldValueInvalid",
     "Invalid value: 101: must be between 0 and 100, inclusive"),
    (pl("pl-borrow", **limited(borrowingLimitPercent=-1)), "spec.limited.borrowingLimitPercent", "FieldValueInvalid",
     "Invalid value: -1: if specified, must be a non-negative integer"),
    (pl("pl-response", **limited(limitResponse={"type": "Drop"})), "spec.limited.limitResponse.type",
     "FieldValueNotSupported", 'Unsupported value: "Drop": supported values: "Queue", "Reject"'),
    (pl("pl-reject-q", **limited(limitResponse={"type": "Reject", "queuing": {}})),
     "spec.limited.limitResponse.queuing", "FieldValueForbidden",
     "Forbidden: must be nil if limited.limitResponse.type is not Limited"),
    (pl("pl-queue-noq", **limited(limitResponse={"type": "Queue"})), "spec.limited.limitResponse.queuing",
     "FieldValueRequired", "Required value: must not be empty if limited.limitResponse.type is Limited"),
    (pl("pl-hand", **queued(queues=4, handSize=5)), "spec.limited.limitResponse.queuing.handSize",
     "FieldValueInvalid", "Invalid value: 5: should not be greater than queues (4)"),
    (pl("pl-entropy", **queued(queues=128, handSize=9)), "spec.limited.limitResponse.queuing.handSize",
     "FieldValueInvalid",
     "Invalid value: 9: required entropy bits of deckSize 128 and handSize 9 should not be greater than 60"),
    (pl("pl-length", **queued(queueLengthLimit=-1)), "spec.limited.limitResponse.queuing.queueLengthLimit",
     "FieldValueInvalid", "Invalid value: -1: must be positive"),
    ({**pl("pl-annotated", **limited()), "metadata": {"name": "pl-annotated", "annotations": {
        "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares": ""}}}, "metadata.annotations",
     "FieldValueForbidden",
     "Forbidden: annotation 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares' is forbidden"),
]


@pytest.mark.parametrize(("body", "field", "reason", "message"), PL_CORPUS,
                         ids=[c[0]["metadata"]["name"] for c in PL_CORPUS])
def test_invalid_priority_level(server, body, field, reason, message):
    status = invalid(server, "POST", PL, body)
    assert causes(status) == [(field, reason, message)]
    kind = "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io"
    assert status["message"] == f'{kind} "{body["metadata"]["name"]}" is invalid: {field}: {message}'


def test_invalid_objects_report_every_error(server):
    big = invalid(server, "POST", PL, pl("pl-big", **queued(queues=10000001)))
    assert causes(big) == [
        ("spec.limited.limitResponse.queuing.queues", "FieldValueInvalid",
         "Invalid value: 10000001: must not be greater than 10000000"),
        ("spec.limited.limitResponse.queuing.handSize", "FieldValueInvalid",
         "Invalid value: 8: required entropy bits of deckSize 10000001 and handSize 8 should not be greater than 60")]
    negative = invalid(server, "POST", PL, pl("pl-queues", **queued(queues=-2, handSize=1)))
    assert causes(negative) == [
        ("spec.limited.limitResponse.queuing.queues", "FieldValueInvalid", "Invalid value: -2: must be positive"),
        ("spec.limited.limitResponse.queuing.handSize", "FieldValueInvalid",
         "Invalid value: 1: should not be greater than queues (-2)")]
    mixed = invalid(server, "POST", FS, fs("fs-many", subject_rule({"kind": "Group", "user": {"name": "u"}})))
    assert causes(mixed) == [
        ("spec.rules[0].subjects[0].group", "FieldValueRequired",
         "Required value: group is required when subject kind is 'Group'"),
        ("spec.rules[0].subjects[0].user", "FieldValueForbidden",
         "Forbidden: user is forbidden when subject kind is not 'User'")]


# ---- the ensurer at start ----

def test_ensurer_restores_configuration_at_start(tmp_path):
    first = Server(str(tmp_path)).start()
    try:
        assert first.request("DELETE", f"{PL}/catch-all").status == 200
        assert first.request("DELETE", f"{FS}/probes").status == 200
        low = first.request("GET", f"{PL}/workload-low").json()
        low["spec"]["limited"]["nominalConcurrencyShares"] = 7
        put(first, f"{PL}/workload-low", low)
        kept = first.request("GET", f"{PL}/global-default").json()
        kept["metadata"]["annotations"][AUTO] = "false"
        kept["spec"]["limited"]["nominalConcurrencyShares"] = 9
        put(first, f"{PL}/global-default", kept)
        exempt = first.request("GET", f"{PL}/exempt").json()
        exempt["spec"]["exempt"]["nominalConcurrencyShares"] = 5
        put(first, f"{PL}/exempt", exempt)
        catch_all = first.request("GET", f"{FS}/catch-all").json()
        catch_all["metadata"]["annotations"][AUTO] = "false"
        put(first, f"{FS}/catch-all", catch_all)
        created(first, PL, {**pl("retired", **limited()), "metadata": {"name": "retired",
                                                                       "annotations": {AUTO: "true"}}})
        created(first, PL, pl("mine", **limited()))
    finally:
        first.stop()
    server = Server(str(tmp_path)).start()
    try:
        levels = {i["metadata"]["name"]: i for i in server.request("GET", PL).json()["items"]}
        schemas = {i["metadata"]["name"]: i for i in server.request("GET", FS).json()["items"]}
    finally:
        server.stop()
    assert levels["catch-all"]["spec"]["limited"]["nominalConcurrencyShares"] == 5  # mandatory: recreated
    assert schemas["probes"]["spec"]["matchingPrecedence"] == 2  # suggested: recreated
    assert levels["workload-low"]["spec"]["limited"]["nominalConcurrencyShares"] == 100  # auto-updated
    assert levels["workload-low"]["metadata"]["generation"] == 3
    assert levels["global-default"]["spec"]["limited"]["nominalConcurrencyShares"] == 9  # the operator's
    assert levels["exempt"]["spec"]["exempt"]["nominalConcurrencyShares"] == 5
    assert schemas["catch-all"]["metadata"]["annotations"][AUTO] == "true"
    assert "retired" not in levels and "mine" in levels
