"""Strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch), driven by a kind's OpenAPI schema.

Each field's `x-kubernetes-patch-strategy` (merge, replace, retainKeys) and `x-kubernetes-patch-merge-key`
say how a patch goes into the live object: maps merge key by key; lists are replaced unless their strategy
is merge, then lists of maps merge item by item on the merge key and lists of primitives merge as ordered
sets. Directives: `$patch: replace|delete|merge`, `$retainKeys`, `$deleteFromPrimitiveList/<field>` and
`$setElementOrder/<field>`. Errors are worded, and answered with the status, as kube-apiserver does."""

from __future__ import annotations

import copy
import heapq
from dataclasses import dataclass
from typing import Any

from . import errors
from .field import format_bad_value
from .openapischema import REF, Node

JSONMap = dict[str, Any]

DIRECTIVE = "$patch"
DELETE, REPLACE, MERGE = "delete", "replace", "merge"
RETAIN_KEYS_STRATEGY = "retainKeys"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
SET_ELEMENT_ORDER = "$setElementOrder"

# mergepatch's sentinel errors, answered 400 (or 422) by the patch handler.
BAD_JSON_DOC = "invalid JSON document"
NO_LIST_OF_LISTS = "lists of lists are not supported"
BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
BAD_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list"
UNSUPPORTED_FORMAT = "strategic merge patch format is not supported"


class UnknownStatusError(errors.StatusError):
    """An error that is not an API status: kube-apiserver answers 500 with an empty reason."""

    def __init__(self, message: str):
        super().__init__(500, "", message)

    def status(self) -> dict[str, Any]:
        body = super().status()
        body.pop("reason", None)
        return body


def _lists_of_lists() -> errors.StatusError:
    return errors.StatusError(422, "Invalid", "the server rejected our request due to an error in our request", {})


def strategic_merge_patch(original: JSONMap, patch: JSONMap, schema: Node | None, *,
                          mutate_patch: bool = False) -> JSONMap:
    """StrategicMergeMapPatch: the original with the patch applied. The original is never changed; the
    patch is consumed as Go consumes it (directives removed) only when mutate_patch is set."""
    if patch is None:
        patch = {}
    if not isinstance(patch, dict):
        raise errors.bad_request(f"json: cannot unmarshal {_json_kind(patch)} into Go value of type "
                                 f"map[string]interface {{}}")
    original = copy.deepcopy(original) if isinstance(original, dict) else {}
    if not mutate_patch:
        patch = copy.deepcopy(patch)
    return _merge_map(original, patch, _Type(schema))


# ---- what Go's PatchMetaFromStruct knows of a field ----

@dataclass(frozen=True)
class _Type:
    node: Node | None
    ref: str = ""  # the definition the node came from ("" for the kind itself)

    @property
    def kind(self) -> str:
        """reflect.Kind of the Go type behind the schema."""
        node = self.node
        if node is None or node.properties() or node.int_or_string or "oneOf" in node.schema:
            return "struct"
        if node.additional() is not None:
            return "map"
        return {"array": "slice", "object": "struct", "": "struct", "integer": "int64", "number": "float64",
                "boolean": "bool"}.get(node.type, node.type)

    @property
    def name(self) -> str:
        """The Go type's name: the last part of its definition's name."""
        if self.ref:
            return self.ref.rsplit(".", 1)[-1]
        if self.node is None:
            return ""
        props = self.node.schema.get("properties")
        for name, definition in self.node.definitions.items():
            if props is not None and definition.get("properties") is props:
                return name.rsplit(".", 1)[-1]
        return ""


def _ref_of(schema: Any) -> str:
    if not isinstance(schema, dict):
        return ""
    ref = schema.get("$ref")
    all_of = schema.get("allOf")
    if not isinstance(ref, str) and isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        ref = all_of[0].get("$ref")
    return ref[len(REF):] if isinstance(ref, str) and ref.startswith(REF) else ""


def _lookup_struct(parent: _Type, key: str) -> tuple[_Type, list[str], str]:
    """LookupPatchMetadataForStruct: the field's type, patch strategies and merge key."""
    node = parent.node
    if node is None or node.preserves_unknown_fields:
        return _Type(None), [""], ""
    if parent.kind != "struct":
        raise UnknownStatusError(f"merging an object in json but data type is not struct, instead is: "
                                 f"{parent.kind}")
    props = node.properties()
    raw = props.get(key)
    if raw is None:  # encoding/json falls back to a case-insensitive match
        raw = next((v for k, v in props.items() if k.lower() == key.lower()), None)
    if raw is None:
        raise UnknownStatusError(f'unable to find api field in struct {parent.name} for the json field "{key}"')
    child = Node.of(raw, node.definitions)
    if child is None:
        return _Type(None), [""], ""
    return _Type(child, _ref_of(raw)), child.patch_strategy.split(","), child.patch_merge_key


