"""A SQLite commit's events reach each watcher whose range holds them: a batch of writes committed together
goes whole to a watcher of a range holding all its keys, in part to one holding some, and not at all to
the others."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kube_apiserver.storage.kv import prefix_end
from kube_apiserver.storage.sqlite import SQLiteKV


def test_a_committed_batch_goes_to_the_watchers_of_its_keys(tmp_path: Path) -> None:
    async def main() -> dict[str, list[str]]:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            ranges = {"a": "/r/a/", "all": "/r/", "b": "/r/b/", "other": "/s/"}
            streams = {name: kv.watch(prefix, prefix_end(prefix), 0) for name, prefix in ranges.items()}
            firsts = {name: asyncio.ensure_future(anext(stream)) for name, stream in streams.items()}
            await asyncio.sleep(0.05)  # every watcher registered
            # Submitted in one loop turn: committed as one batch, published once.
            await asyncio.gather(kv.create("/r/a/1", b"{}"), kv.create("/r/b/1", b"{}"))
            await kv.create("/s/1", b"{}")
            batches = await asyncio.wait_for(asyncio.gather(*firsts.values()), 5)
            for stream in streams.values():
                await stream.aclose()
            return {name: [e.key for e in batch.events] for name, batch in zip(firsts, batches, strict=True)}
        finally:
            await kv.close()

    assert asyncio.run(main()) == {
        "a": ["/r/a/1"],
        "all": ["/r/a/1", "/r/b/1"],
        "b": ["/r/b/1"],
        "other": ["/s/1"],
    }
