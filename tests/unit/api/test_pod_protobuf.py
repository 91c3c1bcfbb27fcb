"""Pods decoded from protobuf (what kubectl run/create send): embedded Go structs (Volume's VolumeSource,
Probe's handler, ConfigMap references) are inlined; Go pointers keep their zero values."""

from __future__ import annotations

from kube_apiserver.apimachinery.protobuf import MAGIC, bytes_field, decode, varint_field


def message(*fields: bytes) -> bytes:
    return b"".join(fields)


def test_pod_with_inline_structs_and_pointers():
    probe = message(bytes_field(1, message(bytes_field(1, message(bytes_field(1, b"true"))))),  # handler.exec
                    varint_field(3, 5))
    container = message(bytes_field(1, b"c"), bytes_field(2, b"nginx"), bytes_field(10, probe),
                        bytes_field(15, message(varint_field(6, 0))))  # securityContext.readOnlyRootFilesystem=false
    config_map = message(bytes_field(1, message(bytes_field(1, b"settings"))))  # localObjectReference.name
    volume = message(bytes_field(1, b"cfg"), bytes_field(2, message(bytes_field(19, config_map))))
    spec = message(bytes_field(1, volume), bytes_field(2, container), varint_field(4, 0))
    pod = message(bytes_field(1, message(bytes_field(1, b"p"))), bytes_field(2, spec))
    envelope = bytes_field(1, message(bytes_field(1, b"v1"), bytes_field(2, b"Pod"))) + bytes_field(2, pod)
    decoded = decode(MAGIC + envelope, ["application/json"])
    assert decoded["spec"] == {
        "volumes": [{"name": "cfg", "configMap": {"name": "settings"}}],
        "containers": [{"name": "c", "image": "nginx", "livenessProbe": {"exec": {"command": ["true"]},
                                                                         "timeoutSeconds": 5},
                        "securityContext": {"readOnlyRootFilesystem": False}}],
        "terminationGracePeriodSeconds": 0}