def _lookup_slice(parent: _Type, key: str) -> tuple[_Type, list[str], str]:
    """LookupPatchMetadataForSlice: like a struct field, but the type is the list's item type."""
    field, strategies, merge_key = _lookup_struct(parent, key)
    if field.node is None or field.node.type != "array":
        return field, strategies, merge_key
    return _Type(field.node.items(), _ref_of(field.node.schema.get("items"))), strategies, merge_key


def _strategy(strategies: list[str]) -> str:
    """extractRetainKeysPatchStrategy: the strategy besides retainKeys."""
    if len(strategies) == 1:
        return "" if strategies[0] == RETAIN_KEYS_STRATEGY else strategies[0]
    if len(strategies) == 2 and RETAIN_KEYS_STRATEGY in strategies:
        return strategies[1] if strategies[0] == RETAIN_KEYS_STRATEGY else strategies[0]
    raise UnknownStatusError(f"unexpected patch strategy: {go_format(strategies)}")


# ---- maps ----

def _merge_map(original: JSONMap, patch: JSONMap, typ: _Type) -> JSONMap:
    if DIRECTIVE in patch:
        return _map_directive(patch)
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, typ)
    for key in list(patch):
        field, delete_list = key, False
        if key.startswith(DELETE_FROM_PRIMITIVE_LIST):
            field, delete_list = _extract_key(key, DELETE_FROM_PRIMITIVE_LIST), True
        _merge_field(original, field, patch[key], typ, delete_list)
    return original


def _map_directive(patch: JSONMap) -> JSONMap:
    directive = patch[DIRECTIVE]
    if directive == REPLACE:
        del patch[DIRECTIVE]
        return patch
    if directive == DELETE:
        return {}
    raise UnknownStatusError(_bad_patch_type(directive, patch))


def _merge_field(original: JSONMap, key: str, value: Any, typ: _Type, delete_list: bool) -> None:
    if value is None:
        original.pop(key, None)
        return
    if key not in original or _go_type(original[key]) != _go_type(value):
        if not delete_list:
            _discard_nulls(value)
            _set_without_directives(original, key, value)
        return
    current = original[key]
    if isinstance(value, dict):
        field, strategies, _ = _lookup_struct(typ, key)
        original[key] = value if _strategy(strategies) == REPLACE else _merge_map(current, value, field)
    elif isinstance(value, list):
        field, strategies, merge_key = _lookup_slice(typ, key)
        original[key] = _merge_slice_handler(current, value, field, _strategy(strategies), merge_key, delete_list)
    else:
        original[key] = value


def _set_without_directives(target: JSONMap, key: str, value: Any) -> None:
    kept, keep = _remove_directives(value)
    if keep:
        target[key] = kept
    else:
        target.pop(key, None)


def _apply_retain_keys(original: JSONMap, patch: JSONMap) -> None:
    if RETAIN_KEYS not in patch:
        return
    retain = patch.pop(RETAIN_KEYS)
    if not isinstance(retain, list):
        raise errors.bad_request(BAD_RETAIN_KEYS)
    keep = {v for v in retain if isinstance(v, str)}
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if key not in keep:
            raise errors.bad_request(BAD_RETAIN_KEYS)
    for key in [k for k in original if k not in keep]:
        del original[key]


