"""Protobuf request bodies: the bytes here are what client-go writes for these objects."""

from __future__ import annotations

import pytest

from kube_apiserver.apimachinery import protobuf
from kube_apiserver.apimachinery.errors import StatusError


def field(number: int, payload: bytes) -> bytes:
    return bytes([number << 3 | 2, len(payload)]) + payload


def varint_field(number: int, value: int) -> bytes:
    return bytes([number << 3, value])


def envelope(api_version: bytes, kind: bytes, raw: bytes) -> bytes:
    type_meta = field(1, api_version) + field(2, kind)
    return protobuf.MAGIC + field(1, type_meta) + field(2, raw)


def test_configmap():
    meta = (
        field(1, b"cm")
        + field(3, b"default")
        + field(11, field(1, b"app") + field(2, b"web"))
        + field(8, b"")
    )  # creationTimestamp: zero Time, as Go always writes it
    raw = field(1, meta) + field(2, field(1, b"k") + field(2, b"v")) + varint_field(4, 0)
    assert protobuf.decode(envelope(b"v1", b"ConfigMap", raw), []) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "default", "labels": {"app": "web"}},
        "data": {"k": "v"},
        "immutable": False,
    }


def test_secret_bytes_become_base64():
    raw = field(1, field(1, b"s")) + field(2, field(1, b"p") + field(2, b"hunter2")) + field(3, b"Opaque")
    obj = protobuf.decode(envelope(b"v1", b"Secret", raw), [])
    assert obj["data"] == {"p": "aHVudGVyMg=="} and obj["type"] == "Opaque"


def test_delete_options_keep_zero_grace_period():
    obj = protobuf.decode(envelope(b"v1", b"DeleteOptions", varint_field(1, 0) + field(4, b"Foreground")), [])
    assert obj == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 0,
        "propagationPolicy": "Foreground",
    }


def test_unknown_kind_is_unsupported_media_type():
    with pytest.raises(StatusError) as err:
        protobuf.decode(envelope(b"example.com/v1", b"Widget", b""), ["application/json"])
    assert err.value.code == 415


def test_garbage_is_bad_request():
    with pytest.raises(StatusError) as err:
        protobuf.decode(b"not protobuf", [])
    assert err.value.code == 400


# ---- the generated table, and responses ----


def test_delete_options_of_any_group_version():
    """DeleteOptions is registered in every group version (metav1.AddToGroupVersion), not only v1."""
    for api_version in ("apps/v1", "batch/v1", "rbac.authorization.k8s.io/v1", "meta.k8s.io/v1"):
        body = envelope(api_version.encode(), b"DeleteOptions", field(4, b"Orphan"))
        assert protobuf.decode(body, []) == {
            "apiVersion": api_version,
            "kind": "DeleteOptions",
            "propagationPolicy": "Orphan",
        }


def test_endpoints_port_is_core_not_discovery():
    """core/v1 EndpointPort (name, port, protocol, appProtocol) and discovery/v1's (name, protocol, port,
    appProtocol: other numbers) are two messages."""
    port = field(1, b"https") + varint_field(2, 100) + field(3, b"TCP")
    subset = field(1, field(1, b"10.0.0.1")) + field(3, port)
    raw = field(1, field(1, b"ep")) + field(2, subset)
    obj = protobuf.decode(envelope(b"v1", b"Endpoints", raw), [])
    assert obj["subsets"] == [
        {"addresses": [{"ip": "10.0.0.1"}], "ports": [{"name": "https", "port": 100, "protocol": "TCP"}]}
    ]
    slice_port = field(1, b"https") + field(2, b"TCP") + varint_field(3, 100)
    raw = field(1, field(1, b"es")) + field(4, b"IPv4") + field(3, slice_port)
    obj = protobuf.decode(envelope(b"discovery.k8s.io/v1", b"EndpointSlice", raw), [])
    assert obj["ports"] == [{"name": "https", "protocol": "TCP", "port": 100}]


def test_micro_time_in_year_one_is_padded():
    seconds = -62135596800 + 3600  # 0001-01-01T01:00:00Z
    raw = field(1, field(1, b"e")) + field(
        10, protobuf.varint_field(1, seconds) + protobuf.varint_field(2, 7000)
    )
    obj = protobuf.decode(envelope(b"v1", b"Event", raw), [])
    assert obj["eventTime"] == "0001-01-01T01:00:00.000007Z"
    again = protobuf.decode(protobuf.encode(obj), [])
    assert again["eventTime"] == "0001-01-01T01:00:00.000007Z"


def test_go_zero_time_is_null():
    zero = bytes([0x08]) + protobuf.encode_varint(-62135596800)
    raw = field(1, field(1, b"e")) + field(10, zero)
    assert "eventTime" not in protobuf.decode(envelope(b"v1", b"Event", raw), [])


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web",
        "namespace": "default",
        "labels": {"b": "2", "a": "1"},
        "creationTimestamp": "2024-05-06T07:08:09Z",
        "deletionGracePeriodSeconds": 0,
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}
        ],
    },
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "nginx",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"limits": {"cpu": "500m"}, "claims": [{"name": "gpu", "request": "one"}]},
                "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 10},
                "securityContext": {"runAsUser": 0, "privileged": False},
            }
        ],
        "volumes": [
            {"name": "v", "configMap": {"name": "cm", "defaultMode": 420}},
            {"name": "t", "emptyDir": {}},
        ],
        "securityContext": {"supplementalGroups": [1, 2]},
        "terminationGracePeriodSeconds": 30,
        "enableServiceLinks": False,
    },
    "status": {
        "phase": "Running",
        "startTime": "2024-05-06T07:08:10Z",
        "containerStatuses": [
            {
                "name": "c",
                "ready": False,
                "restartCount": 0,
                "image": "nginx",
                "imageID": "",
                "state": {"running": {"startedAt": "2024-05-06T07:08:11Z"}},
                "lastState": {},
            }
        ],
    },
}


