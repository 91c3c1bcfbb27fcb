"""A watch read as an iterator (the loopback client's informers, a fault-injected watch) takes what its
watcher already holds in one pass: a batch of a thousand events (a snapshot's restore) is yielded in order,
one chunk per event, without a task and a wait per event."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

from cachertesting import with_cacher
from kube_apiserver.endpoints.handlers.watch import _events
from kube_apiserver.endpoints.http import Request
from kube_apiserver.storage.kv import CREATE, Write

PREFIX = "/registry/configmaps/"
COUNT = 1000
run = with_cacher(PREFIX)


class CountingWatcher:
    """The cache's watcher, counting the events read one at a time through its iterator."""

    def __init__(self, watcher: Any):
        self.watcher = watcher
        self.one_at_a_time = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.watcher, name)

    def __aiter__(self) -> CountingWatcher:
        return self

    async def __anext__(self) -> Any:
        event = await self.watcher.__anext__()
        self.one_at_a_time += 1
        return event


def value(name: str) -> bytes:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}}
    return json.dumps(obj).encode()


@run
async def test_a_batch_held_by_the_watcher_is_yielded_in_one_pass(store, cacher) -> None:
    start = str(await store.current_revision())
    watcher = CountingWatcher(await cacher.watch(PREFIX, start))
    scope = SimpleNamespace(
        stopping=asyncio.Event(), info=SimpleNamespace(kind="ConfigMap", api_version="v1")
    )
    media = SimpleNamespace(media="application/json", convert=False)
    chunks = _events(scope, Request("GET", "/api/v1/configmaps", b"", {}), watcher, media, 60.0, False)  # type: ignore[arg-type]
    names = [f"cm-{i:04d}" for i in range(COUNT)]
    first = asyncio.ensure_future(anext(chunks))
    await asyncio.sleep(0.05)  # waiting for the first event, as an informer's watch does
    await store.kv.write_many([Write(CREATE, f"{PREFIX}ns/{name}", value(name)) for name in names])
    received = [await asyncio.wait_for(first, 10)]
    while len(received) < COUNT:
        received.append(await asyncio.wait_for(anext(chunks), 10))
    await chunks.aclose()
    events = [json.loads(chunk) for chunk in received]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", n) for n in names]
    assert all(
        chunk.count(b"\n") == 1 for chunk in received
    )  # one event a chunk (fault injection counts them)
    assert watcher.one_at_a_time <= 2  # the first, maybe one more: the rest taken as held
