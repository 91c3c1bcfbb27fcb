"""Patches: JSON patch (RFC 6902) and JSON merge patch (RFC 7386).

The strategic merge patch, which needs the kind's schema, is in strategicpatch.py."""

from __future__ import annotations

from typing import Any

from . import deepjson, errors

JSONValue = Any

# kube-apiserver's JSONPatchMaxCopyBytes (json-patch's AccumulatedCopySizeLimit): what "copy" operations may
# add to a document in all, counted as the JSON of each copied value. Without it a few copies of the whole
# document double it each time.
MAX_COPY_BYTES = 3 * 1024 * 1024


class PatchError(Exception):
    pass


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer: {path!r}")
    return [_unescape(t) for t in path[1:].split("/")]


def _container(doc: JSONValue, tokens: list[str], path: str) -> JSONValue:
    node = doc
    for token in tokens:
        if isinstance(node, dict):
            if token not in node:
                raise PatchError(f"doc is missing path: \"{path}\": missing value")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, path, allow_end=False)]
        else:
            raise PatchError(f"doc is missing path: \"{path}\": missing value")
    return node


def _index(node: list, token: str, path: str, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(node)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"invalid array index: {token}")
    index = int(token)
    if index > len(node) or (index == len(node) and not allow_end):
        raise PatchError(f"Unable to access invalid index: {index}: invalid index referenced")
    return index


def _get(doc: JSONValue, path: str) -> JSONValue:
    tokens = _pointer(path)
    return _container(doc, tokens, path)


def _add(doc: JSONValue, path: str, value: JSONValue) -> JSONValue:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _container(doc, tokens[:-1], path)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, path, allow_end=True), value)
    else:
        raise PatchError(f"doc is missing path: \"{path}\": missing value")
    return doc


def _remove(doc: JSONValue, path: str) -> tuple[JSONValue, JSONValue]:
    tokens = _pointer(path)
    if not tokens:
        raise PatchError("unable to remove the whole document")
    parent = _container(doc, tokens[:-1], path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"Unable to remove nonexistent key: {last}: missing value")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, path, allow_end=False))
    raise PatchError(f"doc is missing path: \"{path}\": missing value")


class _CopyBudget:
    """The bytes "copy" operations have added so far in one patch."""

    __slots__ = ("copied",)

    def __init__(self) -> None:
        self.copied = 0

    def copy(self, value: JSONValue) -> JSONValue:
        encoded = deepjson.dumps(value)  # as json-patch: the copy is the JSON of the value, and counts its size
        self.copied += len(encoded)
        if self.copied > MAX_COPY_BYTES:
            raise PatchError(f"Unable to complete the copy, the accumulated size increase of copy is "
                             f"{self.copied}, exceeding the limit {MAX_COPY_BYTES}")
        return deepjson.loads(encoded)


def json_patch(doc: JSONValue, operations: JSONValue) -> JSONValue:
    if not isinstance(operations, list):
        raise errors.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    doc = copy_json(doc)
    budget = _CopyBudget()
    try:
        for op in operations:
            doc = _apply_op(doc, op, budget)
    except PatchError as err:
        raise errors.StatusError(422, "Invalid", str(err)) from None
    return doc


def _operand(op: dict[str, Any], kind: str, name: str) -> str:
    """An operation's path or from, which must be a JSON string (json-patch: "failed to decode path")."""
    value = op.get(name)
    if not isinstance(value, str):
        raise PatchError(f"{kind} operation failed to decode {name}: missing value")
    return value


def _apply_op(doc: JSONValue, op: JSONValue, budget: _CopyBudget) -> JSONValue:
    if not isinstance(op, dict) or "op" not in op:
        raise PatchError("Unexpected kind: <nil>")
    kind = op["op"] if isinstance(op["op"], str) else "unknown"
    if kind not in ("add", "remove", "replace", "move", "copy", "test"):
        raise PatchError(f"Unexpected kind: {kind}")
    path = _operand(op, kind, "path")
    if kind == "add":
        return _add(doc, path, copy_json(op.get("value")))
    if kind == "remove":
        return _remove(doc, path)[0]
    if kind == "replace":
        doc, _ = _remove(doc, path) if _pointer(path) else (doc, None)
        return _add(doc, path, copy_json(op.get("value")))
    if kind == "move":
        doc, value = _remove(doc, _operand(op, kind, "from"))
        return _add(doc, path, value)
    if kind == "copy":
        return _add(doc, path, budget.copy(_get(doc, _operand(op, kind, "from"))))
    if kind == "test":
        if _get(doc, path) != op.get("value"):
            raise PatchError(f"testing value {path} failed: test failed")
        return doc
    raise PatchError(f"Unexpected kind: {kind}")


def merge_patch(doc: JSONValue, patch: JSONValue) -> JSONValue:
    """RFC 7386; `doc` is left as it is (copied once, not once per level: a deep document stays linear)."""
    if not isinstance(patch, dict):
        return copy_json(patch)
    return _merge_into(copy_json(doc) if isinstance(doc, dict) else {}, patch)


def _merge_into(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            current = target.get(key)
            target[key] = _merge_into(current if isinstance(current, dict) else {}, value)
        else:
            target[key] = copy_json(value)
    return target


def copy_json(value: JSONValue) -> JSONValue:
    """A deep copy of a decoded JSON value (dicts, lists and immutable scalars), several times cheaper than
    copy.deepcopy, which keeps a memo of every object for cycles and shared references JSON cannot have."""
    if isinstance(value, dict):
        return {key: copy_json(item) if isinstance(item, dict | list) else item for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) if isinstance(item, dict | list) else item for item in value]
    return value
