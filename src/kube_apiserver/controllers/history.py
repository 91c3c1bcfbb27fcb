"""ControllerRevisions as the statefulset and daemonset controllers keep their history (pkg/controller/
history): a revision holds a snapshot of its parent's template (`data`), a `revision` number, and a name
`<parent>-<hash>` where the hash (label controller.kubernetes.io/hash) is FNV-32 of the data's JSON and,
after a name collision, of the collision count too. Helpers to make, compare, sort, list (the parent's
and the orphans its selector matches), create (probing past collisions), renumber, adopt, release and
truncate them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..apimachinery import errors
from ..apimachinery.labels import Selector
from ..client.informers import Indexer
from ..client.rest import STRATEGIC_MERGE_PATCH, Client, ResourceClient
from .controller_utils import controller_of, delete_owner_ref_patch, new_controller_ref, parse_time
from .deployment.util import safe_encode_string

Object = dict[str, Any]
CONTROLLER_REVISION_HASH_LABEL = "controller.kubernetes.io/hash"
_NAME_PREFIX_MAX = 223  # the name's room left by the hash and its dash (253 in all)
_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193
# encoding/json escapes these in strings (HTML-safe output); Python's json does not.
_GO_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def go_json(value: Any) -> bytes:
    """json.Marshal of decoded JSON (maps, slices, strings, numbers): keys sorted, compact, HTML-safe, so
    the bytes hashed and compared are those kube-controller-manager makes of the same data."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.translate(_GO_ESCAPES).encode()


def fnv32(data: bytes, value: int = _FNV32_OFFSET) -> int:
    """hash/fnv.New32 (FNV-1: multiply, then xor), which HashControllerRevision uses."""
    for byte in data:
        value = ((value * _FNV32_PRIME) & 0xFFFFFFFF) ^ byte
    return value


def hash_controller_revision(data: Any, probe: int | None = None) -> str:
    """HashControllerRevision: FNV-32 of the data's JSON, then of the probe's decimal digits when given,
    as the decimal hash safely encoded."""
    value = fnv32(go_json(data))
    if probe is not None:
        value = fnv32(str(probe).encode(), value)
    return safe_encode_string(str(value))


def controller_revision_name(prefix: str, hash_value: str) -> str:
    return f"{prefix[:_NAME_PREFIX_MAX]}-{hash_value}"


def new_controller_revision(
    parent: Object,
    api_version: str,
    kind: str,
    template_labels: dict[str, str] | None,
    data: Any,
    revision: int,
    collision_count: int | None,
) -> Object:
    """NewControllerRevision: the template's labels plus the hash label, owned by the parent, named by
    the hash (not yet created)."""
    hash_value = hash_controller_revision(data, collision_count)
    labels = {**(template_labels or {}), CONTROLLER_REVISION_HASH_LABEL: hash_value}
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": controller_revision_name(parent["metadata"]["name"], hash_value),
            "namespace": parent["metadata"].get("namespace", ""),
            "labels": labels,
            "ownerReferences": [new_controller_ref(parent, api_version, kind)],
        },
        "data": data,
        "revision": revision,
    }


def revision_number(revision: Object) -> int:
    value = revision.get("revision")
    return value if isinstance(value, int) else 0


def sort_controller_revisions(revisions: Iterable[Object]) -> list[Object]:
    """SortControllerRevisions: by revision, then creation time, then name (stable)."""

    def key(rev: Object) -> tuple[int, float, str]:
        meta = rev.get("metadata") or {}
        return revision_number(rev), parse_time(meta.get("creationTimestamp")) or 0.0, meta.get("name", "")

    return sorted(revisions, key=key)


def _hash_label(revision: Object) -> int | None:
    value = ((revision.get("metadata") or {}).get("labels") or {}).get(CONTROLLER_REVISION_HASH_LABEL)
    try:
        return int(value) & 0xFFFFFFFF if value is not None else None
    except ValueError:
        return None


def equal_revision(lhs: Object | None, rhs: Object | None) -> bool:
    """EqualRevision: hash labels that parse as integers and differ say no; else the data decide."""
    if lhs is None or rhs is None:
        return lhs is rhs
    lhs_hash, rhs_hash = _hash_label(lhs), _hash_label(rhs)
    if lhs_hash is not None and rhs_hash is not None and lhs_hash != rhs_hash:
        return False
    return go_json(lhs.get("data")) == go_json(rhs.get("data"))


