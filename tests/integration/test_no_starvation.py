"""No request starves the others (issue 11, item 5): while a long list is being converted and written,
/readyz is answered. Checked by order, not by time: every item of the list holds the event loop (as CPU-heavy
work would) until /readyz has answered or a while has passed. A list that gives the loop a turn between items
lets /readyz through after a few of them; one that does not holds /readyz until the whole list is written."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from kube_apiserver.endpoints.handlers import listwriter
from kube_apiserver.registry import table

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
ITEM_SECONDS = 0.05


@pytest.mark.parametrize("accept", [TABLE, "application/json"])
def test_readyz_answers_while_a_long_list_is_written(server, monkeypatch: pytest.MonkeyPatch, accept: str):
    # The bootstrap cluster roles (dozens) count as a long list here, written a few items a slice.
    monkeypatch.setattr(listwriter, "CHUNKED_FROM_ITEMS", 2)
    monkeypatch.setattr(listwriter, "SLICE_ITEMS", 1)
    monkeypatch.setattr(listwriter, "YIELD_AFTER_SECONDS", 0.0)
    started, readyz_done = threading.Event(), threading.Event()
    order: list[str] = []
    plain_row = table.TableConvertor.row

    def heavy(_item: dict) -> None:
        """Holds the event loop for a while per item, as CPU-bound work does, until /readyz has answered."""
        started.set()
        readyz_done.wait(ITEM_SECONDS)

    def row(self: table.TableConvertor, obj: dict, include_object: str) -> dict:
        heavy(obj)
        return plain_row(self, obj, include_object)

    monkeypatch.setattr(table.TableConvertor, "row", row)
    # A plain JSON list converts nothing: its heavy part is the encoding, reached through the items' metadata.
    monkeypatch.setattr(listwriter, "serializer", _HeavySerializer(heavy))

    def list_roles() -> None:
        resp = server.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles", headers={"Accept": accept})
        assert resp.status == 200, resp.body[:300]
        order.append("list")

    lister = threading.Thread(target=list_roles)
    lister.start()
    assert started.wait(30), "the list never reached its heavy part"
    assert server.request("GET", "/readyz", token=None).status == 200
    order.append("readyz")
    readyz_done.set()
    lister.join(60)
    assert order == ["readyz", "list"]


class _HeavySerializer:
    """serializer for listwriter whose encode_json does `heavy` work per encoded item."""

    def __init__(self, heavy: Callable[[dict], None]):
        from kube_apiserver.apimachinery import serializer

        self._serializer = serializer
        self._heavy = heavy

    def encode_json(self, value: object, pretty: bool = False) -> bytes:
        if isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    self._heavy(item)
        return self._serializer.encode_json(value, pretty)

    def __getattr__(self, name: str) -> object:
        return getattr(self._serializer, name)
