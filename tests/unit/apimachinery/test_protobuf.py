"""Protobuf request bodies: the bytes here are what client-go writes for these objects."""

from __future__ import annotations

import pytest

import kube_apiserver.api.core  # noqa: F401 - registers the core kinds
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
    meta = field(1, b"cm") + field(3, b"default") + field(11, field(1, b"app") + field(2, b"web")) + \
        field(8, b"")  # creationTimestamp: zero Time, as Go always writes it
    raw = field(1, meta) + field(2, field(1, b"k") + field(2, b"v")) + varint_field(4, 0)
    assert protobuf.decode(envelope(b"v1", b"ConfigMap", raw), []) == {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "default", "labels": {"app": "web"}},
        "data": {"k": "v"}, "immutable": False}


def test_secret_bytes_become_base64():
    raw = field(1, field(1, b"s")) + field(2, field(1, b"p") + field(2, b"hunter2")) + field(3, b"Opaque")
    obj = protobuf.decode(envelope(b"v1", b"Secret", raw), [])
    assert obj["data"] == {"p": "aHVudGVyMg=="} and obj["type"] == "Opaque"


def test_delete_options_keep_zero_grace_period():
    obj = protobuf.decode(envelope(b"v1", b"DeleteOptions", varint_field(1, 0) + field(4, b"Foreground")), [])
    assert obj == {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                   "propagationPolicy": "Foreground"}


def test_unknown_kind_is_unsupported_media_type():
    with pytest.raises(StatusError) as err:
        protobuf.decode(envelope(b"example.com/v1", b"Widget", b""), ["application/json"])
    assert err.value.code == 415


def test_garbage_is_bad_request():
    with pytest.raises(StatusError) as err:
        protobuf.decode(b"not protobuf", [])
    assert err.value.code == 400
