"""SQLiteKV answers point reads from the rows it last read or wrote (RowCache): a GET after a write's answer
reads what was written, the cache holds at most its budget, and whatever it evicts, every read equals the
database's row."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path

from kube_apiserver.storage.kv import KeyValue, KVEvent
from kube_apiserver.storage.sqlite import SQLiteKV
from kube_apiserver.storage.sqlite import kv as sqlite_kv
from kube_apiserver.storage.sqlite.kv import STATE_FILE, RowCache


def row(key: str, size: int, revision: int = 1) -> KeyValue:
    return KeyValue(key, b"x" * size, revision, revision)


def test_the_cache_keeps_its_budget_and_drops_the_least_recently_used() -> None:
    cache = RowCache(budget=1600)
    names = [f"k{i:02d}" for i in range(16)]
    for name in names:
        cache.put(name, row(name, 100))
    assert cache.get("k00") is not None  # now the most recently used
    cache.put("new", row("new", 100))
    assert cache.get("k01") is None and cache.get("k00") is not None
    assert cache.size == 1600 == sum(len(r.value) for r in cache.rows.values())
    cache.put("k00", None)  # gone
    assert cache.get("k00") is None and cache.size == 1500
    cache.put("huge", row("huge", 101))  # more than a sixteenth of the budget: not kept
    assert cache.get("huge") is None and cache.size == 1500


def test_events_set_and_drop_rows() -> None:
    cache = RowCache()
    cache.apply([KVEvent("PUT", "/a", b"1", 5, 3, None), KVEvent("PUT", "/b", b"2", 6, 6, None)])
    assert cache.get("/a") == KeyValue("/a", b"1", 3, 5)
    cache.apply([KVEvent("DELETE", "/a", b"", 7, 3, b"1")])
    assert cache.get("/a") is None and cache.get("/b") == KeyValue("/b", b"2", 6, 6)


def _database_row(conn: sqlite3.Connection, key: str) -> KeyValue | None:
    found = conn.execute("SELECT key, value, create_rev, rev FROM current WHERE key = ?", (key,)).fetchone()
    return None if found is None else KeyValue(*found)


def test_point_reads_equal_the_database_through_writes_and_evictions(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sqlite_kv, "ROW_CACHE_BYTES", 64 * 16)  # values up to 64 bytes are kept
    rng = random.Random(7)
    keys = [f"/registry/things/k{i}" for i in range(40)]  # about 1,300 bytes of values: evictions

    async def main() -> int:
        kv = await SQLiteKV.open(str(tmp_path))
        check = sqlite3.connect(str(tmp_path / STATE_FILE))
        compared = 0
        try:
            for _ in range(400):
                key = rng.choice(keys)
                current = await kv.get(key)
                action = rng.random()
                if current is None:
                    result = await kv.create(key, bytes([rng.randrange(256)]) * rng.randrange(1, 64))
                    assert result.succeeded
                elif action < 0.3:
                    result = await kv.delete(key, current.mod_revision)
                    assert result.succeeded
                elif action < 0.8:
                    value = bytes([rng.randrange(256)]) * rng.randrange(1, 64)
                    result = await kv.update(key, value, current.mod_revision)
                    assert result.succeeded
                    assert await kv.get(key) == KeyValue(key, value, current.create_revision, result.revision)
                else:  # writes of several keys in one batch, then every key read back
                    await asyncio.gather(*(kv.create(k, b"b") for k in rng.sample(keys, 4)))
                for probe in keys:
                    assert await kv.get(probe) == _database_row(check, probe)
                    compared += 1
        finally:
            check.close()
            await kv.close()
        return compared

    assert asyncio.run(main()) == 400 * len(keys)
