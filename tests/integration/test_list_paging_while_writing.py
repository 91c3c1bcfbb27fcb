"""Paged lists of ConfigMaps while they are created, changed and deleted: every paged list is the state at
its first page's resourceVersion, as the watch from before the writes tells it (the pages come from the
watch cache's snapshot of that revision), on SQLite and on etcd."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from conftest import Server

NS = "paging"
CM = f"/api/v1/namespaces/{NS}/configmaps"
WRITES = 30


@pytest.fixture(scope="module", params=["sqlite", "etcd3"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    args = []
    if request.param == "etcd3":  # its cache learns it is fresh from etcd's progress notifications
        etcd = request.getfixturevalue("etcd")
        args = ["--storage-backend=etcd3", f"--etcd-servers={etcd.endpoints}"]
    srv = Server(str(tmp_path_factory.mktemp("apiserver")), args).start()
    assert srv.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}}).status == 201
    yield srv
    srv.stop()


def cm(name: str, value: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": value}}


def write(server: Server, done: threading.Event, written: list[int]) -> None:
    """Creates, updates and deletes, one at a time; `written` gets the status of each."""
    try:
        for i in range(WRITES):
            written.append(server.request("POST", CM, cm(f"w-{i:03d}", "new")).status)
            target = f"base-{i % 20:02d}"
            if i % 3 == 0:
                written.append(server.request("DELETE", f"{CM}/{target}").status)
            else:
                patch = {"data": {"v": str(i)}}
                written.append(server.request("PATCH", f"{CM}/{target}", json.dumps(patch),
                                              {"Content-Type": "application/merge-patch+json"}).status)
    finally:
        done.set()


def paged_list(server: Server, limit: int) -> tuple[int, dict[str, str], list[int | None]]:
    """The list page by page: its resourceVersion, name -> object resourceVersion, and the counts left."""
    items: dict[str, str] = {}
    counts: list[int | None] = []
    body = server.request("GET", f"{CM}?limit={limit}").json()
    revision = body["metadata"]["resourceVersion"]
    while True:
        assert body["metadata"]["resourceVersion"] == revision  # every page is read at the first's revision
        for item in body["items"]:
            assert item["metadata"]["name"] not in items
            items[item["metadata"]["name"]] = item["metadata"]["resourceVersion"]
        token = body["metadata"].get("continue")
        counts.append(body["metadata"].get("remainingItemCount"))
        if not token:
            return int(revision), items, counts
        body = server.request("GET", f"{CM}?limit={limit}&continue={token}").json()


def state_at(start: dict[str, str], events: list[dict[str, Any]], revision: int) -> dict[str, str]:
    state = dict(start)
    for event in events:
        meta = event["object"]["metadata"]
        if int(meta["resourceVersion"]) > revision:
            break
        if event["type"] == "DELETED":
            state.pop(meta["name"], None)
        else:
            state[meta["name"]] = meta["resourceVersion"]
    return state


def test_paged_lists_while_writing_show_their_first_pages_revision(server):
    for i in range(20):
        assert server.request("POST", CM, cm(f"base-{i:02d}", "old")).status == 201
    listed = server.request("GET", CM).json()
    start = {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in listed["items"]}
    done = threading.Event()
    written: list[int] = []
    writer = threading.Thread(target=write, args=(server, done, written))
    writer.start()
    lists = []
    while not done.is_set() or len(lists) < 3:
        lists.append(paged_list(server, 7))
    writer.join()
    watched = server.request("GET", f"{CM}?watch=1&resourceVersion={listed['metadata']['resourceVersion']}"
                                    f"&timeoutSeconds=1")
    events = [json.loads(line) for line in watched.body.splitlines()]
    assert len(events) == written.count(200) + written.count(201) > WRITES  # the rest: 404, already deleted
    for revision, items, counts in lists:
        assert items == state_at(start, events, revision)
        expected_counts = [len(items) - 7 * page for page in range(1, len(counts))] + [None]
        assert counts == expected_counts
    assert len({revision for revision, _, _ in lists}) > 1  # the writes went on between the lists
