"""A test's storage stack: SQLite in the test's tmp_path, an ObjectStore and a started watch cache."""

from __future__ import annotations

import asyncio

from kube_apiserver.storage.cacher import Cacher
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV


def with_cacher(prefix: str):
    """Runs `async fn(store, cacher)` with a watch cache of `prefix` that has its first list (so a revision
    read from the store before a test's writes is one the cache can start a watch from), closed afterwards
    (a pytest test of tmp_path)."""
    def decorate(fn):
        def wrapper(tmp_path):
            async def main():
                kv = await SQLiteKV.open(str(tmp_path))
                store = ObjectStore(kv)
                cacher = Cacher(store, prefix)
                cacher.start()
                try:
                    await cacher.wait_ready()
                    await fn(store, cacher)
                finally:
                    await cacher.stop()
                    await kv.close()
            asyncio.run(main())
        wrapper.__name__ = fn.__name__
        return wrapper
    return decorate
