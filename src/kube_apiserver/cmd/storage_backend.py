"""The storage backend the server runs on (--storage-backend): the KV it opens, the ObjectStore over it,
the stores of --etcd-servers-overrides, and their background work (compaction, SQLite's lease expiry,
the object count poll behind apiserver_storage_objects)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from ..apimachinery.wait import Periodic
from ..server.metrics import Registry
from ..server.options.etcd import (
    STORAGE_TYPE_ETCD3,
    STORAGE_TYPE_MEMORY,
    EtcdOptions,
    parse_etcd_servers_overrides,
)
from ..storage.compactor import Compactor
from ..storage.factory import StorageFactory
from ..storage.kv import KV
from ..storage.objectstore import ObjectStore

log = logging.getLogger("kube_apiserver")

LEASE_CHECK_SECONDS = 1.0  # SQLite: how often keys whose lease expired are deleted (etcd does its own)
KEY_ROOT = "/registry/"


@dataclass
class StorageBackend:
    kv: KV
    store: ObjectStore
    overrides: dict[str, ObjectStore] = field(default_factory=dict)  # resource key prefix -> its store
    _kvs: list[KV] = field(default_factory=list)
    _tasks: list[Compactor | Periodic] = field(default_factory=list)

    def start(self, opts: EtcdOptions) -> None:
        for kv in self._kvs:
            self._tasks.append(Compactor(kv, opts.compaction_interval))
            expire = getattr(kv, "expire_leases", None)
            if expire is not None:
                self._tasks.append(Periodic("lease expiry", LEASE_CHECK_SECONDS, expire))
        for task in self._tasks:
            task.start()

    def count_objects(self, factory: StorageFactory, metrics: Registry, period: float) -> ObjectCounter | None:
        """apiserver_storage_objects and apiserver_resource_objects: each served resource's object count,
        polled every `period` (--etcd-count-metric-poll-period; 0: not collected); API Priority and Fairness
        reads the same counts for the seats of a list."""
        if period <= 0:
            return None
        counter = ObjectCounter(factory)
        metrics.collectors.append(counter.exposition)
        task = Periodic("storage object count", period, counter.poll)
        self._tasks.append(task)
        task.start()
        return counter

    async def stop(self) -> None:
        for task in self._tasks:
            await task.stop()
        for kv in self._kvs:
            with contextlib.suppress(Exception):
                await kv.close()


async def open_storage(
    opts: EtcdOptions, data_dir: str, new_store: Callable[[KV], ObjectStore], serves_only_storage: bool = False
) -> StorageBackend:
    """SQLite under the data dir (locked: one server per directory), memory (the data dir locked too, its
    database, if any, the starting state), or etcd3 at --etcd-servers. `serves_only_storage`: the process
    does nothing else (--workers' storage process), so SQLite commits on its event loop."""
    if opts.storage_backend == STORAGE_TYPE_MEMORY:
        from ..storage.memory import MemoryKV

        kv: KV = await MemoryKV.open(data_dir)
        return StorageBackend(kv, new_store(kv), _kvs=[kv])
    if opts.storage_backend != STORAGE_TYPE_ETCD3:
        from ..storage.sqlite import SQLiteKV

        kv = await SQLiteKV.open(data_dir, commit_on_loop=serves_only_storage)
        return StorageBackend(kv, new_store(kv), _kvs=[kv])
    kv = await _open_etcd(opts, opts.etcd_servers)
    backend = StorageBackend(kv, new_store(kv), _kvs=[kv])
    try:
        for override in parse_etcd_servers_overrides(opts.etcd_servers_overrides):
            other = await _open_etcd(opts, list(override.servers))
            backend._kvs.append(other)
            store = new_store(other)
            for prefix in override_key_prefixes(override.group, override.resource):
                backend.overrides[prefix] = store
    except BaseException:
        await backend.stop()
        raise
    return backend


def override_key_prefixes(group: str, resource: str) -> list[str]:
    """Where a resource's keys may be: /registry/<resource>, or group-qualified /registry/<group>/<resource>."""
    prefixes = [f"{KEY_ROOT}{resource}"]
    if group:
        prefixes.append(f"{KEY_ROOT}{group}/{resource}")
    return prefixes


async def _open_etcd(opts: EtcdOptions, servers: list[str]) -> KV:
    from ..storage.etcd3 import EtcdKV, TLSConfig

    tls = TLSConfig(opts.etcd_cafile, opts.etcd_certfile, opts.etcd_keyfile)
    try:
        return await asyncio.wait_for(EtcdKV.open(servers, opts.etcd_prefix, tls), DIAL_TIMEOUT)
    except Exception as err:  # noqa: BLE001 - unreachable, refused, bad certificates: one line, no traceback
        raise SystemExit(f"Error: unable to connect to etcd at {','.join(servers)}: {_reason(err)}") from None


DIAL_TIMEOUT = 60.0


def _reason(err: BaseException) -> str:
    """gRPC's own words when it has them (an AioRpcError's details), else the error's message."""
    details = getattr(err, "details", None)
    text = details() if callable(details) else None
    return text if isinstance(text, str) and text else str(err) or type(err).__name__


STORAGE_OBJECTS_HELP = (
    "# HELP apiserver_storage_objects [STABLE] (Deprecated since 1.34.0) [DEPRECATED, consider using "
    "apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. "
    "In case of a fetching error, the value will be -1."
)
RESOURCE_OBJECTS_HELP = (
    "# HELP apiserver_resource_objects [ALPHA] Number of stored objects at the time of last check split by "
    "kind. In case of a fetching error, the value will be -1."
)


class ObjectCounter:
    """Counts every resource the registry stores (a count-only range per key prefix), as upstream's
    storage object count tracker; a resource whose count fails reads -1."""

    def __init__(self, factory: StorageFactory):
        self.factory = factory
        self.counts: dict[tuple[str, str], int] = {}

    async def poll(self) -> None:
        counts: dict[tuple[str, str], int] = {}
        for prefix, group_resource in list(self.factory.resources.items()):
            try:
                counts[group_resource] = await self.factory.store_for(prefix).count(prefix + "/")
            except Exception:  # noqa: BLE001 - reported as -1, as kube-apiserver reports a failed count
                counts[group_resource] = -1
        self.counts = counts

    def exposition(self) -> list[str]:
        old = [STORAGE_OBJECTS_HELP, "# TYPE apiserver_storage_objects gauge"]
        new = [RESOURCE_OBJECTS_HELP, "# TYPE apiserver_resource_objects gauge"]
        for (group, resource), count in sorted(self.counts.items()):
            qualified = f"{resource}.{group}" if group else resource
            old.append(f'apiserver_storage_objects{{resource="{qualified}"}} {count}')
            new.append(f'apiserver_resource_objects{{group="{group}",resource="{resource}"}} {count}')
        return old + new if self.counts else []
