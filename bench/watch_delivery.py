"""The Python cost of one watch delivery, without a network: W cache watchers, each with the direct delivery
the watch handler gives it over HTTP, written to a connection stand-in that only counts bytes; E events are
dispatched as the cacher dispatches them, a loop turn between each, and the CPU time per delivery is printed
(what bench/watch_fanout.py's server_cpu_us_per_delivery holds besides TLS and the kernel).

    python3 bench/watch_delivery.py --watchers 500 --events 2000
"""

from __future__ import annotations

import argparse
import asyncio
import time

import uvloop

from kube_apiserver.apimachinery import serializer
from kube_apiserver.endpoints.handlers.watch import _DirectDelivery
from kube_apiserver.storage.cacher.watch_cache import CachedEvent
from kube_apiserver.storage.cacher.watcher import CacheWatcher

PREFIX = "/registry/configmaps/"


class CountingWriter:
    """A connection that takes everything: the DirectChunkWriter's interface."""

    open = True
    writable = True

    def __init__(self) -> None:
        self.bytes = 0
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        self.bytes += len(b"%x\r\n%b\r\n" % (len(data), data))

    write_open = write

    def on_writable(self, callback: object) -> None:
        pass


def encode(event: object) -> bytes:
    encoded = event.encoded  # type: ignore[attr-defined]
    if encoded is None:
        encoded = event.encoded = serializer.encode_json({"type": event.type, "object": event.object})  # type: ignore[attr-defined]
    return encoded


async def run(watchers: int, events: int) -> dict[str, float]:
    loop = asyncio.get_running_loop()
    writers = []
    live: set[CacheWatcher] = set()
    for _ in range(watchers):
        watcher = CacheWatcher(PREFIX, None, live.discard, lambda: 0)
        watcher.start_with_events([], 0)
        writer = CountingWriter()
        _DirectDelivery(writer, watcher, encode, loop).start()
        live.add(watcher)
        writers.append(writer)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v" * 200}}
    started = time.process_time()
    for revision in range(1, events + 1):
        name = f"cm-{revision}"
        cached = CachedEvent("ADDED", PREFIX + "default/" + name,
                             {**obj, "metadata": {"name": name, "namespace": "default",
                                                  "resourceVersion": str(revision)}}, None, revision)
        for watcher in list(live):
            watcher.add(cached)
        await asyncio.sleep(0)
    await asyncio.sleep(0)
    cpu = time.process_time() - started
    delivered = sum(w.writes for w in writers)
    return {"watchers": watchers, "events": events, "writes": delivered,
            "us_per_delivery": round(cpu / (watchers * events) * 1e6, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--watchers", type=int, default=500)
    parser.add_argument("--events", type=int, default=2000)
    args = parser.parse_args()
    print(uvloop.run(run(args.watchers, args.events)))


if __name__ == "__main__":
    main()
