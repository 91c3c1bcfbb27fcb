"""Go's type errors derived from the schemas: wrong JSON kinds are found, valid bodies pass."""

from __future__ import annotations

import pytest

from kube_apiserver.api import schemas
from kube_apiserver.apimachinery import schematypes
from kube_apiserver.apimachinery.openapischema import SchemaSource

SOURCE = SchemaSource(schemas.definitions, schemas.schema_name)
CM = SOURCE.for_kind("", "v1", "ConfigMap")
POD = SOURCE.for_kind("", "v1", "Pod")
DEPLOY = SOURCE.for_kind("apps", "v1", "Deployment")
PREFIX = "json: cannot unmarshal "


@pytest.mark.parametrize(("root", "obj", "message"), [
    (CM, {"data": 5}, "number into Go struct field ConfigMap.data of type map[string]string"),
    (CM, {"data": {"k": 5}}, "number into Go struct field ConfigMap.data of type string"),
    (CM, {"metadata": {"labels": 5}}, "number into Go struct field ObjectMeta.metadata.labels of type map[string]string"),
    (CM, {"metadata": {"finalizers": "x"}}, "string into Go struct field ObjectMeta.metadata.finalizers of type []string"),
    (POD, {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}},
     "string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32"),
    (POD, {"spec": {"containers": [{"name": "c", "resources": {"limits": "x"}}]}},
     "string into Go struct field ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList"),
    (DEPLOY, {"spec": {"replicas": 1.5}}, "number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"),
    (DEPLOY, {"spec": {"paused": "yes"}}, "string into Go struct field DeploymentSpec.spec.paused of type bool"),
])
def test_wrong_types(root, obj, message):
    assert schematypes.check(obj, root) == PREFIX + message


@pytest.mark.parametrize(("root", "obj"), [
    (POD, {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}}]}}),
    (DEPLOY, {"spec": {"strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}}}),
    (CM, {"metadata": {"managedFields": [{"fieldsV1": {"f:data": {}}}], "labels": None}, "data": None}),
])
def test_valid_bodies_pass(root, obj):
    assert schematypes.check(obj, root) is None


# ---- Go's typed decoding (issue 9): nulls are zero values, []byte is Go's base64, int-or-string is refused ----

SECRET = SOURCE.for_kind("", "v1", "Secret")
NODE = SOURCE.for_kind("", "v1", "Node")
PRIORITY_CLASS = SOURCE.for_kind("scheduling.k8s.io", "v1", "PriorityClass")
SERVICE_CIDR = SOURCE.for_kind("networking.k8s.io", "v1", "ServiceCIDR")
PDB = SOURCE.for_kind("policy", "v1", "PodDisruptionBudget")
INGRESS = SOURCE.for_kind("networking.k8s.io", "v1", "Ingress")


@pytest.mark.parametrize(("root", "obj", "decoded"), [
    (CM, {"metadata": {"labels": {"a": None}}}, {"metadata": {"labels": {"a": ""}}}),
    (NODE, {"spec": None}, {}),
    (PRIORITY_CLASS, {"value": None, "description": None}, {"value": 0}),
    (SERVICE_CIDR, {"spec": {"cidrs": [None]}}, {"spec": {"cidrs": [""]}}),
    (POD, {"spec": {"containers": [None], "nodeSelector": {"a": None}}},
     {"spec": {"containers": [{}], "nodeSelector": {"a": ""}}}),
    (POD, {"spec": {"containers": [{"resources": {"limits": {"cpu": None}}}]}},
     {"spec": {"containers": [{"resources": {"limits": {"cpu": "0"}}}]}}),
    (CM, {"binaryData": {"a": "YWJj\r\nZGVm", "b": None}}, {"binaryData": {"a": "YWJjZGVm", "b": None}}),
    (SECRET, {"data": {"a": "YW\nJj"}}, {"data": {"a": "YWJj"}}),
    (DEPLOY, {"spec": {"replicas": 2.0}}, {"spec": {"replicas": 2}}),
    # A required field that is a Go pointer stays nil (validation then says it is required); a scalar
    # without omitempty is written back as its zero value, required or not.
    (INGRESS, {"spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": None}]}}]}},
     {"spec": {"rules": [{"http": {"paths": [{"path": "/"}]}}]}}),
    (DEPLOY, {"spec": {"template": {"spec": {"containers": [{"name": None, "image": None}]}}}},
     {"spec": {"template": {"spec": {"containers": [{"name": ""}]}}}}),
])
def test_decode_gives_what_go_decodes(root, obj, decoded):
    assert schematypes.decode(obj, root) is None
    assert obj == decoded