def _extract_key(key: str, prefix: str) -> str:
    parts = key.split("/", 1)
    if len(parts) < 2 or parts[0] != prefix:
        raise errors.bad_request(BAD_PRIMITIVE_LIST if prefix == DELETE_FROM_PRIMITIVE_LIST else BAD_SET_ELEMENT_ORDER)
    return parts[1]


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """removeDirectives: drops maps carrying `$patch` (and says whether the value itself stays)."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for key in list(value):
            _set_without_directives(value, key, value[key])
        return value, True
    if isinstance(value, list):
        return [kept for kept, keep in map(_remove_directives, value) if keep], True
    return value, True


def _discard_nulls(value: Any) -> None:
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for item in value.values():
            _discard_nulls(item)
    elif isinstance(value, list):
        for item in value:
            _discard_nulls(item)


# ---- $setElementOrder ----

def _merge_ordered_lists(original: JSONMap, patch: JSONMap, typ: _Type) -> None:
    """mergePatchIntoOriginal: merges each list that has a $setElementOrder, then orders it."""
    for key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise UnknownStatusError(_bad_arg_type("[]interface {}", order))
        field = _extract_key(key, SET_ELEMENT_ORDER)
        current, wanted = original.get(field), patch.get(field)
        for value, present in ((current, field in original), (wanted, field in patch)):
            if present and not isinstance(value, list):
                raise UnknownStatusError(_bad_arg_type("[]interface {}", value))
        items, strategies, merge_key = _lookup_slice(typ, field)
        strategy = _strategy(strategies)
        _validate_order(wanted or [], order, merge_key)
        if current is None and wanted is None:
            continue
        if wanted is None:
            merged = current
        elif current is None:
            merged = _remove_directives(wanted)[0]
        else:
            merged = _merge_slice_handler(current, wanted, items, strategy, merge_key, False)
        in_order, server_only = _partition(merged, order, merge_key)
        kind = _element_kind(current or [], wanted or [])
        original[field] = _normalize_element_order(in_order, server_only, order, current or [], merge_key, kind)
        patch.pop(field, None)


def _validate_order(patch_list: list, order: list, merge_key: str) -> None:
    """validatePatchWithSetOrderList: the patch's items appear in $setElementOrder, in its order."""
    if not order or not patch_list:
        return
    items = _split_deletions(patch_list)[0] if merge_key else patch_list
    at_patch = at_order = 0
    while at_patch < len(items) and at_order < len(order):
        if isinstance(items[at_patch], dict) and DIRECTIVE in items[at_patch]:
            at_patch += 1
            continue
        if _merge_key_equal(items[at_patch], order[at_order], merge_key):
            at_patch += 1
        at_order += 1
    if at_patch < len(items) and at_order >= len(order):
        raise UnknownStatusError(f"The order in patch list:\n{go_format(patch_list)}\n doesn't match "
                                 f"{SET_ELEMENT_ORDER} list:\n{go_format(order)}\n")


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _go_equal(left, right)
    for value in (left, right):
        if not isinstance(value, dict):
            raise UnknownStatusError(_bad_arg_type("map[string]interface {}", value))
        if merge_key not in value:
            raise UnknownStatusError(_no_merge_key(value, merge_key))
    return _go_equal(left[merge_key], right[merge_key])


# ---- lists ----

def _merge_slice_handler(original: list, patch: list, items: _Type, strategy: str, merge_key: str,
                         delete_list: bool) -> list:
    if strategy == MERGE or delete_list:
        return _merge_slice(original, patch, items, merge_key, delete_list)
    return patch


def _merge_slice(original: list, patch: list, items: _Type, merge_key: str, delete_list: bool) -> list:
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    if kind != "map":
        if delete_list:
            return _without(original, patch)
        merged = _deduplicate(original + patch)
    else:
        if not merge_key:
            raise UnknownStatusError(f"cannot merge lists without merge key for {items.kind}")
        backing = original
        original, patch, in_place = _merge_special_elements(backing, patch, merge_key)
        merged = _merge_by_key(original, patch, merge_key, items)
        if in_place:
            _append_in_place(backing, len(original), merged[len(original):])
    in_patch, server_only = _partition(merged, patch, merge_key)
    return _normalize_element_order(in_patch, server_only, patch, original, merge_key, kind)


def _without(original: list, deleted: list) -> list:
    """The items of `original` Go-equal to none of `deleted` ($deleteFromPrimitiveList), by a set of their
    keys rather than a search of `deleted` per item."""
    keys = {key for key in map(_go_key, deleted) if key is not None}
    kept = []
    for item in original:
        key = _go_key(item)
        if not (key in keys if key is not None else _contains(deleted, item)):
            kept.append(item)
    return kept


def _merge_special_elements(original: list, patch: list, merge_key: str) -> tuple[list, list, bool]:
    """mergeSliceWithSpecialElements: applies the items' `$patch` directives; returns the live items,
    the patch items left to merge, and whether the live items are the front of `original`."""
    plain: list = []
    replace = False
    deletions = _Deletions(original, merge_key)
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == DELETE:
            if merge_key not in item:
                raise UnknownStatusError(_no_merge_key(item, merge_key))
            deletions.delete(item[merge_key])
        elif directive == REPLACE:
            replace = True
        elif directive == MERGE:
            raise UnknownStatusError("merging lists cannot yet be specified in the patch")
        else:
            raise UnknownStatusError(_bad_patch_type(directive, item))
    live = deletions.finish()
    if replace:
        return plain, [], False
    return original[:live], plain, True


