"""The sliced list encoders (endpoints/handlers/listwriter.py) write exactly the bytes of the one-shot
encoders, and give the event loop a turn between slices."""

from __future__ import annotations

import asyncio

import pytest

from kube_apiserver.apimachinery import protobuf, serializer
from kube_apiserver.endpoints.handlers import listwriter


def configmap_list(count: int, continue_token: str = "") -> dict:
    items = [{"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": f"cm-{i}", "namespace": "ns", "resourceVersion": str(i + 10),
                           "labels": {"app": "<&>"}, "creationTimestamp": "2024-01-01T00:00:00Z"},
              "data": {"key": f"value {i}\u2028", "yaml": "a: b\n- c"}} for i in range(count)]
    meta = {"resourceVersion": "99"}
    if continue_token:
        meta["continue"] = continue_token
    return {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": meta, "items": items}


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("count", [0, 1, listwriter.SLICE_ITEMS, listwriter.SLICE_ITEMS * 3 + 5])
def test_json_is_byte_identical(count: int):
    obj = configmap_list(count, continue_token="abc")
    assert run(listwriter.encode_json(obj, "items", listwriter.Yielder())) == serializer.encode_json(obj)


def test_json_of_a_list_with_empty_head_and_not_last_key():
    assert run(listwriter.encode_json({"items": [1, 2, 3]}, "items", listwriter.Yielder())) == \
        serializer.encode_json({"items": [1, 2, 3]})
    assert run(listwriter.encode_json({"items": [], "kind": "X"}, "items", listwriter.Yielder())) is None


@pytest.mark.parametrize("count", [1, listwriter.SLICE_ITEMS * 2 + 1])
def test_yaml_is_byte_identical(count: int):
    obj = configmap_list(count)
    assert run(listwriter.encode_yaml(obj, "items", listwriter.Yielder())) == serializer.encode_yaml(obj)


def test_yaml_of_an_empty_list_is_left_to_the_one_shot_encoder():
    assert run(listwriter.encode_yaml(configmap_list(0), "items", listwriter.Yielder())) is None


@pytest.mark.parametrize("count", [0, 1, listwriter.SLICE_ITEMS * 2 + 1])
def test_protobuf_is_byte_identical(count: int):
    obj = configmap_list(count, continue_token="abc")
    assert run(listwriter.encode_protobuf(obj, listwriter.Yielder())) == protobuf.encode(obj)


def test_protobuf_of_a_kind_without_a_message():
    obj = {"kind": "WidgetList", "apiVersion": "example.com/v1", "metadata": {}, "items": [{}]}
    assert run(listwriter.encode_protobuf(obj, listwriter.Yielder())) is None


def test_other_tasks_run_between_slices(monkeypatch: pytest.MonkeyPatch):
    """Ordering, not time: a task started after the encoding began finishes before the encoding does."""
    monkeypatch.setattr(listwriter, "YIELD_AFTER_SECONDS", 0.0)
    order: list[str] = []

    async def encode() -> None:
        await listwriter.encode_json(configmap_list(listwriter.SLICE_ITEMS * 4), "items", listwriter.Yielder())
        order.append("list")

    async def small() -> None:
        order.append("small")

    async def main() -> None:
        encoding = asyncio.ensure_future(encode())
        await asyncio.sleep(0)  # the encoding has started
        await asyncio.gather(encoding, small())

    run(main())
    assert order == ["small", "list"]


TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"


@pytest.mark.parametrize(("accept", "query"), [
    ("application/json", b""), ("application/json", b"pretty=true"), ("application/yaml", b""),
    ("application/vnd.kubernetes.protobuf", b""), (TABLE, b""), (TABLE, b"includeObject=Object"),
    (TABLE + ", application/json", b"includeObject=None"), (PARTIAL_LIST, b""),
])
def test_write_list_answers_as_write_object(monkeypatch: pytest.MonkeyPatch, accept: str, query: bytes):
    """A long list through write_list: the same status, headers and bytes as write_object writes."""
    from types import SimpleNamespace

    from kube_apiserver.endpoints import negotiation
    from kube_apiserver.endpoints.handlers import responses
    from kube_apiserver.endpoints.http import Request
    from kube_apiserver.registry.table import default_table_convertor

    monkeypatch.setattr(listwriter, "CHUNKED_FROM_ITEMS", 2)
    monkeypatch.setattr(listwriter, "SLICE_ITEMS", 3)
    obj = configmap_list(10, continue_token="abc")
    for item in obj["items"]:
        del item["metadata"]["creationTimestamp"]  # the age cell would change with the clock
    scope = SimpleNamespace(conversions=negotiation.RESOURCE_CONVERSIONS, custom_resource=False,
                            table=default_table_convertor())
    req = Request("GET", "/api/v1/configmaps", query, {"accept": accept})
    sliced = run(responses.write_list(req, scope, 200, obj))  # type: ignore[arg-type]
    whole = responses.write_object(req, scope, 200, obj)  # type: ignore[arg-type]
    assert (sliced.status, sliced.headers, sliced.body) == (whole.status, whole.headers, whole.body)
