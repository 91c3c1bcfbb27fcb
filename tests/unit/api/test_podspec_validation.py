"""ValidatePodSpec / ValidatePodTemplateSpec: the rules users hit most, with Kubernetes' exact paths and
messages."""

from __future__ import annotations

import pytest

from kube_apiserver.api.core.podspec import (
    PodValidationOptions,
    default_pod,
    default_pod_template_spec,
    validate_pod_spec,
    validate_pod_template_spec,
)
from kube_apiserver.apimachinery.field import Path

POD = PodValidationOptions(resource_is_pod=True)
DNS_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def errors_of(container: dict | None = None, **spec) -> list[str]:
    obj = {"spec": {"containers": [{"name": "c", "image": "nginx", **(container or {})}], **spec}}
    default_pod(obj)
    return [str(e) for e in validate_pod_spec(obj["spec"], Path("spec"), POD, "web")]


def test_a_defaulted_pod_is_valid():
    assert errors_of() == []


CASES = [
    ({"name": "Web_1"}, {}, [f'spec.containers[0].name: Invalid value: "Web_1": {DNS_LABEL}']),
    ({"name": ""}, {}, ["spec.containers[0].name: Required value"]),
    ({"image": ""}, {}, ["spec.containers[0].image: Required value"]),
    ({}, {"initContainers": [{"name": "c", "image": "busybox"}]},
     ['spec.initContainers[0].name: Duplicate value: "c"']),
    ({"ports": [{"containerPort": 70000}]}, {},
     ["spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"]),
    ({"ports": [{"containerPort": 80, "name": "web"}, {"containerPort": 81, "name": "web"}]}, {},
     ['spec.containers[0].ports[1].name: Duplicate value: "web"']),
    ({"ports": [{"containerPort": 80, "protocol": "HTTP"}]}, {},
     ['spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"']),
    ({"env": [{"name": "A=B"}]}, {},
     ['spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must consist only '
      "of printable ASCII characters other than '='"]),
    ({"env": [{"name": "X", "value": "1", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}, {},
     ['spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty']),
    ({"env": [{"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.host.name"}}}]}, {},
     ['spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Invalid value: "spec.host.name": error converting '
      "fieldPath: field label not supported: spec.host.name"]),
    ({"volumeMounts": [{"name": "data", "mountPath": "/data"}]}, {},
     ['spec.containers[0].volumeMounts[0].name: Not found: "data"']),
    ({"imagePullPolicy": "Sometimes"}, {},
     ['spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", '
      '"IfNotPresent", "Never"']),
    ({"resources": {"limits": {"cpu": "500m"}, "requests": {"cpu": "1"}}}, {},
     ['spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 500m']),
    ({"resources": {"requests": {"example.com/gpu": "1"}}}, {},
     ["spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"]),
    ({"resources": {"limits": {"memory": "-1"}}}, {},
     ['spec.containers[0].resources.limits[memory]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0']),
    ({"livenessProbe": {"exec": {"command": ["true"]}, "successThreshold": 2}}, {},
     ["spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"]),
    ({"readinessProbe": {"periodSeconds": 5}}, {},
     ["spec.containers[0].readinessProbe: Required value: must specify a handler type"]),
    ({"livenessProbe": {"exec": {"command": ["a"]}, "tcpSocket": {"port": 80}}}, {},
     ["spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type"]),
    ({"securityContext": {"privileged": True}}, {},
     ["spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy"]),
    ({"securityContext": {"runAsUser": -1}}, {},
     ["spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, "
      "inclusive"]),
    ({}, {"restartPolicy": "Sometimes"},
     ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']),
    ({}, {"dnsPolicy": "Google"},
     ['spec.dnsPolicy: Unsupported value: "Google": supported values: "ClusterFirstWithHostNet", "ClusterFirst", '
      '"Default", "None"']),
    ({}, {"dnsPolicy": "None"}, ["spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"]),
    ({}, {"serviceAccountName": "Bad_SA"}, [f'spec.serviceAccountName: Invalid value: "Bad_SA": {DNS_SUBDOMAIN}']),
    ({}, {"volumes": [{"name": "v", "emptyDir": {}, "hostPath": {"path": "/x"}}]},
     ["spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type"]),
    ({}, {"volumes": [{"name": "v"}, {"name": "v"}]}, ['spec.volumes[1].name: Duplicate value: "v"']),
    ({}, {"volumes": [{"name": "s", "secret": {"defaultMode": 1000}}]},
     ["spec.volumes[0].secret.secretName: Required value",
      "spec.volumes[0].secret.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both "
      "inclusive"]),
    ({}, {"volumes": [{"name": "h", "hostPath": {"path": "/x", "type": "Dir"}}]},
     ['spec.volumes[0].hostPath.type: Unsupported value: "Dir": supported values: "", "BlockDevice", "CharDevice", '
      '"Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"']),
    ({}, {"tolerations": [{"operator": "Equal", "value": "x"}]},
     ['spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which '
      'means "match all values and all keys"']),
    ({}, {"tolerations": [{"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5}]},
     ["spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
      "`tolerationSeconds` is set"]),
    ({}, {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]}}}},
     ["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
      ".matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"]),
    ({}, {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
        "weight": 101, "podAffinityTerm": {"topologyKey": "zone"}}]}}},
     ["spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: "
      "101: must be in the range 1-100"]),
    ({}, {"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}]},
     ["spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
      'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: '
      '"DoNotSchedule", "ScheduleAnyway"']),
    ({}, {"activeDeadlineSeconds": 0},
     ["spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"]),
    ({"ports": [{"containerPort": 80, "hostPort": 8080}]}, {"hostNetwork": True},
     ["spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is "
      "true"]),
]


