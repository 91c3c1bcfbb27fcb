from __future__ import annotations

import pytest

from kube_apiserver.apimachinery.errors import StatusError
from kube_apiserver.endpoints import negotiation as n


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
