"""Storage benchmarks: write throughput (one writer vs concurrent writers sharing group commits),
LIST latency, watch fan-out delivery latency, and watch-lists of the whole state (streamed from the
cache's snapshot, however many objects). Prints figures; asserts nothing.

    python3 bench/storage.py [--objects 10000] [--watchers 500] [--events 2000] [--watch-lists 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

import uvloop

from kube_apiserver.storage.cacher import Cacher
from kube_apiserver.storage.interface import ListOptions
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV


def configmap(i: int) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"cm-{i:06d}", "namespace": "bench", "labels": {"app": "bench", "i": str(i % 10)}},
            "data": {"key": "x" * 200}}


async def writes(store: ObjectStore, start: int, count: int, concurrency: int) -> float:
    queue = iter(range(start, start + count))

    async def worker() -> None:
        for i in queue:
            await store.create(f"/registry/configmaps/bench/cm-{i:06d}", configmap(i))

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return count / (time.perf_counter() - began)


async def list_latency(source, repeat: int = 5) -> float:
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        await source.get_list("/registry/configmaps/bench/", ListOptions())
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


async def fan_out(store: ObjectStore, source, watchers: int, events: int, tag: str) -> tuple[float, float, int]:
    start = str(await store.current_revision())
    streams = [await source.watch("/registry/configmaps/fan/", start) for _ in range(watchers)]
    sent: dict[str, float] = {}
    latencies: list[float] = []

    async def consume(stream) -> int:
        seen = 0
        async for event in stream:
            latencies.append(time.perf_counter() - sent[event.object["metadata"]["name"]])
            seen += 1
            if seen == events:
                return seen
        return seen

    consumers = [asyncio.ensure_future(consume(s)) for s in streams]
    for i in range(events):
        name = f"fan-{tag}-{i:06d}"
        sent[name] = time.perf_counter()
        await store.create(f"/registry/configmaps/fan/{name}", configmap(i) | {"metadata": {"name": name, "namespace": "fan"}})
    delivered = sum(await asyncio.gather(*consumers))
    for s in streams:
        await s.stop()
    latencies.sort()
    return latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)], delivered


async def watch_lists(cacher: Cacher, count: int) -> tuple[float, int]:
    """`count` watch-lists started together, each read to its initial-events-end bookmark."""
    began = time.perf_counter()
    streams = [await cacher.watch("/registry/configmaps/", "", send_initial_events=True, allow_bookmarks=True)
               for _ in range(count)]

    async def drain(stream) -> int:
        seen = 0
        async for event in stream:
            if event.type == "BOOKMARK":
                return seen
            seen += 1
        return seen

    objects = sum(await asyncio.gather(*(drain(s) for s in streams)))
    for s in streams:
        await s.stop()
    return time.perf_counter() - began, objects


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        kv = await SQLiteKV.open(data_dir)
        store = ObjectStore(kv)
        sequential = await writes(store, 0, 500, 1)
        concurrent = await writes(store, 500, args.objects - 500, 64)
        print(f"creates/s, one writer:         {sequential:10.0f}")
        print(f"creates/s, 64 writers:         {concurrent:10.0f}   ({concurrent / sequential:.1f}x: group commit)")
        cacher = Cacher(store, "/registry/configmaps/")
        cacher.start()
        from_store = await list_latency(store)
        from_cache = await list_latency(cacher)
        print(f"LIST {args.objects} objects, store:  {from_store * 1000:8.1f} ms")
        print(f"LIST {args.objects} objects, cache:  {from_cache * 1000:8.1f} ms   "
              f"({from_store / from_cache:.1f}x faster, consistent read included)")
        for name, source in (("store watches", store), ("watch cache", cacher)):
            p50, p99, delivered = await fan_out(store, source, args.watchers, args.events, name[:5])
            print(f"watch fan-out via {name}, {args.watchers} watchers x {args.events} events: "
                  f"delivered {delivered}, p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
        seconds, objects = await watch_lists(cacher, args.watch_lists)
        print(f"{args.watch_lists} watch-lists of {objects // args.watch_lists} objects each, to their bookmarks: "
              f"{seconds * 1000:.0f} ms ({objects / seconds:.0f} events/s)")
        await cacher.stop()
        await kv.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--watchers", type=int, default=500)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--watch-lists", type=int, default=50)
    uvloop.run(main(parser.parse_args()))
