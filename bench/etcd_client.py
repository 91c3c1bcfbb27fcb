"""etcd v3 client candidates for the etcd3 backend, measured against one local etcd (started here on a
loopback port with a temp data dir): put, get and compare-and-swap txn throughput with 32 concurrent
callers, and watch delivery (events/s one watcher receives while the writes happen). Prints a table.

    python3 bench/etcd_client.py [--ops 3000] [--concurrency 32] [--path DIR ...]

Candidates: `raw-grpc` (grpcio's generic multi-callables with our own wire encoding, what
storage/etcd3 uses), `aetcd` 1.0.0 and `etcd3aio` 0.3.0 when importable (--path adds a directory to
sys.path, e.g. a `pip install --target` of them, so they need not be installed in the environment)."""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable

TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests")  # tests/etcd.py starts etcd

Op = Callable[[int], Awaitable[object]]


class Candidate:
    name = ""

    async def open(self, endpoint: str) -> None: ...
    async def put(self, key: bytes, value: bytes) -> None: ...
    async def get(self, key: bytes) -> None: ...
    async def create(self, key: bytes, value: bytes) -> None: ...
    async def watch_count(self, prefix: bytes, count: int, started: asyncio.Event) -> None: ...
    async def close(self) -> None: ...


class RawGrpc(Candidate):
    name = "raw-grpc (ours)"

    async def open(self, endpoint: str) -> None:
        from kube_apiserver.storage.etcd3 import EtcdKV

        self.kv = await EtcdKV.open([endpoint], prefix="/registry")

    async def put(self, key: bytes, value: bytes) -> None:
        from kube_apiserver.storage.etcd3 import messages as m

        await self.kv.client.unary(m.PUT_METHOD, m.put_request(key, value))

    async def get(self, key: bytes) -> None:
        await self.kv.get(key.decode())

    async def create(self, key: bytes, value: bytes) -> None:
        await self.kv.create(key.decode(), value)

    async def watch_count(self, prefix: bytes, count: int, started: asyncio.Event) -> None:
        from kube_apiserver.storage.kv import prefix_end

        start = prefix.decode()
        stream = self.kv.watch(start, prefix_end(start), await self.kv.current_revision() + 1)
        seen = 0
        task = asyncio.ensure_future(stream.__anext__())
        await asyncio.sleep(0.2)  # the stream is open before the writes start
        started.set()
        while True:
            batch = await task
            seen += len(batch.events)
            if seen >= count:
                break
            task = asyncio.ensure_future(stream.__anext__())
        await stream.aclose()

    async def close(self) -> None:
        await self.kv.close()


class Aetcd(Candidate):
    name = "aetcd 1.0.0"

    async def open(self, endpoint: str) -> None:
        import aetcd

        host, port = endpoint.rsplit("//", 1)[1].rsplit(":", 1)
        self.client = aetcd.Client(host=host, port=int(port))
        await self.client.connect()

    async def put(self, key: bytes, value: bytes) -> None:
        await self.client.put(key, value)

    async def get(self, key: bytes) -> None:
        await self.client.get(key)

    async def create(self, key: bytes, value: bytes) -> None:
        t = self.client.transactions
        await self.client.transaction([t.create(key) == 0], [t.put(key, value)], [t.get(key)])

    async def watch_count(self, prefix: bytes, count: int, started: asyncio.Event) -> None:
        watch = await self.client.watch_prefix(prefix, prev_kv=True)
        started.set()
        seen = 0
        async for _ in watch:
            seen += 1
            if seen >= count:
                break
        await watch.cancel()

    async def close(self) -> None:
        await self.client.close()


