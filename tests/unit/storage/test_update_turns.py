"""Concurrent guaranteed updates of one key: after a conflict, the retries take turns (one at a time, each from
the state the one before it left) instead of all trying again at once from the same state, where all but one
fail again. Sixteen concurrent increments of one counter then cost about 31 attempts instead of about 136, and
every increment still lands exactly once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kube_apiserver.storage.memory.kv import MemoryKV
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV

KEY = "/registry/configmaps/ns/counter"
WRITERS = 16


async def _increments(store: ObjectStore) -> tuple[int, int]:
    await store.create(KEY, {"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "counter", "namespace": "ns"}, "data": {"n": "0"}})
    attempts = 0

    async def increment(obj: dict) -> dict:
        nonlocal attempts
        attempts += 1
        await asyncio.sleep(0)  # admission and validation take turns of the loop
        return {**obj, "data": {"n": str(int(obj["data"]["n"]) + 1)}}

    await asyncio.gather(*(store.guaranteed_update(KEY, increment) for _ in range(WRITERS)))
    final = await store.get(KEY)
    return int(final["data"]["n"]), attempts


@pytest.mark.parametrize("backend", ["sqlite", "memory"])
def test_retries_of_one_key_take_turns(tmp_path: Path, backend: str) -> None:
    async def main() -> tuple[int, int]:
        kv = await (SQLiteKV.open(str(tmp_path)) if backend == "sqlite" else MemoryKV.open(str(tmp_path)))
        try:
            return await _increments(ObjectStore(kv))
        finally:
            await kv.close()

    total, attempts = asyncio.run(main())
    assert total == WRITERS  # every increment once
    # all start from the same state: one wins, the others conflict once and then go one at a time
    assert attempts <= 2 * WRITERS
    assert not ObjectStore.__dict__.get("_turns")  # per store, not process-wide


def test_a_retry_goes_on_without_its_turn_after_waiting_a_while(tmp_path: Path, monkeypatch) -> None:
    """A turn held by an update that waits on another write of its key (a webhook writing the object it is
    called for) holds the others up TURN_WAIT at most."""
    from kube_apiserver.storage import objectstore

    monkeypatch.setattr(objectstore, "TURN_WAIT", 0.05)

    async def main() -> str:
        kv = await MemoryKV.open(str(tmp_path))
        store = ObjectStore(kv)
        try:
            created = await store.create(KEY, {"apiVersion": "v1", "kind": "ConfigMap",
                                               "metadata": {"name": "counter", "namespace": "ns"}})
            # a write after the object was read: the update below conflicts once, then needs a turn
            async def change(obj: dict) -> dict:
                if obj["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]:
                    await store.guaranteed_update(KEY, lambda o: _with(o, "other"))
                return await _with(obj, "mine")

            async with store._turns.turn(KEY):  # noqa: SLF001 - held by someone else, never given up
                updated = await asyncio.wait_for(store.guaranteed_update(KEY, change), 5)
            assert not store._turns._keys  # noqa: SLF001 - nothing kept once every turn is over
            return updated["data"]["v"]
        finally:
            await kv.close()

    assert asyncio.run(main()) == "mine"


async def _with(obj: dict, value: str) -> dict:
    return {**obj, "data": {"v": value}}
