"""A YAML body that is a JSON object (server-side apply configurations from client-go and the server's own
controllers) is read by orjson, with the objects YAML's reading gives; what YAML reads otherwise stays YAML."""

from __future__ import annotations

import pytest
import yaml

from kube_apiserver.apimachinery import serializer

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
CORPUS = [
    b'{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "admin"}, '
    b'"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}',
    b'{"a": [1, -0, 0.5, -1.25, 123456789012345678, true, false, null, {}, []], "b": "\xc3\xa9\xf0\x9f\x98\x80"}',
    rb'{"s": "x\/y\\z\"q\b\f\n\r\t\u0000\u00e9", "on": "yes", "y": "~", "<<": {"x": 1}, "d": "2001-12-14"}',
    b'{"a":\t1,\r\n "b" :2, "a": 3}',
    b'{"image": "registry.example/v1.e2e:1e3", "n": 1.0}',
]


@pytest.mark.parametrize("body", CORPUS)
def test_json_objects_read_without_yaml_as_yaml_reads_them(
    body: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = yaml.load(body, Loader=LOADER)  # noqa: S506 - the safe loader
    with monkeypatch.context() as patched:
        patched.setattr(serializer.yaml, "load", None)  # any use of YAML fails
        patched.setattr(serializer.yamllimits, "check", None)
        assert serializer.decode_yaml(body) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"a": 1e3}', {"a": "1e3"}),  # YAML 1.1: no dot, a string
        (b'{"a": 1.5E+3}', {"a": 1500.0}),
        (b'{"a": 100000000000000000000000000000}', {"a": 100000000000000000000000000000}),  # past 64 bits
        (b'{"a": 18446744073709551615}', {"a": 18446744073709551615}),
        (b'{"a": NaN}', {"a": "NaN"}),
        (b"a: [1, 2]", {"a": [1, 2]}),  # not JSON
        (b'{"a": 1}\n---\n{"b": 2}', None),  # a stream: YAML's error
    ],
)
def test_what_yaml_reads_otherwise_stays_yaml(body: bytes, expected: object) -> None:
    if expected is None:
        with pytest.raises(serializer.errors.StatusError):
            serializer.decode_yaml(body)
        return
    assert serializer.decode_yaml(body) == expected