def find_equal_revisions(revisions: Iterable[Object], needle: Object) -> list[Object]:
    return [rev for rev in revisions if equal_revision(rev, needle)]


def next_revision(sorted_revisions: list[Object]) -> int:
    """One more than the last (sorted) revision's number; 1 for the first."""
    return revision_number(sorted_revisions[-1]) + 1 if sorted_revisions else 1


def revisions_to_truncate(sorted_revisions: list[Object], live: set[str], limit: int) -> list[Object]:
    """The non-live revisions beyond the history limit, oldest first (what truncateHistory and
    cleanupHistory delete); a negative limit keeps everything."""
    history = [rev for rev in sorted_revisions if rev["metadata"]["name"] not in live]
    if limit < 0 or len(history) <= limit:
        return []
    return history[: len(history) - limit]


class History:
    """realHistory: revisions read from the informer's indexer, written through the client."""

    def __init__(self, client: Client, indexer: Indexer):
        self.client = client
        self.indexer = indexer

    def _api(self, namespace: str) -> ResourceClient:
        return self.client.resource("apps", "v1", "controllerrevisions").namespace(namespace)

    def list_controller_revisions(self, parent: Object, selector: Selector) -> list[Object]:
        """The parent's revisions and the orphans its selector matches."""
        meta = parent["metadata"]
        owned = []
        for rev in self.indexer.list(meta.get("namespace", "")):
            if not selector.matches(rev["metadata"].get("labels") or {}):
                continue
            ref = controller_of(rev)
            if ref is None or ref.get("uid") == meta.get("uid"):
                owned.append(rev)
        return owned

    async def create_controller_revision(
        self, parent: Object, revision: Object, collision_count: int
    ) -> tuple[Object, int]:
        """CreateControllerRevision: created under the name its hash and the collision count give; a name
        taken by other data raises the count and tries the next. Returns the revision and the count."""
        namespace = parent["metadata"].get("namespace", "")
        api = self._api(namespace)
        for _ in range(1000):  # each try is a distinct name; a bound only against a misbehaving store
            hash_value = hash_controller_revision(revision.get("data"), collision_count)
            clone = json.loads(json.dumps(revision))
            clone["metadata"]["name"] = controller_revision_name(parent["metadata"]["name"], hash_value)
            clone["metadata"]["namespace"] = namespace
            try:
                return await api.create(clone), collision_count
            except errors.StatusError as err:
                if err.code != 409 or err.reason != "AlreadyExists":
                    raise
            exists = await api.get(clone["metadata"]["name"])
            if go_json(exists.get("data")) == go_json(clone.get("data")):
                return exists, collision_count
            collision_count += 1
        raise ValueError(f"no free ControllerRevision name for {namespace}/{parent['metadata']['name']}")

    async def update_controller_revision(self, revision: Object, new_revision: int) -> Object:
        """UpdateControllerRevision: renumbered (a rollback to an older template), retrying on conflict."""
        api = self._api(revision["metadata"].get("namespace", ""))
        current = revision
        for attempt in range(5):
            if revision_number(current) == new_revision:
                return current
            try:
                return await api.update({**current, "revision": new_revision})
            except errors.StatusError as err:
                if err.code != 409 or attempt == 4:
                    raise
                current = await api.get(current["metadata"]["name"])
        return current

    async def delete_controller_revision(self, revision: Object) -> None:
        await self._api(revision["metadata"].get("namespace", "")).delete(revision["metadata"]["name"])

    async def adopt_controller_revision(
        self, parent: Object, api_version: str, kind: str, revision: Object
    ) -> Object:
        owner = controller_of(revision)
        if owner is not None:
            raise ValueError(f"attempt to adopt revision owned by {owner}")
        meta = revision["metadata"]
        patch = {
            "metadata": {
                "ownerReferences": [new_controller_ref(parent, api_version, kind)],
                "uid": meta.get("uid", ""),
            }
        }
        return await self._api(parent["metadata"].get("namespace", "")).patch(
            meta["name"], patch, STRATEGIC_MERGE_PATCH
        )

    async def release_controller_revision(self, parent: Object, revision: Object) -> Object | None:
        meta = revision["metadata"]
        patch = delete_owner_ref_patch(meta.get("uid", ""), parent["metadata"]["uid"])
        try:
            return await self._api(meta.get("namespace", "")).patch(
                meta["name"], patch, STRATEGIC_MERGE_PATCH
            )
        except errors.StatusError as err:
            if err.code in (404, 422):  # gone, or its uid changed: nothing to release
                return None
            raise
