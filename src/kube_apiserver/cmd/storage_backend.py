"""The storage backend the server runs on (--storage-backend): the KV it opens, the ObjectStore over it,
the stores of --etcd-servers-overrides, and their background work (compaction, SQLite's lease expiry,
the object count poll behind apiserver_storage_objects)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ..apimachinery.wait import Periodic
from ..server.options.etcd import STORAGE_TYPE_ETCD3, EtcdOptions, parse_etcd_servers_overrides
from ..storage.compactor import Compactor
from ..storage.kv import KV, prefix_end
from ..storage.objectstore import ObjectStore

log = logging.getLogger("kube_apiserver")

LEASE_CHECK_SECONDS = 1.0  # SQLite: how often keys whose lease expired are deleted (etcd does its own)
KEY_ROOT = "/registry/"


@dataclass
class StorageBackend:
    kv: KV
    store: ObjectStore
    overrides: dict[str, ObjectStore] = field(default_factory=dict)  # resource key prefix -> its store
    object_counts: dict[str, int] = field(default_factory=dict)  # apiserver_storage_objects, per resource
    _kvs: list[KV] = field(default_factory=list)
    _tasks: list[Compactor | Periodic] = field(default_factory=list)

    def start(self, opts: EtcdOptions) -> None:
        for kv in self._kvs:
            self._tasks.append(Compactor(kv, opts.compaction_interval))
            expire = getattr(kv, "expire_leases", None)
            if expire is not None:
                self._tasks.append(Periodic("lease expiry", LEASE_CHECK_SECONDS, expire))
        self._tasks.append(
            Periodic("storage object count", opts.count_metric_poll_period, self.count_objects)
        )
        for task in self._tasks:
            task.start()

    async def count_objects(self) -> None:
        """Objects per resource (the first key segment under /registry/), as etcd's count metric polls."""
        counts: dict[str, int] = {}
        for kv in self._kvs:
            start = KEY_ROOT
            while True:
                page = await kv.range(start, prefix_end(KEY_ROOT), 0, 10000)
                for item in page.kvs:
                    resource = item.key[len(KEY_ROOT) :].split("/", 1)[0]
                    counts[resource] = counts.get(resource, 0) + 1
                if not page.more or not page.kvs:
                    break
                start = page.kvs[-1].key + "\x00"
        self.object_counts = counts

    async def stop(self) -> None:
        for task in self._tasks:
            await task.stop()
        for kv in self._kvs:
            with contextlib.suppress(Exception):
                await kv.close()


async def open_storage(
    opts: EtcdOptions, data_dir: str, new_store: Callable[[KV], ObjectStore]
) -> StorageBackend:
    """SQLite under the data dir (locked: one server per directory), or etcd3 at --etcd-servers."""
    if opts.storage_backend != STORAGE_TYPE_ETCD3:
        from ..storage.sqlite import SQLiteKV

        kv: KV = await SQLiteKV.open(data_dir)
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
    details: Callable[[], Awaitable[str] | str] | None = getattr(err, "details", None)
    if callable(details):
        text = details()
        if isinstance(text, str) and text:
            return text
    return str(err) or type(err).__name__
