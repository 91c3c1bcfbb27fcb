"""Watch and list semantics over HTTP: bookmarks, watch-list, transitions, expiry, option validation."""

from __future__ import annotations

import json
import threading

from conftest import Server

CM = "/api/v1/namespaces/default/configmaps"


def events(response) -> list[dict]:
    return [json.loads(line) for line in response.body.splitlines()]


def cm(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}}


def test_bookmark_before_a_clean_close(server):
    rv = server.request("POST", CM, cm("bm-a")).json()["metadata"]["resourceVersion"]
    r = server.request("GET", f"{CM}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=1")
    got = events(r)
    assert got[-1]["type"] == "BOOKMARK"
    bookmark = got[-1]["object"]
    assert bookmark["kind"] == "ConfigMap" and bookmark["apiVersion"] == "v1"
    assert int(bookmark["metadata"]["resourceVersion"]) >= int(rv)
    plain = server.request("GET", f"{CM}?watch=1&resourceVersion={rv}&timeoutSeconds=1")
    assert all(e["type"] != "BOOKMARK" for e in events(plain))


def test_send_initial_events_ends_with_marked_bookmark(server):
    server.request("POST", CM, cm("wl-a", set="wl"))
    server.request("POST", CM, cm("wl-b", set="wl"))
    r = server.request("GET", f"{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                              f"&allowWatchBookmarks=true&labelSelector=set%3Dwl&timeoutSeconds=1")
    got = events(r)
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in got[:3]] == [
        ("ADDED", "wl-a"), ("ADDED", "wl-b"), ("BOOKMARK", None)]
    assert got[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_label_selector_transitions(server):
    start = server.request("GET", CM).json()["metadata"]["resourceVersion"]
    server.request("POST", CM, cm("tr", tier="front"))
    obj = server.request("GET", f"{CM}/tr").json()
    obj["metadata"]["labels"] = {"tier": "back"}
    obj = server.request("PUT", f"{CM}/tr", obj).json()
    obj["metadata"]["labels"] = {"tier": "front"}
    server.request("PUT", f"{CM}/tr", obj)
    r = server.request("GET", f"{CM}?watch=1&resourceVersion={start}&labelSelector=tier%3Dfront&timeoutSeconds=1")
    assert [e["type"] for e in events(r)] == ["ADDED", "DELETED", "ADDED"]


def test_too_old_resource_version_is_an_error_event(tmp_path):
    first = Server(str(tmp_path)).start()
    first.request("POST", CM, cm("old"))
    first.stop()
    server = Server(str(tmp_path)).start()  # its watch cache begins after everything above
    try:
        r = server.request("GET", f"{CM}?watch=1&resourceVersion=1&timeoutSeconds=1")
    finally:
        server.stop()
    assert r.status == 200
    (event,) = events(r)
    assert event["type"] == "ERROR"
    status = event["object"]
    assert status["code"] == 410 and status["reason"] == "Expired"
    assert status["message"].startswith("too old resource version: 1 (")


def test_list_option_validation(server):
    r = server.request("GET", f"{CM}?resourceVersionMatch=Exact")
    assert r.status == 422
    assert r.json()["message"] == ('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
                                   'resourceVersionMatch is forbidden unless resourceVersion is provided')
    assert r.json()["details"] == {"group": "meta.k8s.io", "kind": "ListOptions", "causes": [{
        "reason": "FieldValueForbidden", "field": "resourceVersionMatch",
        "message": "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"}]}
    w = server.request("GET", f"{CM}?watch=1&sendInitialEvents=true")
    assert "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan" in w.json()["message"]
    listed = server.request("GET", f"{CM}?sendInitialEvents=true")
    assert "sendInitialEvents is forbidden for list" in listed.json()["message"]
    too_large = server.request("GET", f"{CM}?resourceVersion=99999999&resourceVersionMatch=NotOlderThan")
    assert too_large.status == 504 and too_large.json()["details"]["causes"][0]["reason"] == \
        "ResourceVersionTooLarge"


def test_resource_version_zero_and_exact_lists(server):
    created = server.request("POST", CM, cm("rv-a")).json()
    rv = created["metadata"]["resourceVersion"]
    server.request("DELETE", f"{CM}/rv-a")
    exact = server.request("GET", f"{CM}?resourceVersion={rv}&resourceVersionMatch=Exact").json()
    assert "rv-a" in [i["metadata"]["name"] for i in exact["items"]] and exact["metadata"]["resourceVersion"] == rv
    now = server.request("GET", f"{CM}?resourceVersion=0").json()
    assert "rv-a" not in [i["metadata"]["name"] for i in now["items"]]


def test_many_http_watchers_see_every_event(server):
    start = server.request("GET", CM).json()["metadata"]["resourceVersion"]
    expected = [f"fan-{i:03d}" for i in range(100)]
    results: list[list[str]] = []
    lock = threading.Lock()
    opened = threading.Barrier(21)

    def watch() -> None:
        # Each watcher reads until it has seen as many events as were written: no deadline on the writes.
        conn, stream = server.stream(f"{CM}?watch=1&resourceVersion={start}&labelSelector=fan%3Dout")
        opened.wait()
        names = [next(stream)["object"]["metadata"]["name"] for _ in expected]
        conn.close()
        with lock:
            results.append(names)

    threads = [threading.Thread(target=watch) for _ in range(20)]
    for t in threads:
        t.start()
    opened.wait(30)
    for name in expected:
        server.request("POST", CM, cm(name, fan="out"))
    for t in threads:
        t.join(60)
    assert len(results) == 20 and all(r == expected for r in results)
