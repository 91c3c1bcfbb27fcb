"""A watch written straight to its connection (_DirectDelivery): what is ready goes out as one write, a
connection that stops taking writes is not waited for (its watcher's buffer fills and it is closed while
the others carry on), and the stream ends when its watcher does."""

from __future__ import annotations

import asyncio

from cachertesting import with_cacher
from kube_apiserver.endpoints.handlers.watch import _DirectDelivery

PREFIX = "/registry/configmaps/"
run = with_cacher(PREFIX)


class Connection:
    def __init__(self, writable: bool = True):
        self.writes: list[bytes] = []
        self.writable = writable
        self.open = True
        self.callback = None

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    write_open = write

    async def drain(self) -> None:
        pass

    def on_writable(self, callback) -> None:
        self.callback = callback


async def create(store, name: str) -> None:
    await store.create(f"{PREFIX}ns/{name}", {"apiVersion": "v1", "kind": "ConfigMap",
                                              "metadata": {"name": name, "namespace": "ns"}})


def encode(event) -> bytes:
    return event.object["metadata"]["name"].encode() + b"\n"


@run
async def test_ready_events_go_out_in_one_write_and_a_stalled_connection_is_not_waited_for(store, cacher):
    cacher.watcher_buffer = 10
    loop = asyncio.get_running_loop()
    start = str(await store.current_revision())
    for i in range(5):
        await create(store, f"old-{i}")
    fast_connection, stalled_connection = Connection(), Connection(writable=False)
    fast = _DirectDelivery(fast_connection, await cacher.watch(PREFIX, start), encode, loop)
    stalled_watcher = await cacher.watch(PREFIX, start)
    stalled = _DirectDelivery(stalled_connection, stalled_watcher, encode, loop)
    fast.start()
    stalled.start()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert fast_connection.writes == [b"".join(b"old-%d\n" % i for i in range(5))]  # one write for the five
    for i in range(20):
        await create(store, f"live-{i}")
    await asyncio.sleep(0.05)
    assert b"".join(fast_connection.writes).count(b"\n") == 25
    assert stalled_connection.writes == [] and stalled_watcher not in cacher.watchers  # closed, not waited for
    stalled_connection.writable = True
    stalled_connection.callback()  # the connection drained: the stream ends there (closed before its
    await asyncio.wait_for(stalled.done, 5)  # replay was out, it would only send a partial one: the client re-watches)
    assert stalled_connection.writes == []
    fast_connection.open = False  # the client went away
    await create(store, "after")
    await asyncio.wait_for(fast.done, 5)
    fast.stop()
    stalled.stop()