SERVICE = SOURCE.for_kind("", "v1", "Service")


@pytest.mark.parametrize(("root", "obj", "decoded"), [
    # omitempty, not a pointer: a zero value is forgotten by the struct
    (PRIORITY_CLASS, {"value": 0, "globalDefault": False, "description": ""}, {"value": 0}),
    (SERVICE, {"spec": {"externalName": "", "publishNotReadyAddresses": False, "healthCheckNodePort": 0,
                        "ports": [{"port": 80, "nodePort": 0, "name": ""}]}},
     {"spec": {"ports": [{"port": 80}]}}),
    (CM, {"metadata": {"name": "c", "generateName": "", "generation": 0}}, {"metadata": {"name": "c"}}),
    # a decoded [] or {} is an empty, non-nil slice or map in Go's memory: kept as sent
    (CM, {"metadata": {"name": "c", "finalizers": [], "labels": {}}, "data": {}},
     {"metadata": {"name": "c", "finalizers": [], "labels": {}}, "data": {}}),
    # kept: pointers (ConfigMap immutable, Deployment replicas), fields without omitempty (containers,
    # a container's name), structs (omitempty never leaves one out) and int-or-string (a struct)
    (CM, {"immutable": False}, {"immutable": False}),
    (DEPLOY, {"spec": {"replicas": 0, "template": {"spec": {"containers": [], "securityContext": {}}}}},
     {"spec": {"replicas": 0, "template": {"spec": {"containers": [], "securityContext": {}}}}}),
    (POD, {"spec": {"containers": [{"name": "", "ports": [{"containerPort": 0}]}]}},
     {"spec": {"containers": [{"name": "", "ports": [{"containerPort": 0}]}]}}),
    (SERVICE, {"spec": {"ports": [{"port": 80, "targetPort": 0}]}}, {"spec": {"ports": [{"port": 80, "targetPort": 0}]}}),
])
def test_zero_values_go_leaves_out_are_removed(root, obj, decoded):
    assert schematypes.decode(obj, root) is None
    assert obj == decoded


def test_check_leaves_the_object_as_sent():
    obj = {"metadata": {"labels": {"a": None}}, "binaryData": {"a": "YW\nJj"}}
    assert schematypes.check(obj, CM) is None
    assert obj == {"metadata": {"labels": {"a": None}}, "binaryData": {"a": "YW\nJj"}}


@pytest.mark.parametrize(("root", "obj", "message"), [
    (CM, {"binaryData": {"a": "!!!"}}, "illegal base64 data at input byte 0"),
    (SECRET, {"data": {"a": "YWJj", "b": "YW=j"}}, "illegal base64 data at input byte 2"),
    (SECRET, {"data": {"a": 5}}, PREFIX + "number into Go struct field Secret.data of type []uint8"),
    (PDB, {"spec": {"minAvailable": [1]}},
     PREFIX + "array into Go struct field PodDisruptionBudgetSpec.spec.minAvailable of type int32"),
    (PDB, {"spec": {"maxUnavailable": True}},
     PREFIX + "bool into Go struct field PodDisruptionBudgetSpec.spec.maxUnavailable of type int32"),
    (PDB, {"spec": {"minAvailable": 1.5}},
     PREFIX + "number 1.5 into Go struct field PodDisruptionBudgetSpec.spec.minAvailable of type int32"),
    (POD, {"spec": {"containers": [{"resources": {"limits": {"cpu": [1]}}}]}},
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    (PRIORITY_CLASS, {"value": 2**31}, PREFIX + "number 2147483648 into Go struct field PriorityClass.value of type int32"),
])
def test_decode_errors_are_gos(root, obj, message):
    assert schematypes.decode(obj, root) == message
