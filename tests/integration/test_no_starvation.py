"""No request starves the others (issue 11, item 5): while a long list is being converted and written,
/readyz is answered. Checked by order, not by time: every item of the list holds the event loop (as CPU-heavy
work would) until /readyz has answered or a while has passed. A list that gives the loop a turn between items
lets /readyz through after a few of them; one that does not holds /readyz until the whole list is written.
Writes (a big patch, a deep server-side apply, a create or update of a big object) are checked the same way
between their phases: /readyz is answered before the next phase runs."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from collections.abc import Callable

import pytest

from kube_apiserver.apimachinery import serializer, strategicpatch
from kube_apiserver.apimachinery.managedfields.manager import FieldManager
from kube_apiserver.endpoints.handlers import listwriter, yielding
from kube_apiserver.registry import store, table

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


# ---- a big patch, a deep apply: a few heavy phases, the loop given a turn between them ----

PHASE_SECONDS = 0.5


class _Phases:
    """Heavy phases of one request (the calls whose arguments mention `marker`): the first tells the test it
    has started and ends once /readyz has been sent; the next holds the event loop (as CPU work does) until /readyz has answered or PHASE_SECONDS
    have passed, then is noted in `order`. With a turn of the loop between the phases /readyz is answered
    between them; without, only once the second phase is over."""

    def __init__(self, marker: str, monkeypatch: pytest.MonkeyPatch) -> None:
        # Every phase counts as long, and the loop is given long enough to answer /readyz (it is not timed).
        monkeypatch.setattr(yielding, "YIELD_AFTER_SECONDS", 0.0)
        monkeypatch.setattr(yielding, "GIVE_WAY_SECONDS", 0.2)
        self.marker = marker
        self.started, self.readyz_sent, self.readyz_done = threading.Event(), threading.Event(), threading.Event()
        self.order: list[str] = []

    def wrap(self, fn: Callable, first: bool = False) -> Callable:
        def heavy(*args: object, **kwargs: object) -> object:
            if self.marker in str(args):
                if first:  # the first phase ends once /readyz is on its way
                    self.started.set()
                    self.readyz_sent.wait(30)
                else:
                    self.readyz_done.wait(PHASE_SECONDS)
                    self.order.append(fn.__name__)
            return fn(*args, **kwargs)

        return heavy

    def run(self, server, heavy_request: Callable[[], None]) -> list[str]:
        probe = _warm_connection(server)  # connected and TLS-shaken before: only the GET is left to answer
        thread = threading.Thread(target=heavy_request)
        thread.start()
        assert self.started.wait(30), "the request never reached its heavy part"
        probe.request("GET", "/readyz")
        self.readyz_sent.set()
        assert probe.getresponse().read() == b"ok"
        self.order.append("readyz")
        self.readyz_done.set()
        thread.join(60)
        probe.close()
        return self.order


def _warm_connection(server) -> http.client.HTTPSConnection:
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=30,
                                       context=ssl.create_default_context(cafile=server.ca_file))
    conn.request("GET", "/readyz")
    assert conn.getresponse().read() == b"ok"
    return conn


def test_readyz_answers_between_the_phases_of_a_strategic_merge_patch(server, monkeypatch: pytest.MonkeyPatch):
    phases = _Phases("starve-patch", monkeypatch)
    path = "/api/v1/namespaces/default/configmaps/starve-patch"
    created = server.request("POST", "/api/v1/namespaces/default/configmaps",
                             {"metadata": {"name": "starve-patch"}, "data": {"a": "1"}})
    assert created.status == 201, created.body[:300]
    monkeypatch.setattr(strategicpatch, "strategic_merge_patch", phases.wrap(strategicpatch.strategic_merge_patch,
                                                                             first=True))
    monkeypatch.setattr(FieldManager, "update", phases.wrap(FieldManager.update))

    def patch() -> None:
        resp = server.request("PATCH", path, {"data": {"b": "starve-patch"}},
                              headers={"Content-Type": "application/strategic-merge-patch+json"})
        assert resp.status == 200, resp.body[:300]

    assert phases.run(server, patch) == ["readyz", "update"]


def test_readyz_answers_between_the_phases_of_a_server_side_apply(server, monkeypatch: pytest.MonkeyPatch):
    phases = _Phases("starve-apply", monkeypatch)
    monkeypatch.setattr(serializer, "decode_yaml", phases.wrap(serializer.decode_yaml, first=True))
    monkeypatch.setattr(FieldManager, "apply", phases.wrap(FieldManager.apply))
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "starve-apply"}, "data": {"a": "1"}}

    def apply() -> None:
        resp = server.request("PATCH", "/api/v1/namespaces/default/configmaps/starve-apply?fieldManager=test",
                              json.dumps(body), headers={"Content-Type": "application/apply-patch+yaml"})
        assert resp.status == 201, resp.body[:300]

    assert phases.run(server, apply) == ["readyz", "apply"]


def test_readyz_answers_between_the_phases_of_a_create(server, monkeypatch: pytest.MonkeyPatch):
    phases = _Phases("starve-create", monkeypatch)
    monkeypatch.setattr(serializer, "decode_body", phases.wrap(serializer.decode_body, first=True))
    monkeypatch.setattr(FieldManager, "update", phases.wrap(FieldManager.update))

    def create() -> None:
        resp = server.request("POST", "/api/v1/namespaces/default/configmaps",
                              {"metadata": {"name": "starve-create"}, "data": {"a": "1"}})
        assert resp.status == 201, resp.body[:300]

    assert phases.run(server, create) == ["readyz", "update"]


def test_readyz_answers_between_the_phases_of_an_update(server, monkeypatch: pytest.MonkeyPatch):
    phases = _Phases("starve-update", monkeypatch)
    path = "/api/v1/namespaces/default/configmaps/starve-update"
    created = server.request("POST", "/api/v1/namespaces/default/configmaps",
                             {"metadata": {"name": "starve-update"}, "data": {"a": "1"}})
    assert created.status == 201, created.body[:300]
    monkeypatch.setattr(serializer, "decode_body", phases.wrap(serializer.decode_body, first=True))
    monkeypatch.setattr(FieldManager, "update", phases.wrap(FieldManager.update))

    def update() -> None:
        resp = server.request("PUT", path, {"metadata": {"name": "starve-update"}, "data": {"a": "2"}})
        assert resp.status == 200, resp.body[:300]

    assert phases.run(server, update) == ["readyz", "update"]


# ---- one heavy phase of a big request: run in a worker thread, the loop answering meanwhile ----


def _order_around_one_phase(server, monkeypatch: pytest.MonkeyPatch, owner: object, name: str, marker: str,
                            heavy_request: Callable[[], None]) -> list[str]:
    """The order in which /readyz and the phase `owner.name` of a request (the call whose arguments mention
    `marker`) end, every request counting as big. The phase holds its thread (as CPU work does) until
    /readyz has answered or PHASE_SECONDS have passed: run off the loop, /readyz is answered meanwhile; on
    it, only once the phase is over."""
    monkeypatch.setattr(yielding, "OFF_LOOP_FROM_BYTES", 0)
    started, readyz_done = threading.Event(), threading.Event()
    order: list[str] = []
    plain = getattr(owner, name)

    def heavy(*args: object, **kwargs: object) -> object:
        if marker in str(args):
            started.set()
            readyz_done.wait(PHASE_SECONDS)
            order.append(name)
        return plain(*args, **kwargs)

    monkeypatch.setattr(owner, name, heavy)
    probe = _warm_connection(server)
    thread = threading.Thread(target=heavy_request)
    thread.start()
    assert started.wait(30), "the request never reached its heavy phase"
    probe.request("GET", "/readyz")
    assert probe.getresponse().read() == b"ok"
    order.append("readyz")
    readyz_done.set()
    thread.join(60)
    probe.close()
    return order


def test_readyz_answers_during_the_managed_fields_phase_of_a_big_apply(server, monkeypatch: pytest.MonkeyPatch):
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "offloop-apply"}, "data": {"a": "1"}}

    def apply() -> None:
        resp = server.request("PATCH", "/api/v1/namespaces/default/configmaps/offloop-apply?fieldManager=test",
                              json.dumps(body), headers={"Content-Type": "application/apply-patch+yaml"})
        assert resp.status == 201, resp.body[:300]

    assert _order_around_one_phase(server, monkeypatch, FieldManager, "apply", "offloop-apply", apply) == [
        "readyz", "apply"]


def test_readyz_answers_during_the_strategy_checks_of_a_big_create(server, monkeypatch: pytest.MonkeyPatch):
    def create() -> None:
        resp = server.request("POST", "/api/v1/namespaces/default/configmaps",
                              {"metadata": {"name": "offloop-create"}, "data": {"a": "1"}})
        assert resp.status == 201, resp.body[:300]

    assert _order_around_one_phase(server, monkeypatch, store, "before_create", "offloop-create", create) == [
        "readyz", "before_create"]


def test_readyz_answers_during_a_big_strategic_merge_patch(server, monkeypatch: pytest.MonkeyPatch):
    path = "/api/v1/namespaces/default/configmaps/offloop-patch"
    created = server.request("POST", "/api/v1/namespaces/default/configmaps",
                             {"metadata": {"name": "offloop-patch"}, "data": {"a": "1"}})
    assert created.status == 201, created.body[:300]

    def patch() -> None:
        resp = server.request("PATCH", path, {"data": {"b": "offloop-patch"}},
                              headers={"Content-Type": "application/strategic-merge-patch+json"})
        assert resp.status == 200, resp.body[:300]

    assert _order_around_one_phase(server, monkeypatch, strategicpatch, "strategic_merge_patch", "offloop-patch",
                                   patch) == ["readyz", "strategic_merge_patch"]