def test_pod_round_trip():
    """encode then decode gives the object back: pointers kept when zero (runAsUser: 0, privileged: false,
    deletionGracePeriodSeconds: 0), scalars JSON always writes kept (ready: false, restartCount: 0, imageID: ""),
    inline structs (VolumeSource, ProbeHandler, LocalObjectReference) in place, IntOrString and Quantity as JSON."""
    body = protobuf.encode(POD)
    assert body.startswith(protobuf.MAGIC)
    back = protobuf.decode(body, [])
    expected = {
        **POD,
        "status": {
            **POD["status"],
            "containerStatuses": [
                {k: v for k, v in POD["status"]["containerStatuses"][0].items() if k != "lastState"}
            ],
        },
    }
    assert back == expected


def test_core_and_resource_claims_apart():
    """core/v1 ResourceClaim (a container's claim: name, request) is not resource.k8s.io/v1's kind."""
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {
            "devices": {
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 1}}]
            }
        },
    }
    assert protobuf.decode(protobuf.encode(claim), []) == claim


def test_encoding_is_gogo_order_with_empty_fields_written():
    """Fields in number order; non-pointer fields written even when empty, as gogo-protobuf does."""
    body = protobuf.encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    api_version, kind, raw = protobuf._envelope(body)
    assert (api_version, kind) == ("v1", "ConfigMap")
    assert body.endswith(field(3, b"") + field(4, b""))  # the Unknown's empty contentEncoding, contentType
    meta = protobuf.fields_of(raw)[0][2]
    numbers = [n for n, _, _ in protobuf.fields_of(meta)]
    assert numbers == [1, 2, 3, 4, 5, 6, 7, 8]  # name ... generation, creationTimestamp (an empty Time)
    assert protobuf.decode(body, []) == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}


def test_status_and_lists():
    status = {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "message": "no",
        "reason": "NotFound",
        "details": {"name": "x", "kind": "pods"},
        "code": 404,
    }
    assert protobuf.decode(protobuf.encode(status), []) == {
        k: v for k, v in status.items() if k != "metadata"
    }
    pods = {
        "apiVersion": "v1",
        "kind": "PodList",
        "metadata": {"resourceVersion": "7"},
        "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}],
    }
    assert protobuf.decode(protobuf.encode(pods), []) == pods


def test_watch_frame():
    frame = protobuf.watch_frame(
        "ADDED", protobuf.encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    )
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    event = protobuf.decode_message(protobuf.META + "WatchEvent", frame[4:])
    assert event == {
        "type": "ADDED",
        "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
    }


def test_custom_resource_schemas_have_their_json_forms():
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "a.b"},
        "spec": {
            "group": "b",
            "scope": "Namespaced",
            "names": {"plural": "a", "kind": "A"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                            "properties": {
                                "n": {"type": "integer", "default": 3, "enum": [1, 3]},
                                "m": {"type": "object", "additionalProperties": {"type": "string"}},
                                "k": {"type": "object", "additionalProperties": False},
                            },
                        }
                    },
                }
            ],
        },
    }
    # acceptedNames' plural and kind have no omitempty: Go's JSON has them, empty, as here.
    assert protobuf.decode(protobuf.encode(crd), []) == {
        **crd,
        "status": {"acceptedNames": {"plural": "", "kind": ""}},
    }


def test_mutated_bodies_are_bad_requests_never_crashes():
    """Every corruption of a valid body decodes or is a 400/415 Status (no other exception: no 500)."""
    import random

    rng = random.Random(9)
    valid = protobuf.encode(POD)
    for _ in range(3000):
        body = bytearray(valid)
        for _ in range(rng.randint(1, 4)):
            body[rng.randrange(len(protobuf.MAGIC), len(body))] = rng.randrange(256)
        try:
            protobuf.decode(bytes(body), [])
        except StatusError as err:
            assert err.code in (400, 415)


def test_deeply_nested_schema_is_a_bad_request_or_decoded():
    nest = protobuf.bytes_field
    schema = b""
    for _ in range(5000):  # properties: {"p": <schema>} 5,000 deep
        schema = nest(27, nest(1, b"p") + nest(2, schema))
    crd_spec = nest(1, b"g") + nest(7, nest(1, b"v1") + nest(4, nest(1, schema)))
    body = protobuf.envelope(
        "apiextensions.k8s.io/v1", "CustomResourceDefinition", nest(1, nest(1, b"x")) + nest(2, crd_spec)
    )
    try:
        protobuf.decode(body, [])
    except StatusError as err:
        assert err.code == 400
