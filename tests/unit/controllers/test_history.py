"""ControllerRevision helpers (pkg/controller/history): the hash as kube-controller-manager computes it
(FNV-32, FNV-1, of the data's JSON and the collision count), names, equality, order, truncation, and
creating a revision past a name collision against a real server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from inprocess import controller_cluster
from kube_apiserver.apimachinery.labels import selector_from_set
from kube_apiserver.controllers.history import (
    CONTROLLER_REVISION_HASH_LABEL,
    History,
    controller_revision_name,
    equal_revision,
    fnv32,
    go_json,
    hash_controller_revision,
    new_controller_revision,
    next_revision,
    revisions_to_truncate,
    sort_controller_revisions,
)

# The data and name of a revision kube-controller-manager v1.34 wrote (upstream's
# pkg/controller/statefulset/testdata/compatibility_revision_1.34.0.json): name test-776999688b.
UPSTREAM_DATA = json.loads(
    '{"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"test":"value"},"labels":{"app":"foo"}},'
    '"spec":{"containers":[{"image":"test","imagePullPolicy":"Always","name":"test","resources":{},'
    '"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],'
    '"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler",'
    '"securityContext":{},"terminationGracePeriodSeconds":30}}}}'
)
PARENT = {"metadata": {"name": "test", "namespace": "default", "uid": "u1"}}


def test_the_hash_is_kube_controller_managers() -> None:
    assert fnv32(b"") == 0x811C9DC5 and fnv32(b"a") == 0x050C5D7E  # FNV-1, not FNV-1a (0xe40c292c)
    assert hash_controller_revision(UPSTREAM_DATA, 0) == "776999688b"
    assert hash_controller_revision(UPSTREAM_DATA, 1) != "776999688b"
    revision = new_controller_revision(PARENT, "apps/v1", "StatefulSet", {"app": "foo"}, UPSTREAM_DATA, 2, 0)
    assert revision["metadata"]["name"] == "test-776999688b"
    assert revision["metadata"]["labels"] == {"app": "foo", CONTROLLER_REVISION_HASH_LABEL: "776999688b"}
    assert revision["metadata"]["ownerReferences"][0]["uid"] == "u1" and revision["revision"] == 2


def test_go_json_escapes_as_encoding_json() -> None:
    assert go_json({"b": "<&>", "a": 1}) == b'{"a":1,"b":"\\u003c\\u0026\\u003e"}'
    assert controller_revision_name("x" * 300, "h") == "x" * 223 + "-h"


def _rev(name: str, number: int, created: str = "2026-01-01T00:00:00Z", data: object = None) -> dict:
    return {"metadata": {"name": name, "creationTimestamp": created}, "revision": number, "data": data}


def test_order_equality_and_truncation() -> None:
    revs = [
        _rev("c", 3),
        _rev("b", 1, "2026-01-02T00:00:00Z"),
        _rev("a", 1, "2026-01-02T00:00:00Z"),
        _rev("z", 1),
    ]
    ordered = sort_controller_revisions(revs)
    assert [r["metadata"]["name"] for r in ordered] == ["z", "a", "b", "c"]
    assert next_revision(ordered) == 4 and next_revision([]) == 1
    assert equal_revision(_rev("x", 1, data={"a": 1}), _rev("y", 2, data={"a": 1}))
    assert not equal_revision(_rev("x", 1, data={"a": 1}), _rev("y", 2, data={"a": 2}))
    # Live revisions are kept whatever their age; of the rest, the oldest go beyond the limit.
    assert [r["metadata"]["name"] for r in revisions_to_truncate(ordered, {"z"}, 1)] == ["a", "b"]
    assert (
        revisions_to_truncate(ordered, set(), -1) == [] and len(revisions_to_truncate(ordered, set(), 0)) == 4
    )


def test_create_probes_past_a_name_collision(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller_cluster(str(tmp_path), lambda c: []) as cluster:
            client = cluster.client
            api = client.resource("apps", "v1", "controllerrevisions").namespace("default")
            informer = cluster.informers.for_resource("apps", "v1", "controllerrevisions")
            history = History(client, informer.indexer)
            parent = {"metadata": {"name": "web", "namespace": "default", "uid": "parent-uid"}}
            wanted = new_controller_revision(parent, "apps/v1", "StatefulSet", {"app": "web"}, {"v": 1}, 1, 0)
            # Another revision already holds the name with other data: the count goes up, the name changes.
            squatter = {**wanted, "metadata": {**wanted["metadata"], "ownerReferences": []}, "data": {"v": 2}}
            await api.create(squatter)
            created, count = await history.create_controller_revision(parent, wanted, 0)
            assert (
                count == 1 and created["metadata"]["name"] == f"web-{hash_controller_revision({'v': 1}, 1)}"
            )
            # The same data again: the existing revision is returned, no new one.
            again, count = await history.create_controller_revision(parent, wanted, 1)
            assert again["metadata"]["uid"] == created["metadata"]["uid"] and count == 1
            informer.start()
            await informer.synced.wait()
            await asyncio.sleep(0.1)
            listed = history.list_controller_revisions(parent, selector_from_set({"app": "web"}))
            # Both are listed: the parent's own and the orphan (the squatter has no controller).
            assert sorted(r["metadata"]["name"] for r in listed) == sorted(
                [created["metadata"]["name"], squatter["metadata"]["name"]]
            )
            renumbered = await history.update_controller_revision(created, 5)
            assert renumbered["revision"] == 5
            adopted = await history.adopt_controller_revision(
                parent,
                "apps/v1",
                "StatefulSet",
                {**squatter, "metadata": (await api.get(squatter["metadata"]["name"]))["metadata"]},
            )
            assert adopted["metadata"]["ownerReferences"][0]["uid"] == "parent-uid"
            released = await history.release_controller_revision(parent, adopted)
            assert released is not None and not released["metadata"].get("ownerReferences")

    asyncio.run(main())