class _Deletions:
    """deleteMatchingEntries for each `$patch: delete` item, on the list's backing array, leaving it as Go does:
    the survivors in order, then in each slot a deletion freed the item that was last when it was made. Done from
    an index of the items' merge key values (a search and a shift per deleted item made thousands of deletions
    quadratic); a list with an item that is not a map or a key value that is not a scalar is done as Go does
    it, for its errors and equality."""

    def __init__(self, backing: list, merge_key: str):
        self.backing, self.merge_key, self.live = backing, merge_key, len(backing)
        self.positions: dict[tuple[str, Any], list[int]] | None = {}
        for at, item in enumerate(backing):
            key = _go_key(item[merge_key]) if isinstance(item, dict) and merge_key in item else ("", None)
            if not isinstance(item, dict) or key is None:
                self.positions = None
                break
            self.positions.setdefault(key, []).append(at)
        self.deleted = [False] * len(backing)
        self.tail = len(backing) - 1  # the last item not deleted
        self.stale: list = []  # per deletion, in order: the item left in the slot it freed

    def delete(self, value: Any) -> None:
        if self.positions is None:
            self.live = _delete_matching(self.backing, self.live, self.merge_key, value)
            return
        key = _go_key(value)
        for at in self.positions.pop(key, []) if key is not None else []:  # first match first, as Go finds them
            while self.deleted[self.tail]:
                self.tail -= 1
            self.stale.append(self.backing[self.tail])
            self.deleted[at] = True
            self.live -= 1

    def finish(self) -> int:
        """Writes the backing array as the deletions left it; returns how many items live."""
        if self.stale:
            survivors = [item for item, deleted in zip(self.backing, self.deleted, strict=True) if not deleted]
            self.backing[:] = survivors + self.stale[::-1]
        return self.live


def _append_in_place(backing: list, live: int, added: list) -> None:
    """Go deletes from a list in place and appends the new items into the room the deletions left: the
    caller's list (its backing array) then holds the survivors and the first new items, or stale copies.
    The caller orders a $setElementOrder list by that array, so this is mimicked."""
    for offset, item in enumerate(added[:len(backing) - live]):
        backing[live + offset] = item


def _delete_matching(backing: list, live: int, merge_key: str, value: Any) -> int:
    """deleteMatchingEntries on the first `live` items of a backing array: returns the new length."""
    while (at := _find(backing[:live], merge_key, value)) is not None:
        backing[at:live - 1] = backing[at + 1:live]
        live -= 1
    return live


def _merge_by_key(original: list, patch: list, merge_key: str, items: _Type) -> list:
    merged = list(original)
    index = _KeyIndex(merged, merge_key)
    for item in patch:
        if merge_key not in item:
            raise UnknownStatusError(_no_merge_key(item, merge_key))
        at = index.find(item[merge_key])
        if at is None:
            merged.append(item)
            index.appended(item)
        else:  # the merged item keeps its merge key's value: the index stays true
            merged[at] = _merge_map(merged[at], item, items)
    return merged


def _go_key(value: Any) -> tuple[str, Any] | None:
    """A hashable key that Go-equal values share (their Go type and value); None for a map or a list."""
    kind = _go_type(value)
    return None if kind in ("map", "slice") else (kind, value)


class _KeyIndex:
    """What _find answers for a list of maps, from a dict of each merge key value's first position rather than a
    search per lookup (lists of thousands of items would take seconds). A list with an item that is not a map,
    or a lookup of a map or list value, is searched as _find searches, for its errors and equality."""

    def __init__(self, items: list, merge_key: str):
        self._items, self._merge_key = items, merge_key
        self._first: dict[tuple[str, Any], int] | None = {}
        for i, item in enumerate(items):
            self._add(item, i)

    def _add(self, item: Any, position: int) -> None:
        if self._first is None:
            return
        if not isinstance(item, dict):
            self._first = None
        elif self._merge_key in item and (key := _go_key(item[self._merge_key])) is not None:
            self._first.setdefault(key, position)

    def appended(self, item: Any) -> None:
        self._add(item, len(self._items) - 1)

    def find(self, value: Any) -> int | None:
        key = _go_key(value)
        if self._first is None or key is None:
            return _find(self._items, self._merge_key, value)
        return self._first.get(key)


