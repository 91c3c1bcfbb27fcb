"""PodSpec defaulting as Kubernetes v1.34 does it (SetObjectDefaults_Pod / SetObjectDefaults_PodTemplate)."""

from __future__ import annotations

import pytest

from kube_apiserver.api.core.podspec import (
    compute_qos,
    default_pod,
    default_pod_spec,
    default_pod_template_spec,
)
from kube_apiserver.api.core.podspec.images import image_tag
from kube_apiserver.apimachinery import quantity


def pod(*containers: dict, **spec) -> dict:
    return {"spec": {"containers": list(containers), **spec}}


def test_pod_spec_and_container_defaults():
    obj = pod({"name": "c", "image": "nginx"})
    default_pod(obj)
    assert obj["spec"] == {
        "containers": [{"name": "c", "image": "nginx", "resources": {}, "imagePullPolicy": "Always",
                        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "enableServiceLinks": True, "securityContext": {},
        "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler"}


@pytest.mark.parametrize(("image", "policy"), [
    ("nginx", "Always"), ("nginx:latest", "Always"), ("nginx:1.27", "IfNotPresent"),
    ("registry.k8s.io/pause:3.10", "IfNotPresent"), ("localhost:5000/app", "Always"),
    ("nginx@sha256:" + "a" * 64, "IfNotPresent"), ("Nginx", "IfNotPresent"),
])
def test_image_pull_policy_by_tag(image, policy):
    obj = pod({"name": "c", "image": image})
    default_pod(obj)
    assert obj["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_explicit_values_are_kept():
    obj = pod({"name": "c", "image": "nginx", "imagePullPolicy": "Never"}, restartPolicy="Never",
              terminationGracePeriodSeconds=0, enableServiceLinks=False, dnsPolicy="Default")
    default_pod(obj)
    spec = obj["spec"]
    assert (spec["restartPolicy"], spec["terminationGracePeriodSeconds"], spec["enableServiceLinks"],
            spec["dnsPolicy"], spec["containers"][0]["imagePullPolicy"]) == ("Never", 0, False, "Default", "Never")


def test_requests_default_to_limits_for_pods_only():
    container = {"name": "c", "image": "x", "resources": {"limits": {"cpu": "500m", "memory": "1Gi"},
                                                          "requests": {"cpu": "100m"}}}
    obj = pod(dict(container))
    default_pod(obj)
    assert obj["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "100m", "memory": "1Gi"}
    template = {"spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"cpu": "1"}}}]}}
    default_pod_template_spec(template)
    assert "requests" not in template["spec"]["containers"][0]["resources"]


def test_quantities_round_up_to_milli_and_canonicalize():
    obj = pod({"name": "c", "image": "x", "resources": {"limits": {"cpu": "0.0001", "memory": "1000m"}}})
    default_pod(obj)
    assert obj["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "1m", "memory": "1"}
    with pytest.raises(quantity.QuantityError):
        default_pod(pod({"name": "c", "image": "x", "resources": {"limits": {"cpu": "lots"}}}))


def test_ports_probes_and_hooks():
    probe = {"httpGet": {"port": 80}}
    container = {"name": "c", "image": "x", "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
                 "livenessProbe": probe, "readinessProbe": {"grpc": {"port": 9000}},
                 "lifecycle": {"preStop": {"httpGet": {"port": 8080}}},
                 "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}
    obj = pod(container)
    default_pod(obj)
    c = obj["spec"]["containers"][0]
    assert [p["protocol"] for p in c["ports"]] == ["TCP", "UDP"]
    assert c["livenessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                                  "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert c["readinessProbe"]["grpc"] == {"port": 9000, "service": ""}
    assert c["lifecycle"]["preStop"]["httpGet"] == {"port": 8080, "path": "/", "scheme": "HTTP"}
    assert c["env"][0]["valueFrom"]["fieldRef"] == {"fieldPath": "spec.nodeName", "apiVersion": "v1"}


def test_host_network_defaults_host_ports():
    obj = pod({"name": "c", "image": "x", "ports": [{"containerPort": 8080}]}, hostNetwork=True)
    default_pod(obj)
    assert obj["spec"]["containers"][0]["ports"][0]["hostPort"] == 8080


def test_volume_source_defaults():
    spec = {"containers": [], "volumes": [
        {"name": "empty"},
        {"name": "host", "hostPath": {"path": "/data"}},
        {"name": "secret", "secret": {"secretName": "s"}},
        {"name": "config", "configMap": {"name": "c", "defaultMode": 256}},
        {"name": "down", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
        {"name": "proj", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
        {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
    ]}
    default_pod_spec(spec)
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["empty"] == {"name": "empty", "emptyDir": {}}
    assert volumes["host"]["hostPath"] == {"path": "/data", "type": ""}
    assert volumes["secret"]["secret"]["defaultMode"] == 420
    assert volumes["config"]["configMap"]["defaultMode"] == 256
    assert volumes["down"]["downwardAPI"] == {"items": [{"path": "labels", "fieldRef": {
        "fieldPath": "metadata.labels", "apiVersion": "v1"}}], "defaultMode": 420}
    assert volumes["proj"]["projected"] == {"sources": [{"serviceAccountToken": {"path": "token",
                                                                                 "expirationSeconds": 3600}}],
                                            "defaultMode": 420}
    assert volumes["eph"]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"] == "Filesystem"


def test_ephemeral_container_common_is_inlined():
    spec = {"containers": [], "ephemeralContainers": [
        {"ephemeralContainerCommon": {"name": "debug", "image": "busybox"}, "targetContainerName": "c"}]}
    default_pod_spec(spec)
    assert spec["ephemeralContainers"][0]["name"] == "debug"
    assert spec["ephemeralContainers"][0]["imagePullPolicy"] == "Always"
    assert "ephemeralContainerCommon" not in spec["ephemeralContainers"][0]


def test_image_tag():
    assert image_tag("docker.io/library/nginx:1.27@sha256:" + "b" * 64) == "1.27"
    assert image_tag("nginx@sha256:" + "b" * 64) == ""


@pytest.mark.parametrize(("resources", "qos"), [
    ([{}], "BestEffort"),
    ([{"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}}], "Guaranteed"),
    ([{"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}], "Burstable"),
    ([{"requests": {"memory": "1Gi"}}, {}], "Burstable"),
    ([{"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}}], "Burstable"),
])
def test_qos_class(resources, qos):
    spec = {"containers": [{"name": f"c{i}", "image": "x", "resources": r} for i, r in enumerate(resources)]}
    assert compute_qos(spec) == qos