@pytest.mark.parametrize(("container", "spec", "expected"), CASES)
def test_invalid_specs(container, spec, expected):
    assert errors_of(container, **spec) == expected


def test_containers_are_required():
    spec = {"containers": []}
    default_pod({"spec": spec})
    assert [str(e) for e in validate_pod_spec(spec, Path("spec"), POD)] == ["spec.containers: Required value"]


def test_ephemeral_container_rules():
    spec = {"containers": [{"name": "c", "image": "x"}], "ephemeralContainers": [
        {"name": "c", "image": "busybox", "targetContainerName": "other", "ports": [{"containerPort": 80}]}]}
    default_pod({"spec": spec})
    assert [str(e) for e in validate_pod_spec(spec, Path("spec"), POD)] == [
        'spec.ephemeralContainers[0].name: Duplicate value: "c"',
        'spec.ephemeralContainers[0].targetContainerName: Not found: "other"',
        "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container"]


def test_init_containers_without_restart_policy_have_no_probes():
    spec = {"containers": [{"name": "c", "image": "x"}],
            "initContainers": [{"name": "init", "image": "x", "readinessProbe": {"exec": {"command": ["a"]}}},
                               {"name": "sidecar", "image": "x", "restartPolicy": "Always",
                                "readinessProbe": {"exec": {"command": ["a"]}}}]}
    default_pod({"spec": spec})
    assert [str(e) for e in validate_pod_spec(spec, Path("spec"), POD)] == [
        "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without "
        "restartPolicy=Always"]


def test_pod_template_spec():
    template = {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "x"}],
                         "ephemeralContainers": [{"name": "d", "image": "x"}]}}
    default_pod_template_spec(template)
    errs = validate_pod_template_spec(template, Path("template"), PodValidationOptions())
    assert [str(e) for e in errs] == [
        "template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template"]
    bad = {"metadata": {"labels": {"a": "b c"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    default_pod_template_spec(bad)
    assert str(validate_pod_template_spec(bad, Path("template"), PodValidationOptions())[0]).startswith(
        'template.labels: Invalid value: "b c": a valid label must be')