def _find(items: list, merge_key: str, value: Any) -> int | None:
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise UnknownStatusError(f"value for key {i} is not a map")
        if _has_key_value(item, merge_key, value):
            return i
    return None


def _has_key_value(item: Any, merge_key: str, value: Any) -> bool:
    return isinstance(item, dict) and merge_key in item and _go_equal(item[merge_key], value)


def _element_kind(*lists: list) -> str:
    """sliceElementType: the one Go type of all the lists' items."""
    kind = ""
    for items in lists:
        for item in items:
            this = _go_type(item)
            if not kind:
                if this == "slice":
                    raise _lists_of_lists()
                kind = this
            elif this != kind:
                raise UnknownStatusError(f"list element types are not identical: {go_format(list(lists))}")
    if not kind:
        raise UnknownStatusError("no elements in any of the given slices")
    return kind


def _deduplicate(items: list) -> list:
    """deduplicateScalars, whose swaps decide the merged order: for each item in turn, its later duplicates
    are replaced, in the order a scan meets them, by the list's then last item. The scan compares every pair
    (a patch of a few thousand finalizers held the event loop for a minute); here each value's positions are
    kept in a heap, so the next duplicate is found without a scan. Values that are not scalars are scanned."""
    keys = [_go_key(item) for item in items]
    if any(key is None for key in keys):
        return _deduplicate_by_scan(items)
    positions: dict[tuple[str, Any], list[int]] = {}
    for at, key in enumerate(keys):
        positions.setdefault(key, []).append(at)  # ascending: already a heap
    length = len(items)
    i = 0
    while i < length - 1:
        key = keys[i]
        while (j := _next_position(positions[key], keys, key, i, length)) is not None:
            last = length - 1
            items[j], keys[j] = items[last], keys[last]
            if j != last:
                heapq.heappush(positions[keys[j]], j)  # its entry at `last` is left stale
            length -= 1
        i += 1
    return items[:length]


def _next_position(heap: list[int], keys: list, key: tuple[str, Any], after: int, length: int) -> int | None:
    """The first position past `after` that still holds `key`; stale entries are dropped on the way."""
    while heap and (heap[0] <= after or heap[0] >= length or keys[heap[0]] != key):
        heapq.heappop(heap)
    return heap[0] if heap else None


def _deduplicate_by_scan(items: list) -> list:
    """deduplicateScalars as Go writes it."""
    last = len(items) - 1
    i = 0
    while i < last:
        j = i + 1
        while j <= last:
            if _go_equal(items[i], items[j]):
                items[j] = items[last]
                items = items[:last]
                last -= 1
                j -= 1
            j += 1
        i += 1
    return items


def _partition(items: list, by: list, merge_key: str) -> tuple[list, list]:
    """The items present in `by` (by merge key for maps), and the others."""
    present: list = []
    others: list = []
    index = _KeyIndex(by, merge_key) if merge_key else None
    scalars = {key for key in map(_go_key, by) if key is not None} if not merge_key else set()
    for item in items:
        if index is not None:
            if not isinstance(item, dict):
                raise UnknownStatusError(_bad_arg_type("map[string]interface {}", item))
            if merge_key not in item:
                raise UnknownStatusError(_no_merge_key(item, merge_key))
            found = index.find(item[merge_key]) is not None
        else:
            key = _go_key(item)
            found = key in scalars if key is not None else _contains(by, item)
        (present if found else others).append(item)
    return present, others


def _split_deletions(items: list) -> tuple[list, list]:
    keep: list = []
    deletions: list = []
    for item in items:
        if not isinstance(item, dict):
            raise UnknownStatusError(_bad_arg_type("map[string]interface {}", item))
        (deletions if item.get(DIRECTIVE) == DELETE else keep).append(item)
    return keep, deletions


# ---- ordering ----

def _normalize_element_order(in_patch: list, server_only: list, patch_order: list, server_order: list,
                             merge_key: str, kind: str) -> list:
    """Patch items in the patch's order, server-only items in the live order, then interleaved."""
    in_patch = _normalize_slice_order(in_patch, patch_order, merge_key, kind)
    server_only = _normalize_slice_order(server_only, server_order, merge_key, kind)
    return _merge_sorted(server_only, in_patch, server_order, merge_key, kind)


