"""Snapshots, restore and reset of the whole store through /debug/testing/* (--enable-testing-endpoints) and
kube_apiserver.testing.state, with the server running on: a restore is seen by open watches as events,
lists agree with the watch cache, and resourceVersions only move forward. On SQLite and on etcd."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Server, wait_for
from kube_apiserver.testing import state

FLAG = "--enable-testing-endpoints"
CM = "/api/v1/namespaces/{ns}/configmaps"
GROUP = "snap.example.com"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}
WIDGETS = f"/apis/{GROUP}/v1/namespaces/{{ns}}/widgets"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(str(tmp_path_factory.mktemp("state")), [FLAG]).start()
    yield server
    server.stop()


def ok(resp: Any, *codes: int) -> Any:
    assert resp.status in (codes or (200, 201)), resp.body
    return resp.json()


def create_namespace(server: Server, name: str) -> None:
    """The namespace, once its controllers wrote what they add to it (its default ServiceAccount and CA
    bundle): a snapshot taken before would not hold them, and a restore would take them away again."""
    ok(server.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}}))
    wait_for(
        lambda: server.request("GET", f"/api/v1/namespaces/{name}/serviceaccounts/default").status == 200
    )
    wait_for(lambda: server.request("GET", CM.format(ns=name) + "/kube-root-ca.crt").status == 200)


def create_cm(server: Server, ns: str, name: str, value: str) -> dict:
    body = {"metadata": {"name": name}, "data": {"k": value}}
    return ok(server.request("POST", CM.format(ns=ns), body))


def cm_data(server: Server, ns: str) -> dict[str, str]:
    items = ok(server.request("GET", CM.format(ns=ns)))["items"]
    return {
        i["metadata"]["name"]: i.get("data", {}).get("k")
        for i in items
        if i["metadata"]["name"] != "kube-root-ca.crt"
    }


def test_restore_brings_back_deleted_and_modified_objects_and_removes_created_ones(srv: Server) -> None:
    create_namespace(srv, "snap-cm")
    create_cm(srv, "snap-cm", "kept", "k")
    changed = create_cm(srv, "snap-cm", "changed", "v1")
    create_cm(srv, "snap-cm", "gone", "g")
    name = state.snapshot(srv)
    changed["data"] = {"k": "v2"}
    ok(srv.request("PUT", CM.format(ns="snap-cm") + "/changed", changed))
    ok(srv.request("DELETE", CM.format(ns="snap-cm") + "/gone"))
    create_cm(srv, "snap-cm", "new", "n")
    before = int(ok(srv.request("GET", CM.format(ns="snap-cm")))["metadata"]["resourceVersion"])

    result = state.restore(srv, name)

    # at least: the server's controllers may still be writing what they write after a namespace is created
    assert result["deleted"] >= 1 and result["created"] >= 1 and result["updated"] >= 1
    assert cm_data(srv, "snap-cm") == {"kept": "k", "changed": "v1", "gone": "g"}
    back = ok(srv.request("GET", CM.format(ns="snap-cm") + "/gone"))
    assert int(back["metadata"]["resourceVersion"]) > before  # a new resourceVersion, never an older one
    assert int(result["resourceVersion"]) >= int(back["metadata"]["resourceVersion"])


def test_an_open_watch_sees_the_restore_and_lists_agree_with_the_watch_cache(srv: Server) -> None:
    create_namespace(srv, "snap-watch")
    create_cm(srv, "snap-watch", "a", "1")
    create_cm(srv, "snap-watch", "b", "1")
    name = state.snapshot(srv)
    a = ok(srv.request("GET", CM.format(ns="snap-watch") + "/a"))
    a["data"] = {"k": "2"}
    ok(srv.request("PUT", CM.format(ns="snap-watch") + "/a", a))
    ok(srv.request("DELETE", CM.format(ns="snap-watch") + "/b"))
    created = create_cm(srv, "snap-watch", "c", "1")
    since = created["metadata"]["resourceVersion"]
    conn, events = srv.stream(CM.format(ns="snap-watch") + f"?watch=1&resourceVersion={since}", timeout=20)
    seen: list[tuple[str, str, int]] = []
    reader = threading.Thread(target=lambda: seen.extend(_first_events(events, 3)), daemon=True)
    reader.start()
    try:
        result = state.restore(srv, name)
        reader.join(15)
    finally:
        conn.close()
    assert sorted((t, n) for t, n, _ in seen) == [("ADDED", "b"), ("DELETED", "c"), ("MODIFIED", "a")]
    assert all(int(since) < rv <= int(result["resourceVersion"]) for _, _, rv in seen)
    consistent = ok(srv.request("GET", CM.format(ns="snap-watch")))
    cached = ok(
        srv.request(
            "GET",
            CM.format(ns="snap-watch")
            + f"?resourceVersion={result['resourceVersion']}&resourceVersionMatch=NotOlderThan",
        )
    )
    assert int(consistent["metadata"]["resourceVersion"]) >= int(result["resourceVersion"])
    assert _named(cached["items"]) == _named(consistent["items"])
    assert cm_data(srv, "snap-watch") == {"a": "1", "b": "1"}


def _first_events(events: Iterator[dict], count: int) -> list[tuple[str, str, int]]:
    got = []
    for event in events:
        obj = event["object"]
        got.append((event["type"], obj["metadata"]["name"], int(obj["metadata"]["resourceVersion"])))
        if len(got) == count:
            break
    return got


def _named(items: list[dict]) -> dict[str, tuple[str, Any]]:
    return {i["metadata"]["name"]: (i["metadata"]["resourceVersion"], i.get("data")) for i in items}


def test_a_deleted_namespace_comes_back_with_its_objects(srv: Server) -> None:
    create_namespace(srv, "snap-ns")
    create_cm(srv, "snap-ns", "inside", "i")
    name = state.snapshot(srv)
    ok(srv.request("DELETE", "/api/v1/namespaces/snap-ns"))
    wait_for(lambda: srv.request("GET", "/api/v1/namespaces/snap-ns").status == 404)
    state.restore(srv, name)
    namespace = ok(srv.request("GET", "/api/v1/namespaces/snap-ns"))
    assert namespace["status"]["phase"] == "Active" and "deletionTimestamp" not in namespace["metadata"]
    assert cm_data(srv, "snap-ns") == {"inside": "i"}
    create_cm(srv, "snap-ns", "later", "l")  # admission sees the namespace again
    state.restore(srv, name)
    assert cm_data(srv, "snap-ns") == {"inside": "i"}


def test_a_custom_resource_definition_and_its_objects_come_back_and_go(srv: Server) -> None:
    before_crd = state.snapshot(srv)
    create_namespace(srv, "snap-crd")
    ok(srv.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD))
    widgets = WIDGETS.format(ns="snap-crd")
    wait_for(lambda: srv.request("GET", widgets).status == 200)
    for name in ("w1", "w2"):
        body = {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Widget",
            "metadata": {"name": name},
            "spec": {"n": name},
        }
        ok(srv.request("POST", widgets, body))
    with_crd = state.snapshot(srv)
    ok(srv.request("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{GROUP}"))
    wait_for(lambda: srv.request("GET", widgets).status == 404)

    state.restore(srv, with_crd)
    items = wait_for(
        lambda: srv.request("GET", widgets).status == 200 and ok(srv.request("GET", widgets))["items"]
    )
    assert sorted((i["metadata"]["name"], i["spec"]["n"]) for i in items) == [("w1", "w1"), ("w2", "w2")]

    state.restore(srv, before_crd)
    wait_for(lambda: srv.request("GET", widgets).status == 404)
    assert srv.request("GET", "/api/v1/namespaces/snap-crd").status == 404


ADMIN_ROLE = "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin"
NODE_LEASE_SA = "/api/v1/namespaces/kube-node-lease/serviceaccounts/default"


def _aggregated(server: Server) -> dict | None:
    role = ok(server.request("GET", ADMIN_ROLE))
    return role if len(role["rules"]) > 2 else None


def test_reset_brings_back_the_state_of_a_ready_server(srv: Server) -> None:
    # What controllers write after readiness from other objects stays as it is: the aggregated ClusterRoles'
    # rules (admin held two of them when the server became ready) and kube-node-lease's default ServiceAccount.
    admin = wait_for(lambda: _aggregated(srv))
    service_account = wait_for(lambda: (r := srv.request("GET", NODE_LEASE_SA)).status == 200 and r.json())
    create_namespace(srv, "snap-reset")
    create_cm(srv, "default", "snap-reset", "r")
    result = state.reset(srv)
    assert (
        ok(srv.request("GET", ADMIN_ROLE))["metadata"]["resourceVersion"]
        == admin["metadata"]["resourceVersion"]
    )
    after = ok(srv.request("GET", NODE_LEASE_SA))
    assert after["metadata"]["resourceVersion"] == service_account["metadata"]["resourceVersion"]
    assert result["deleted"] >= 2
    assert srv.request("GET", "/api/v1/namespaces/snap-reset").status == 404
    assert srv.request("GET", CM.format(ns="default") + "/snap-reset").status == 404
    for system in ("default", "kube-system", "kube-public", "kube-node-lease"):
        assert srv.request("GET", f"/api/v1/namespaces/{system}").status == 200
    assert srv.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin").status == 200
    assert srv.request("GET", "/api/v1/namespaces/default/services/kubernetes").status == 200


def test_a_restore_gives_back_the_cluster_ips_and_node_ports_it_removes(srv: Server) -> None:
    """The allocators' state lives in the store (the IPAddress objects, the node port range's bitmap), so it
    follows the restore: a Service created after the snapshot leaves nothing allocated behind it."""
    name = state.snapshot(srv)
    service = {
        "metadata": {"name": "snap-svc"},
        "spec": {"type": "NodePort", "clusterIP": "10.0.0.77", "ports": [{"port": 80, "nodePort": 30777}]},
    }
    services = "/api/v1/namespaces/default/services"
    ok(srv.request("POST", services, service))
    state.restore(srv, name)
    assert srv.request("GET", services + "/snap-svc").status == 404
    again = ok(srv.request("POST", services, service))
    assert again["spec"]["clusterIP"] == "10.0.0.77" and again["spec"]["ports"][0]["nodePort"] == 30777
    state.restore(srv, name)


def test_named_snapshots_are_bounded_and_errors_are_status(srv: Server) -> None:
    first = state.snapshot(srv, "snap-first")
    assert first == "snap-first" and "snap-first" in state.snapshots(srv)
    for _ in range(16):
        state.snapshot(srv)
    assert "snap-first" not in state.snapshots(srv) and len(state.snapshots(srv)) == 16
    unknown = srv.request("POST", "/debug/testing/snapshots/snap-first/restore")
    assert unknown.status == 404
    assert unknown.json()["reason"] == "NotFound" and unknown.json()["details"]["name"] == "snap-first"
    with pytest.raises(state.StateError) as raised:
        state.restore(srv, "snap-first")
    assert raised.value.status == 404
    last = state.snapshots(srv)[-1]
    assert srv.request("GET", f"/debug/testing/snapshots/{last}/restore").status == 405
    assert srv.request("PUT", "/debug/testing/snapshots").status == 405
    assert srv.request("GET", "/debug/testing/reset").json()["reason"] == "MethodNotAllowed"
    bad = srv.request("POST", "/debug/testing/snapshots", {"name": "Not_A_Name"})
    assert bad.status == 400 and bad.json()["reason"] == "BadRequest"
    assert srv.request("POST", "/debug/testing/snapshots", "{").status == 400
    assert srv.request("POST", f"/debug/testing/snapshots/{last}/other").status == 404
    state.delete_snapshot(srv, last)
    assert last not in state.snapshots(srv)
    assert srv.request("DELETE", f"/debug/testing/snapshots/{last}").status == 404
    assert "/debug/testing/snapshots/" not in json.loads(srv.request("GET", "/").body)["paths"]


def test_without_the_flag_there_are_no_snapshots(server: Server) -> None:
    for method, path in (
        ("POST", "/debug/testing/snapshots"),
        ("POST", "/debug/testing/snapshots/x/restore"),
        ("POST", "/debug/testing/reset"),
    ):
        assert server.request(method, path).status == 404
    with pytest.raises(state.StateError, match="--enable-testing-endpoints"):
        state.reset(server)


def test_restore_on_etcd(etcd: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    args = ["--storage-backend=etcd3", f"--etcd-servers={etcd.endpoints}", FLAG]
    server = Server(str(tmp_path_factory.mktemp("state-etcd")), args).start()
    try:
        create_namespace(server, "snap-etcd")
        create_cm(server, "snap-etcd", "kept", "k")
        name = state.snapshot(server)
        ok(server.request("DELETE", CM.format(ns="snap-etcd") + "/kept"))
        created = create_cm(server, "snap-etcd", "new", "n")
        since = created["metadata"]["resourceVersion"]
        conn, events = server.stream(
            CM.format(ns="snap-etcd") + f"?watch=1&resourceVersion={since}", timeout=20
        )
        seen: list[tuple[str, str, int]] = []
        reader = threading.Thread(target=lambda: seen.extend(_first_events(events, 2)), daemon=True)
        reader.start()
        try:
            state.restore(server, name)
            reader.join(15)
        finally:
            conn.close()
        assert sorted((t, n) for t, n, _ in seen) == [("ADDED", "kept"), ("DELETED", "new")]
        assert cm_data(server, "snap-etcd") == {"kept": "k"}
        state.reset(server)
        assert server.request("GET", "/api/v1/namespaces/snap-etcd").status == 404
    finally:
        server.stop()


BIG = 300  # ConfigMaps a restore deletes, then creates again: one group-commit batch each


def test_a_big_restore_with_every_controller_on_leaves_caches_informers_and_a_watch_coherent(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The write_many answers the restore before the watchers take its events: they must still all follow.
    An open watch sees every DELETED then every ADDED exactly once, in order; the watch cache agrees with
    the objects read from storage; the quota controller counts from its ConfigMap informer; the garbage
    collector's graph knows the owner brought back (its dependent goes when the owner does)."""
    ns = "snap-big"
    srv = Server(str(tmp_path_factory.mktemp("state-all")), [FLAG, "--controllers=*"]).start()
    try:
        create_namespace(srv, ns)
        quota = {"metadata": {"name": "q"}, "spec": {"hard": {"count/configmaps": "10000"}}}
        ok(srv.request("POST", f"/api/v1/namespaces/{ns}/resourcequotas", quota))
        empty = state.snapshot(srv)
        owner = create_cm(srv, ns, "owner", "1")
        dependent = {
            "metadata": {
                "name": "dependent",
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "name": "owner",
                        "uid": owner["metadata"]["uid"],
                    }
                ],
            }
        }
        ok(srv.request("POST", CM.format(ns=ns), dependent))
        for i in range(BIG):
            create_cm(srv, ns, f"cm-{i:04d}", "1")
        full = state.snapshot(srv)
        names = {"owner", "dependent", *(f"cm-{i:04d}" for i in range(BIG))}
        since = ok(srv.request("GET", CM.format(ns=ns)))["metadata"]["resourceVersion"]
        conn, events = srv.stream(CM.format(ns=ns) + f"?watch=1&resourceVersion={since}", timeout=30)
        seen: list[tuple[str, str, int]] = []
        reader = threading.Thread(
            target=lambda: seen.extend(_first_events(events, 2 * len(names))), daemon=True
        )
        reader.start()
        try:
            gone = state.restore(srv, empty)
            back = state.restore(srv, full)
            reader.join(20)
        finally:
            conn.close()
        assert (gone["deleted"], back["created"]) == (len(names), len(names))
        assert sorted(n for t, n, _ in seen[: len(names)] if t == "DELETED") == sorted(names)
        assert sorted(n for t, n, _ in seen[len(names) :] if t == "ADDED") == sorted(names)
        revisions = [rv for _, _, rv in seen]
        assert revisions == sorted(set(revisions)) and revisions[-1] <= int(back["resourceVersion"])

        listed = ok(srv.request("GET", CM.format(ns=ns)))
        assert int(listed["metadata"]["resourceVersion"]) >= int(back["resourceVersion"])
        cached = {i["metadata"]["name"]: i["metadata"]["resourceVersion"] for i in listed["items"]}
        assert names <= set(cached)
        for name in ("owner", "dependent", "cm-0000", f"cm-{BIG - 1:04d}"):  # what storage holds
            assert (
                ok(srv.request("GET", CM.format(ns=ns) + "/" + name))["metadata"]["resourceVersion"]
                == cached[name]
            )

        def used() -> str:
            q = ok(srv.request("GET", f"/api/v1/namespaces/{ns}/resourcequotas/q"))
            return (q.get("status") or {}).get("used", {}).get("count/configmaps", "")

        wait_for(lambda: used() == str(len(cached)))  # the informer's count: every ConfigMap, once
        ok(srv.request("DELETE", CM.format(ns=ns) + "/owner"))
        wait_for(lambda: srv.request("GET", CM.format(ns=ns) + "/dependent").status == 404)
    finally:
        srv.stop()
