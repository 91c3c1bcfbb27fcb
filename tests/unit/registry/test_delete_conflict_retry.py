"""A DELETE races other writers as Kubernetes' Store does: the write that lands between the Store's read and
its deletion makes it decide again on what was written (GuaranteedUpdate's conflict retry), so only the
client's own preconditions answer 409. The concurrent write is injected deterministically: a storage
wrapper performs it right after the Store's read, once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kube_apiserver.apimachinery.errors import StatusError
from kube_apiserver.registry.context import Context
from kube_apiserver.registry.options import DeleteOptions
from kube_apiserver.registry.rest import ResourceInfo, UpdatedObjectInfo
from kube_apiserver.registry.store import Store
from kube_apiserver.registry.strategy import Strategy
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV

INFO = ResourceInfo("", "v1", "configmaps", "ConfigMap", "configmap", True)
KEY = "/registry/configmaps/default/cm"
Change = Callable[[dict[str, Any]], None]


class WriteAfterRead(ObjectStore):
    """Each read of KEY is followed, before the caller sees it, by the next queued concurrent write; each
    deletion is preceded by the next of `before_delete`."""

    def __init__(self, kv: SQLiteKV):
        super().__init__(kv)
        self.writes: list[Change] = []
        self.before_delete: list[Change] = []

    async def _write(self, key: str, changes: list[Change]) -> None:
        if key == KEY and changes:
            change = changes.pop(0)

            async def write(current: dict[str, Any]) -> dict[str, Any]:
                change(current)
                return current
            await super().guaranteed_update(key, write)

    async def get(self, key: str) -> dict[str, Any]:
        read = await super().get(key)
        await self._write(key, self.writes)
        return read

    async def delete(self, key: str, *args: Any) -> dict[str, Any]:
        await self._write(key, self.before_delete)
        return await super().delete(key, *args)


def label(current: dict[str, Any]) -> None:
    labels = current["metadata"].setdefault("labels", {})
    labels["touched"] = str(len(labels))


def add_finalizer(current: dict[str, Any]) -> None:
    current["metadata"]["finalizers"] = [*current["metadata"].get("finalizers", []), "example.com/keep"]


def drop_finalizers(current: dict[str, Any]) -> None:
    current["metadata"].pop("finalizers", None)


def run(tmp_path: Any, scenario: Callable[[Store, WriteAfterRead], Awaitable[None]]) -> None:
    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            storage = WriteAfterRead(kv)
            store = Store(INFO, Strategy(INFO), storage, "/registry/configmaps")
            await scenario(store, storage)
        finally:
            await kv.close()
    asyncio.run(main())


CTX = Context("default")


def configmap(**meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", **meta}}


def test_delete_without_preconditions_retries_past_a_concurrent_write(tmp_path):
    async def scenario(store: Store, storage: WriteAfterRead) -> None:
        await store.create(CTX, configmap())
        storage.writes = [label, label]  # two writers in a row, each after the Store's read
        out, gone = await store.delete(CTX, "cm", None, DeleteOptions())
        assert gone and out["status"] == "Success"
        assert not storage.writes
        with pytest.raises(StatusError) as missing:
            await store.get(CTX, "cm")
        assert missing.value.code == 404
    run(tmp_path, scenario)


def test_client_preconditions_still_conflict(tmp_path):
    async def scenario(store: Store, storage: WriteAfterRead) -> None:
        created = await store.create(CTX, configmap())
        storage.writes = [label]
        with pytest.raises(StatusError) as conflict:
            await store.delete(CTX, "cm", None,
                               DeleteOptions(preconditions_resource_version=created["metadata"]["resourceVersion"]))
        assert conflict.value.code == 409 and "Precondition failed: ResourceVersion in precondition" in str(
            conflict.value.status()["message"])
        assert (await store.get(CTX, "cm"))["metadata"]["labels"] == {"touched": "0"}
    run(tmp_path, scenario)


def test_a_finalizer_added_meanwhile_is_honoured(tmp_path):
    """The decision is made again: the object now waits for its finalizer instead of being deleted."""
    async def scenario(store: Store, storage: WriteAfterRead) -> None:
        await store.create(CTX, configmap())
        storage.writes = [add_finalizer]
        out, gone = await store.delete(CTX, "cm", None, DeleteOptions())
        assert not gone and out["metadata"]["finalizers"] == ["example.com/keep"]
        assert out["metadata"]["deletionTimestamp"]
    run(tmp_path, scenario)


def test_finalizers_removed_meanwhile_delete_at_once(tmp_path):
    async def scenario(store: Store, storage: WriteAfterRead) -> None:
        await store.create(CTX, configmap(finalizers=["example.com/keep"]))
        storage.writes = [drop_finalizers]
        _, gone = await store.delete(CTX, "cm", None, DeleteOptions())
        assert gone
        with pytest.raises(StatusError):
            await store.get(CTX, "cm")
    run(tmp_path, scenario)


def test_update_removing_the_last_finalizer_deletes_despite_a_concurrent_write(tmp_path):
    """deleteWithoutFinalizers: the update that emptied the finalizers of an object being deleted completes
    the deletion even when another write lands before it."""
    async def scenario(store: Store, storage: WriteAfterRead) -> None:
        await store.create(CTX, configmap(finalizers=["example.com/keep"]))
        await store.delete(CTX, "cm", None, DeleteOptions())

        async def without_finalizers(ctx: Context, old: dict[str, Any] | None) -> dict[str, Any]:
            assert old is not None
            new = {**old, "metadata": {**old["metadata"]}}
            new["metadata"].pop("finalizers")
            storage.before_delete = [label]  # lands between the update and the deletion it allows
            return new

        out, _ = await store.update(CTX, "cm", UpdatedObjectInfo("cm", without_finalizers))
        assert out["status"] == "Success" and not storage.before_delete
        with pytest.raises(StatusError):
            await store.get(CTX, "cm")
    run(tmp_path, scenario)


def test_update_removing_the_last_finalizer_keeps_an_object_given_a_new_one_meanwhile(tmp_path):
    async def scenario(store: Store, storage: WriteAfterRead) -> None:
        await store.create(CTX, configmap(finalizers=["example.com/keep"]))
        await store.delete(CTX, "cm", None, DeleteOptions())

        async def without_finalizers(ctx: Context, old: dict[str, Any] | None) -> dict[str, Any]:
            assert old is not None
            new = {**old, "metadata": {**old["metadata"]}}
            new["metadata"].pop("finalizers")
            storage.before_delete = [add_finalizer]
            return new

        out, _ = await store.update(CTX, "cm", UpdatedObjectInfo("cm", without_finalizers))
        assert out["metadata"]["finalizers"] == ["example.com/keep"] and out["metadata"]["deletionTimestamp"]
        assert (await store.get(CTX, "cm"))["metadata"]["finalizers"] == ["example.com/keep"]
    run(tmp_path, scenario)
