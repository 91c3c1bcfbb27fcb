"""APIService defaults, validation messages, table cells and the ordering helpers (kube-aggregator's
validation.go, helpers.go and the etcd.go table)."""

from __future__ import annotations

import base64

from kube_apiserver.aggregator.apiservice import (
    available_cell,
    service_cell,
    set_defaults,
    validate_api_service,
    validate_status,
)
from kube_apiserver.aggregator.helpers import (
    compare_kube_aware_versions,
    local_available_condition,
    set_condition,
    sorted_by_group_and_version,
)
from kube_apiserver.apimachinery import protobuf


def svc(name: str, **spec) -> dict:
    version, _, group = name.partition(".")
    return {"metadata": {"name": name}, "spec": {"group": group, "version": version, "groupPriorityMinimum": 10,
                                                 "versionPriority": 10, **spec}}


def messages(obj: dict) -> list[str]:
    return [str(e) for e in validate_api_service(obj)]


def test_valid_local_and_remote():
    assert messages(svc("v1.example.com")) == []
    assert messages(svc("v1.", group="")) == []
    remote = svc("v1beta1.metrics.k8s.io", service={"namespace": "kube-system", "name": "metrics", "port": 443},
                 insecureSkipTLSVerify=True)
    assert messages(remote) == []


def test_name_must_be_version_dot_group():
    assert messages(svc("v1.a.example.com", group="b.example.com")) == [
        'metadata.name: Invalid value: "v1.a.example.com": must be `spec.version+"."+spec.group`: "v1.b.example.com"']
    assert messages(svc("v1.a%b")) == ['metadata.name: Invalid value: "v1.a%b": may not contain \'%\'',
                                       'spec.group: Invalid value: "a%b": a lowercase RFC 1123 subdomain must '
                                       "consist of lower case alphanumeric characters, '-' or '.', and must start "
                                       "and end with an alphanumeric character (e.g. 'example.com', regex used for "
                                       "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
                                       "[a-z0-9])?)*')"]


def test_group_version_and_priorities():
    assert messages(svc("v2.", group="")) == [
        "spec.group: Required value: only v1 may have an empty group and it better be legacy kube"]
    assert messages(svc("V1.example.com"))[-1].startswith('spec.version: Invalid value: "V1": a DNS-1035 label')
    assert messages(svc("v1.example.com", groupPriorityMinimum=20001, versionPriority=0)) == [
        "spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000",
        "spec.versionPriority: Invalid value: 0: must be positive and less than 1000"]


def test_service_rules():
    ca = base64.b64encode(b"0123456789").decode()
    assert messages(svc("v1.example.com", caBundle=ca, insecureSkipTLSVerify=True)) == [
        'spec.caBundle: Invalid value: "10 bytes": local APIServices may not have a caBundle',
        "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify"]
    assert messages(svc("v1.example.com", service={"port": 0}, caBundle=ca, insecureSkipTLSVerify=True)) == [
        "spec.service.namespace: Required value", "spec.service.name: Required value",
        "spec.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
        "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present"]


def test_defaults():
    obj = svc("v1.example.com", service={"namespace": "a", "name": "b"}, insecureSkipTLSVerify=False, caBundle="")
    set_defaults(obj)
    assert obj["spec"] == {"group": "example.com", "version": "v1", "groupPriorityMinimum": 10,
                           "versionPriority": 10, "service": {"namespace": "a", "name": "b", "port": 443}}
    local = svc("v1.example.com", service=None)
    set_defaults(local)
    assert "service" not in local["spec"]


def test_status_validation_and_table():
    obj = svc("v1.example.com")
    obj["status"] = {"conditions": [{"type": "Available", "status": "Yes"}]}
    assert [str(e) for e in validate_status(obj)] == [
        'status.conditions[0].status: Unsupported value: "Yes": supported values: "True", "False", "Unknown"']
    assert available_cell(svc("v1.x")) == "Unknown" and service_cell(svc("v1.x")) == "Local"
    set_condition(obj, {"type": "Available", "status": "False", "lastTransitionTime": "t", "reason": "MissingEndpoints",
                        "message": "m"})
    assert available_cell(obj) == "False (MissingEndpoints)"
    obj["spec"]["service"] = {"namespace": "ns", "name": "api"}
    assert service_cell(obj) == "ns/api"


def test_set_condition_keeps_transition_time_while_status_holds():
    obj = svc("v1.x")
    set_condition(obj, {**local_available_condition(), "lastTransitionTime": "first"})
    set_condition(obj, {**local_available_condition(), "lastTransitionTime": "second", "message": "again"})
    condition = obj["status"]["conditions"][0]
    assert (condition["lastTransitionTime"], condition["message"]) == ("first", "again")
    set_condition(obj, {"type": "Available", "status": "False", "lastTransitionTime": "third"})
    assert obj["status"]["conditions"] == [{"type": "Available", "status": "False", "lastTransitionTime": "third"}]


def test_kube_aware_version_order():
    ordered = ["v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2", "foo1", "foo10"]
    for earlier, later in zip(ordered, ordered[1:], strict=False):
        assert compare_kube_aware_versions(earlier, later) > 0, (earlier, later)
        assert compare_kube_aware_versions(later, earlier) < 0


def test_sorted_by_group_and_version():
    services = [svc("v1.b.io", groupPriorityMinimum=100, versionPriority=5),
                svc("v2.b.io", groupPriorityMinimum=10, versionPriority=5),
                svc("v1.a.io", groupPriorityMinimum=50),
                svc("v1beta1.b.io", groupPriorityMinimum=10, versionPriority=20),
                svc("v1.c.io", groupPriorityMinimum=50)]
    ordered = [[s["metadata"]["name"] for s in group] for group in sorted_by_group_and_version(services)]
    assert ordered == [["v1beta1.b.io", "v2.b.io", "v1.b.io"], ["v1.a.io"], ["v1.c.io"]]


def test_protobuf_body():
    def field(number: int, payload: bytes) -> bytes:
        return bytes([number << 3 | 2, len(payload)]) + payload

    def varint(number: int, value: int) -> bytes:
        return bytes([number << 3]) + protobuf.encode_varint(value)

    service = field(1, b"kube-system") + field(2, b"metrics") + varint(3, 443)
    spec = field(1, service) + field(2, b"metrics.k8s.io") + field(3, b"v1beta1") + varint(4, 1) + \
        varint(7, 100) + varint(8, 0)
    raw = field(1, field(1, b"v1beta1.metrics.k8s.io")) + field(2, spec) + field(3, b"")
    type_meta = field(1, b"apiregistration.k8s.io/v1") + field(2, b"APIService")
    obj = protobuf.decode(protobuf.MAGIC + field(1, type_meta) + field(2, raw), [])
    assert obj["spec"] == {"service": {"namespace": "kube-system", "name": "metrics", "port": 443},
                           "group": "metrics.k8s.io", "version": "v1beta1", "insecureSkipTLSVerify": True,
                           "groupPriorityMinimum": 100, "versionPriority": 0}
