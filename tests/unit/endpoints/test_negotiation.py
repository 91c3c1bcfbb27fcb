from __future__ import annotations

import pytest

from kube_apiserver.apimachinery.errors import StatusError
from kube_apiserver.endpoints import negotiation as n
from kube_apiserver.endpoints.http import Request


def test_kubectl_table_accept_header():
    media = n.negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
                        "g=meta.k8s.io,application/json", n.RESOURCE_CONVERSIONS)
    assert media == n.MediaType("application/json", "Table", "meta.k8s.io", "v1")
    assert media.content_type == "application/json;as=Table;g=meta.k8s.io;v=v1"


def test_protobuf_first_falls_back_to_json():
    assert n.negotiate("application/vnd.kubernetes.protobuf,application/json").media == "application/json"


def test_unknown_conversion_is_skipped():
    media = n.negotiate("application/json;as=Table;v=v2;g=meta.k8s.io,application/yaml", n.RESOURCE_CONVERSIONS)
    assert media == n.MediaType("application/yaml")


def test_quality_and_wildcards():
    assert n.negotiate("application/yaml;q=0.5,*/*").media == "application/json"
    assert n.negotiate("").media == "application/json"


def test_not_acceptable():
    with pytest.raises(StatusError) as err:
        n.negotiate("text/html")
    assert err.value.code == 406 and err.value.reason == "NotAcceptable"


def test_protobuf_when_the_kind_has_it():
    accept = "application/vnd.kubernetes.protobuf,application/json"
    assert n.negotiate(accept, protobuf=True).media == "application/vnd.kubernetes.protobuf"
    assert n.negotiate("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json",
                       n.RESOURCE_CONVERSIONS, protobuf=True) == n.MediaType("application/json")
    with pytest.raises(StatusError) as err:
        n.negotiate("application/vnd.kubernetes.protobuf")  # a custom resource: no protobuf
    assert err.value.code == 406


@pytest.mark.parametrize(("query", "agent", "pretty"), [
    (b"", "curl/8.5.0", True), (b"", "Wget/1.21", True), (b"", "Mozilla/5.0 (X11)", True),
    (b"", "Mozilla/4.0", False), (b"", "kubectl/v1.34.0 (linux/amd64)", False), (b"", "", False),
    (b"pretty=false", "curl/8.5.0", False), (b"pretty=1", "", True), (b"pretty=True", "", True),
    (b"pretty=", "curl/8.5.0", True), (b"pretty=yes", "curl/8.5.0", False),
])
def test_pretty_requested(query, agent, pretty):
    req = Request("GET", "/api/v1", query, {"user-agent": agent} if agent else {})
    assert n.pretty_requested(req) is pretty