class Etcd3aio(Candidate):
    name = "etcd3aio 0.3.0"

    async def open(self, endpoint: str) -> None:
        from etcd3aio import Etcd3Client

        self.client = Etcd3Client([endpoint.rsplit("//", 1)[1]])
        await self.client.connect()

    async def put(self, key: bytes, value: bytes) -> None:
        await self.client.kv.put(key, value)

    async def get(self, key: bytes) -> None:
        await self.client.kv.get(key)

    async def create(self, key: bytes, value: bytes) -> None:
        kv = self.client.kv
        await kv.txn(
            [kv.txn_compare_create_revision(key, 0)], [kv.txn_op_put(key, value)], [kv.txn_op_get(key)]
        )

    async def watch_count(self, prefix: bytes, count: int, started: asyncio.Event) -> None:
        from etcd3aio.kv import prefix_range_end

        stream = self.client.watch.watch(prefix, prefix_range_end(prefix), prev_kv=True)
        seen = 0
        task = asyncio.ensure_future(stream.__anext__())
        await asyncio.sleep(0.2)
        started.set()
        while True:
            response = await task
            seen += len(response.events)
            if seen >= count:
                break
            task = asyncio.ensure_future(stream.__anext__())
        await stream.aclose()

    async def close(self) -> None:
        await self.client.close()


async def throughput(op: Op, ops: int, concurrency: int) -> float:
    numbers = iter(range(ops))

    async def worker() -> None:
        for i in numbers:
            await op(i)

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return ops / (time.perf_counter() - began)


async def measure(
    candidate: Candidate, endpoint: str, ops: int, concurrency: int, run: int
) -> dict[str, float]:
    await candidate.open(endpoint)
    p = f"/registry/bench{run}/".encode()
    value = b"x" * 512
    try:
        figures = {
            "put/s": await throughput(lambda i: candidate.put(p + b"p%d" % i, value), ops, concurrency),
            "get/s": await throughput(lambda i: candidate.get(p + b"p%d" % i), ops, concurrency),
            "txn/s": await throughput(lambda i: candidate.create(p + b"t%d" % i, value), ops, concurrency),
        }
        started = asyncio.Event()
        watcher = asyncio.ensure_future(candidate.watch_count(p + b"w", ops, started))
        await started.wait()
        began = time.perf_counter()
        await throughput(lambda i: candidate.put(p + b"w%d" % i, value), ops, concurrency)
        await asyncio.wait_for(watcher, 120)
        figures["watch events/s"] = ops / (time.perf_counter() - began)
        return figures
    finally:
        await candidate.close()


CANDIDATES: dict[str, tuple[str, type[Candidate]]] = {
    "raw-grpc": ("grpc", RawGrpc),
    "aetcd": ("aetcd", Aetcd),
    "etcd3aio": ("etcd3aio", Etcd3aio),
}


def run_one(name: str, endpoint: str, ops: int, concurrency: int) -> None:
    """One candidate in this process (the PyPI clients register the same protobuf symbols: one per process)."""
    import uvloop

    module, candidate_type = CANDIDATES[name]
    try:
        __import__(module)
    except ImportError as err:
        print(f"{name:<18}(not importable: {err})")
        return
    candidate = candidate_type()
    figures = uvloop.run(measure(candidate, endpoint, ops, concurrency, os.getpid()))
    print(
        f"{candidate.name:<18}"
        + "".join(f"{figures[k]:>9.0f}" for k in ("put/s", "get/s", "txn/s"))
        + f"{figures['watch events/s']:>16.0f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--path", action="append", default=[], help="a directory added to sys.path")
    parser.add_argument("--only", choices=sorted(CANDIDATES), help="measure one candidate (at --endpoint)")
    parser.add_argument("--endpoint", default="")
    args = parser.parse_args()
    sys.path[1:1] = args.path
    if args.only:
        run_one(args.only, args.endpoint, args.ops, args.concurrency)
        return
    sys.path.insert(0, TESTS)
    from etcd import EtcdCluster

    with tempfile.TemporaryDirectory() as tmp, EtcdCluster(tmp, 1) as cluster:
        endpoint = cluster.client_urls[0]
        print(f"etcd at {endpoint}; {args.ops} ops per figure, {args.concurrency} concurrent callers")
        print(f"{'client':<18}{'put/s':>9}{'get/s':>9}{'txn/s':>9}{'watch events/s':>16}", flush=True)
        for name in CANDIDATES:
            paths = [arg for path in args.path for arg in ("--path", path)]
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--only",
                    name,
                    "--endpoint",
                    endpoint,
                    "--ops",
                    str(args.ops),
                    "--concurrency",
                    str(args.concurrency),
                    *paths,
                ],
                check=False,
            )


if __name__ == "__main__":
    main()
