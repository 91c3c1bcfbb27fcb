"""A strategic merge patch of long lists does linear work (issue 11, item 5): merging, partitioning and ordering
lists of thousands of items by merge key look items up in a dict, not by a search of the list per item (which
made a 5,000-entry env patch hold the event loop for over a minute). Counted in comparisons, not timed."""

from __future__ import annotations

import pytest

from kube_apiserver.api import schemas
from kube_apiserver.apimachinery import strategicpatch
from kube_apiserver.apimachinery.openapischema import SchemaSource

DEPLOYMENT = SchemaSource(schemas.definitions, schemas.schema_name).for_kind("apps", "v1", "Deployment")
N = 2_000


def env_deployment(env: list[dict]) -> dict:
    return {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i", "env": env}]}}}}


def counting_equal(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    plain = strategicpatch._go_equal

    def equal(left: object, right: object) -> bool:
        calls[0] += 1
        return plain(left, right)

    monkeypatch.setattr(strategicpatch, "_go_equal", equal)
    return calls


def test_merging_long_lists_by_key_is_linear(monkeypatch: pytest.MonkeyPatch):
    current = env_deployment([{"name": f"E{i}", "value": "a"} for i in range(N)])
    # Every other entry changed, new ones added, one deleted, in an order that reorders the list.
    patch_env = [{"name": f"E{i}", "value": "b"} for i in range(0, N, 2)] + \
        [{"name": f"N{i}", "value": "n"} for i in range(N // 4)] + [{"name": "E1", "$patch": "delete"}]
    patch = env_deployment(list(reversed(patch_env)))
    calls = counting_equal(monkeypatch)
    out = strategicpatch.strategic_merge_patch(current, patch, DEPLOYMENT)
    assert calls[0] < 5 * N  # a search per item is millions
    env = out["spec"]["template"]["spec"]["containers"][0]["env"]
    names = [e["name"] for e in env]
    assert len(env) == N - 1 + N // 4 and "E1" not in names
    assert {e["value"] for e in env if e["name"] in ("E0", "E2")} == {"b"}
    assert next(e for e in env if e["name"] == "E3")["value"] == "a"
    monkeypatch.undo()
    assert out == strategicpatch.strategic_merge_patch(current, patch, DEPLOYMENT)


def test_set_element_order_of_a_long_list_is_linear(monkeypatch: pytest.MonkeyPatch):
    current = env_deployment([{"name": f"E{i}", "value": "a"} for i in range(N)])
    order = [{"name": f"E{i}"} for i in reversed(range(N))]
    patch = {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "$setElementOrder/env": order, "env": [{"name": "E5", "value": "z"}]}]}}}}
    calls = counting_equal(monkeypatch)
    out = strategicpatch.strategic_merge_patch(current, patch, DEPLOYMENT)
    assert calls[0] < 5 * N  # one pass checks the patch against the order; a search per item is millions
    env = out["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == [f"E{i}" for i in reversed(range(N))]
    assert env[N - 1 - 5] == {"name": "E5", "value": "z"}


CONFIGMAP = SchemaSource(schemas.definitions, schemas.schema_name).for_kind("", "v1", "ConfigMap")


def finalizers(values: list[str]) -> dict:
    return {"metadata": {"name": "cm", "finalizers": values}}


def primitive_merge(n: int) -> tuple[dict, dict]:
    current = finalizers([f"a/{i % (n // 2)}" for i in range(n)])  # each value twice
    return current, finalizers([f"b/{i}" for i in range(n)] + [f"a/{i}" for i in range(0, n, 3)])


def test_merging_a_long_primitive_list_is_linear(monkeypatch: pytest.MonkeyPatch):
    """metadata.finalizers merge as a set: the merged list is deduplicated by each value's positions, not by
    comparing every pair."""
    current, patch = primitive_merge(N)
    calls = counting_equal(monkeypatch)
    out = strategicpatch.strategic_merge_patch(current, patch, CONFIGMAP)
    assert calls[0] < 5 * N  # every pair is millions
    items = current["metadata"]["finalizers"] + patch["metadata"]["finalizers"]
    assert sorted(out["metadata"]["finalizers"]) == sorted(set(items))


def test_a_merged_primitive_list_keeps_the_order_of_gos_swaps(monkeypatch: pytest.MonkeyPatch):
    current, patch = primitive_merge(300)
    out = strategicpatch.strategic_merge_patch(current, patch, CONFIGMAP)
    monkeypatch.setattr(strategicpatch, "_deduplicate", strategicpatch._deduplicate_by_scan)
    assert out == strategicpatch.strategic_merge_patch(current, patch, CONFIGMAP)


def test_deduplication_leaves_the_order_of_gos_swaps():
    for items in ([1, 2, 1, 3, 2, 1], ["a", "b", "a", "a", "c", "b", "a"], [1, 1.0, True, "1", 1, True, None, None],
                  [3, 3, 3], [], ["x"], [2, 1, 2, 1, 2, 1, 3]):
        expected = strategicpatch._deduplicate_by_scan(list(items))
        got = strategicpatch._deduplicate(list(items))
        assert [(type(v), v) for v in got] == [(type(v), v) for v in expected], items


def test_deleting_from_a_long_primitive_list_is_linear(monkeypatch: pytest.MonkeyPatch):
    current = finalizers([f"a/{i}" for i in range(N)])
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": [f"a/{i}" for i in range(0, N, 2)]}}
    calls = counting_equal(monkeypatch)
    out = strategicpatch.strategic_merge_patch(current, patch, CONFIGMAP)
    assert calls[0] < 5 * N
    assert out["metadata"]["finalizers"] == [f"a/{i}" for i in range(1, N, 2)]


def test_deleting_many_items_of_a_long_list_is_linear(monkeypatch: pytest.MonkeyPatch):
    current = env_deployment([{"name": f"E{i}", "value": "a"} for i in range(N)])
    patch = env_deployment([{"name": f"E{i}", "$patch": "delete"} for i in range(0, N, 2)] +
                           [{"name": "X", "value": "x"}])
    calls = counting_equal(monkeypatch)
    out = strategicpatch.strategic_merge_patch(current, patch, DEPLOYMENT)
    assert calls[0] < 5 * N  # a search per deletion is millions
    env = out["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == ["X"] + [f"E{i}" for i in range(1, N, 2)]  # new items first, as Go orders


def test_deletions_leave_the_backing_array_as_go_does():
    """Go deletes in place, and appends into the room the deletions left: each freed slot holds the item that was
    last when it was freed (what a $setElementOrder ordering then sees)."""
    for keys, deleted in (([1, 2, 1, 3, 2, 4], [1]), (["a", "b", "c", "d"], ["d", "a"]), ([1, 1, 1], [1, 2]),
                          ([1, "1", 1.0, True], [1.0, "1"]), ([3, 2, 1], [])):
        items = [{"k": key, "at": at} for at, key in enumerate(keys)]
        by_go, indexed = [dict(item) for item in items], [dict(item) for item in items]
        live = len(by_go)
        for value in deleted:
            live = strategicpatch._delete_matching(by_go, live, "k", value)
        deletions = strategicpatch._Deletions(indexed, "k")
        for value in deleted:
            deletions.delete(value)
        assert (deletions.finish(), indexed) == (live, by_go), (keys, deleted)
