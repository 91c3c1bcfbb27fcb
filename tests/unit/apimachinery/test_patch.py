from __future__ import annotations

import pytest

from kube_apiserver.apimachinery import patch
from kube_apiserver.apimachinery.errors import StatusError


def test_json_patch_operations():
    doc = {"a": {"b": [1, 2]}, "c": "x"}
    out = patch.json_patch(doc, [
        {"op": "add", "path": "/a/b/-", "value": 3},
        {"op": "replace", "path": "/c", "value": "y"},
        {"op": "move", "from": "/c", "path": "/d"},
        {"op": "copy", "from": "/d", "path": "/e"},
        {"op": "remove", "path": "/a/b/0"},
        {"op": "test", "path": "/e", "value": "y"},
        {"op": "add", "path": "/f~1g", "value": True},
    ])
    assert out == {"a": {"b": [2, 3]}, "d": "y", "e": "y", "f/g": True}
    assert doc == {"a": {"b": [1, 2]}, "c": "x"}  # the input is untouched


@pytest.mark.parametrize(("ops", "message"), [
    ([{"op": "test", "path": "/c", "value": "no"}], "testing value /c failed: test failed"),
    ([{"op": "remove", "path": "/zz"}], "Unable to remove nonexistent key: zz: missing value"),
])
def test_json_patch_failures_are_422(ops, message):
    with pytest.raises(StatusError) as err:
        patch.json_patch({"c": "x"}, ops)
    assert err.value.code == 422 and err.value.message == message


def test_merge_patch_rfc7386():
    assert patch.merge_patch({"a": "b", "c": {"d": "e", "f": "g"}}, {"a": "z", "c": {"f": None}}) == {
        "a": "z", "c": {"d": "e"}}
    assert patch.merge_patch({"l": [1, 2]}, {"l": [3]}) == {"l": [3]}


@pytest.mark.parametrize(("op", "message"), [
    ({"op": "add", "path": 5, "value": 1}, "add operation failed to decode path: missing value"),
    ({"op": "move", "from": None, "path": "/a"}, "move operation failed to decode from: missing value"),
    ({"op": 5, "path": "/a"}, "Unexpected kind: unknown"),
])
def test_json_patch_operands_of_the_wrong_type_are_422(op, message):
    with pytest.raises(StatusError) as caught:
        patch.json_patch({"a": 1}, [op])
    assert (caught.value.code, caught.value.message) == (422, message)
