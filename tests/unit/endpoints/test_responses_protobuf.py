"""write_object's protobuf: a kind with no protobuf form, or a stored value that does not fit its field, is
written as JSON rather than failing the request."""

from __future__ import annotations

from kube_apiserver.endpoints.handlers.responses import _as_protobuf


def test_protobuf_or_none():
    assert _as_protobuf({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}).startswith(
        b"k8s\x00"
    )
    assert _as_protobuf({"apiVersion": "example.com/v1", "kind": "Widget"}) is None
    assert _as_protobuf({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generation": "many"}}) is None