def _normalize_slice_order(items: list, order: list, merge_key: str, kind: str) -> list:
    deletions: list = []
    if kind == "map":
        for value in (*items, *order):
            if not isinstance(value, dict):
                raise UnknownStatusError(_bad_arg_type("map[string]interface {}", value))
            if merge_key not in value:
                raise UnknownStatusError(_no_merge_key(value, merge_key))
        items, deletions = _split_deletions(items)
    in_order = _Positions(order, merge_key, kind)
    positions = [in_order.of(item) for item in items]
    if len(items) > 20 and min(positions, default=0) >= 0:
        ranked = sorted(zip(positions, range(len(items)), items, strict=True))
        return [item for _, _, item in ranked] + deletions
    return _insertion_sort(items, positions) + deletions


def _insertion_sort(items: list, positions: list[int]) -> list:
    """sort.SliceStable's insertion sort, with strategicpatch's `less` (true unless both are found)."""
    pairs = list(zip(positions, items, strict=True))
    for i in range(1, len(pairs)):
        j = i
        while j > 0 and _less(pairs[j][0], pairs[j - 1][0]):
            pairs[j], pairs[j - 1] = pairs[j - 1], pairs[j]
            j -= 1
    return [item for _, item in pairs]


def _less(left: int, right: int) -> bool:
    return left < right if left >= 0 and right >= 0 else True


def _merge_sorted(left: list, right: list, server_order: list, merge_key: str, kind: str) -> list:
    """mergeSortedSlice: inserts each server-only item (left) before the first later patch item."""
    out: list = []
    i = j = 0
    in_order = _Positions(server_order, merge_key, kind)
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li, ri = in_order.of(left[i]), in_order.of(right[j])
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


class _Positions:
    """index(): the position of the first item whose key (its merge key's value, or the scalar itself) is
    Go-equal to a value's, -1 if none; from a dict built once, as a list is ordered by thousands of lookups."""

    def __init__(self, items: list, merge_key: str, kind: str):
        self._items, self._merge_key, self._map = items, merge_key, kind == "map"
        self._first: dict[tuple[str, Any], int] = {}
        for i, item in enumerate(items):
            key = _go_key(self._key(item))
            if key is not None:
                self._first.setdefault(key, i)

    def _key(self, item: Any) -> Any:
        if not self._map:
            return item
        return item.get(self._merge_key) if isinstance(item, dict) else None

    def of(self, value: Any) -> int:
        wanted = self._key(value)
        key = _go_key(wanted)
        if key is not None:
            return self._first.get(key, -1)
        return next((i for i, item in enumerate(self._items) if _go_equal(self._key(item), wanted)), -1)


# ---- Go values ----

_GO_TYPES = {type(None): "nil", bool: "bool", int: "int64", float: "float64", str: "string", dict: "map", list: "slice"}


def _go_type(value: Any) -> str:
    """The Go type a decoded JSON value has (ints are int64, as with PreserveInts)."""
    kind = _GO_TYPES.get(type(value))  # the decoded types themselves: one lookup (lists are merged item by item)
    if kind is not None:
        return kind
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map"
    return "slice"


def _go_equal(left: Any, right: Any) -> bool:
    return _go_type(left) == _go_type(right) and left == right


def _contains(items: list, value: Any) -> bool:
    return any(_go_equal(item, value) for item in items)


_REFLECT_TYPES = {"map": "map[string]interface {}", "slice": "[]interface {}"}


def _bad_arg_type(expected: str, actual: Any) -> str:
    received = "%!s(<nil>)" if actual is None else _REFLECT_TYPES.get(_go_type(actual), _go_type(actual))
    return f"expected a {expected}, but received a {received}"


def _no_merge_key(item: JSONMap, merge_key: str) -> str:
    return f"map: {go_format(item)} does not contain declared merge key: {merge_key}"


def _bad_patch_type(directive: Any, item: JSONMap) -> str:
    return f"unknown patch type: {go_format(directive, 's')} in map: {go_format(item)}"


def go_format(value: Any, verb: str = "v") -> str:
    """fmt's %v (or %s) of a decoded JSON value: `map[a:1 b:[x y]]`, maps sorted by key."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_format(value[k], verb)}" for k in sorted(value)) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_format(v, verb) for v in value) + "]"
    if isinstance(value, str):
        return value
    text = "<nil>" if value is None else format_bad_value(value)
    if verb == "s":
        return "%!s(<nil>)" if value is None else f"%!s({_go_type(value)}={text})"
    return text


def _json_kind(value: Any) -> str:
    return {"slice": "array", "int64": "number", "float64": "number"}.get(_go_type(value), _go_type(value))
