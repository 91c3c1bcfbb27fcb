"""Snapshots of the whole store and their restore, for test suites (/debug/testing/snapshots).

A snapshot is every key under /registry/ and its value at one revision. A restore does not roll the store
back: the server keeps running, and its watch caches, informers and clients hold resourceVersions that must
never go backwards. It writes the difference instead, as ordinary compare-and-swap writes through the KV:
keys created since are deleted, keys deleted since are created again with the snapshot's value, keys whose
value changed get the snapshot's value back. Every watcher sees DELETED, ADDED and MODIFIED events, every
cache follows, and the objects that come back carry new resourceVersions (a value holds none: the
resourceVersion is the key's mod revision, set on decode). Keys equal to the snapshot are not written.

What the server itself keeps writing is left out of both (SERVER_OWNED_PREFIXES): putting an older value back
would only make its next renewal conflict, or a controller's leader step down. The compactor's key lies
outside /registry/, and history compaction does not matter: a snapshot holds values, not revisions."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .kv import CREATE, DELETE_KEY, KV, UPDATE, KeyValue, TxnResult, Write, prefix_end

REGISTRY_PREFIX = "/registry/"
# The replicas' endpoint leases (under a TTL, renewed every reconcile) and the Leases in kube-system: each
# apiserver's identity and the embedded controllers' leader election, renewed every few seconds.
SERVER_OWNED_PREFIXES = ("/registry/masterleases/", "/registry/leases/kube-system/")
# Written before what they hold on a restore, deleted after it, so a watcher never sees an object of a
# namespace or a custom resource whose definition is not (or no longer) there.
CONTAINER_PREFIXES = ("/registry/namespaces/", "/registry/apiextensions.k8s.io/customresourcedefinitions/")
PAGE_SIZE = 10_000  # keys per range: etcd bounds a response's size
MAX_ROUNDS = 5  # a round whose compare-and-swap lost to a concurrent write is planned again, this many times

TTLFunc = Callable[[str], float]  # a key's TTL when it is written back (0: none)
# Whether a key that differs from the snapshot (a value the snapshot lacks or holds otherwise) keeps its current
# value: state a controller derives from other keys, which it computes again from what the restore puts back.
KeepFunc = Callable[[str, bytes, "Snapshot"], bool]


@dataclass(frozen=True, slots=True)
class Snapshot:
    values: dict[str, bytes]  # key -> value
    revision: int  # the store's revision it was read at


@dataclass(slots=True)
class RestoreResult:
    deleted: int = 0
    created: int = 0
    updated: int = 0
    revision: int = 0  # the store's revision once the last write of the restore is committed


class RestoreConflictError(Exception):
    """The store kept changing under the restore for MAX_ROUNDS rounds."""


def owned_by_server(key: str) -> bool:
    return key.startswith(SERVER_OWNED_PREFIXES)


def no_ttl(key: str) -> float:
    return 0.0


def keep_none(key: str, current: bytes, snapshot: Snapshot) -> bool:
    return False


async def _read_all(kv: KV) -> tuple[list[KeyValue], int]:
    """Every key under /registry/ at one revision, in pages."""
    start, end = REGISTRY_PREFIX, prefix_end(REGISTRY_PREFIX)
    result = await kv.range(start, end, 0, PAGE_SIZE)
    items, revision = list(result.kvs), result.revision
    while result.more:
        result = await kv.range(items[-1].key + "\x00", end, revision, PAGE_SIZE)
        items.extend(result.kvs)
    return [item for item in items if not owned_by_server(item.key)], revision


async def take(kv: KV) -> Snapshot:
    items, revision = await _read_all(kv)
    return Snapshot({item.key: item.value for item in items}, revision)


DELETED, CREATED, UPDATED = "deleted", "created", "updated"


@dataclass(slots=True)
class _Plan:
    """The writes of one round, in the order they are submitted (SQLite commits them in that order)."""

    first: list[Write]  # namespaces and definitions created or changed
    middle: list[Write]  # everything else
    last: list[Write]  # namespaces and definitions deleted

    def writes(self) -> list[Write]:
        return [*self.first, *self.middle, *self.last]


def _plan(current: list[KeyValue], snapshot: Snapshot, ttl: TTLFunc, keep: KeepFunc) -> _Plan:
    plan = _Plan([], [], [])
    now = {item.key: item for item in current}
    for key, item in now.items():
        if key not in snapshot.values and not keep(key, item.value, snapshot):
            container = key.startswith(CONTAINER_PREFIXES)
            (plan.last if container else plan.middle).append(Write(DELETE_KEY, key, b"", item.mod_revision))
    for key, value in snapshot.values.items():
        item = now.get(key)
        if item is None:
            write = Write(CREATE, key, value, 0, ttl(key))
        elif item.value != value and not keep(key, item.value, snapshot):
            write = Write(UPDATE, key, value, item.mod_revision, ttl(key))
        else:
            continue
        (plan.first if key.startswith(CONTAINER_PREFIXES) else plan.middle).append(write)
    return plan


async def _write(kv: KV, writes: list[Write]) -> list[TxnResult]:
    """In one batch where the KV takes one (SQLite's write_many), else each on its own, concurrently."""
    write_many = getattr(kv, "write_many", None)
    if write_many is not None:
        return await write_many(writes)
    return await asyncio.gather(*(_write_one(kv, w) for w in writes))


def _write_one(kv: KV, write: Write) -> Awaitable[TxnResult]:
    if write.kind == CREATE:
        return kv.create(write.key, write.value, write.ttl)
    if write.kind == UPDATE:
        return kv.update(write.key, write.value, write.expected_mod_revision, write.ttl)
    return kv.delete(write.key, write.expected_mod_revision)


_COUNTED = {DELETE_KEY: DELETED, CREATE: CREATED, UPDATE: UPDATED}


async def restore(
    kv: KV, snapshot: Snapshot, ttl: TTLFunc = no_ttl, keep: KeepFunc = keep_none
) -> RestoreResult:
    """Writes the difference between the store and `snapshot` (see the module's doc). The writes are
    submitted together: SQLite commits them in one group-commit batch (per thousand), etcd takes them
    concurrently.
    A write that loses its compare-and-swap to a concurrent one is planned again from what the store holds."""
    total = RestoreResult()
    for _ in range(MAX_ROUNDS):
        current, revision = await _read_all(kv)
        total.revision = max(total.revision, revision)
        writes = _plan(current, snapshot, ttl, keep).writes()
        if not writes:
            return total
        results = await _write(kv, writes)
        for write, result in zip(writes, results, strict=True):
            if result.succeeded:
                counted = _COUNTED[write.kind]
                setattr(total, counted, getattr(total, counted) + 1)
                total.revision = max(total.revision, result.revision)
        if all(r.succeeded for r in results):
            return total
    raise RestoreConflictError(
        f"the store kept changing during the restore: gave up after {MAX_ROUNDS} rounds"
    )
