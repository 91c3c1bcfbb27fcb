"""A guaranteed update starts from the watch cache's copy of the object (upstream's cachedExistingObject): no read of
storage when the copy is current; when it is stale, the update is tried again from storage's state, and an error
on the stale copy is the caller's only when storage still holds that revision."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kube_apiserver.apimachinery.patch import copy_json
from kube_apiserver.storage import interface as storage
from kube_apiserver.storage.kv import KeyValue
from kube_apiserver.storage.memory.kv import MemoryKV
from kube_apiserver.storage.objectstore import ObjectStore

KEY = "/registry/configmaps/ns/cm"


class CountingKV(MemoryKV):
    gets = 0

    async def get(self, key: str) -> KeyValue | None:
        self.gets += 1
        return await super().get(key)


def configmap(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns", "uid": "u1"},
            "data": data}


def setting(**data: str) -> Any:
    async def update(obj: dict[str, Any]) -> dict[str, Any]:
        return {**obj, "data": {**obj["data"], **data}}

    return update


async def with_store(tmp_path: Any, test: Any) -> None:
    kv = CountingKV()
    try:
        await test(ObjectStore(kv), kv)
    finally:
        await kv.close()


def run(tmp_path: Any, test: Any) -> None:
    asyncio.run(with_store(tmp_path, test))


def test_a_current_copy_is_updated_without_reading_storage(tmp_path: Any) -> None:
    async def test(store: ObjectStore, kv: CountingKV) -> None:
        cached = await store.create(KEY, configmap(a="1"))
        frozen = copy_json(cached)
        kv.gets = 0
        out = await store.guaranteed_update(KEY, setting(a="2"), suggestion=cached)
        assert out["data"] == {"a": "2"} and kv.gets == 0
        assert cached == frozen  # the cache's object is not changed

    run(tmp_path, test)


def test_a_stale_copy_is_updated_again_from_storage(tmp_path: Any) -> None:
    async def test(store: ObjectStore, kv: CountingKV) -> None:
        stale = await store.create(KEY, configmap(a="1"))
        await store.guaranteed_update(KEY, setting(b="2"))
        out = await store.guaranteed_update(KEY, setting(c="3"), suggestion=stale)
        assert out["data"] == {"a": "1", "b": "2", "c": "3"}

    run(tmp_path, test)


def test_an_error_on_a_stale_copy_is_tried_again_and_on_a_current_one_is_the_callers(tmp_path: Any) -> None:
    """An update that refuses a resourceVersion other than the one the client read (a PUT's optimistic lock)."""
    async def test(store: ObjectStore, kv: CountingKV) -> None:
        stale = await store.create(KEY, configmap(a="1"))
        current = await store.guaranteed_update(KEY, setting(b="2"))

        def requiring(rv: str) -> Any:
            async def update(obj: dict[str, Any]) -> dict[str, Any]:
                if obj["metadata"]["resourceVersion"] != rv:
                    raise storage.ConflictError(KEY, "the object has been modified")
                return {**obj, "data": {"c": "3"}}
            return update

        rv = current["metadata"]["resourceVersion"]
        out = await store.guaranteed_update(KEY, requiring(rv), suggestion=stale)
        assert out["data"] == {"c": "3"}
        with pytest.raises(storage.ConflictError):
            await store.guaranteed_update(KEY, requiring(rv), suggestion=out)
        with pytest.raises(storage.ConflictError):  # a precondition, likewise
            await store.guaranteed_update(KEY, setting(d="4"), storage.Preconditions(uid="other"), suggestion=out)

    run(tmp_path, test)


def test_an_update_that_changes_nothing_on_a_stale_copy_is_decided_on_storage(tmp_path: Any) -> None:
    async def test(store: ObjectStore, kv: CountingKV) -> None:
        stale = await store.create(KEY, configmap(a="1"))
        await store.guaranteed_update(KEY, setting(a="2"))
        out = await store.guaranteed_update(KEY, setting(a="1"), suggestion=stale)
        assert out["data"] == {"a": "1"}
        assert (await store.get(KEY))["data"] == {"a": "1"}

    run(tmp_path, test)
