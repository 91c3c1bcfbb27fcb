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
