#!/usr/bin/env python3
"""What `--workers` adds to each storage call: the KV interface over the socket pair (storage/kvsocket) against
the same SQLite KV called in-process. The storage process is a child, as under --workers; the figures are the
worker side's wall and CPU µs per call with C calls in flight, and the storage process's CPU per call.

    python3 bench/kvsocket.py [-n 5000] [-c 16]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import socket
import sys
import tempfile
import time

import uvloop

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from kube_apiserver.storage.kvsocket import KVServer, RemoteKV  # noqa: E402
from kube_apiserver.storage.sqlite import SQLiteKV  # noqa: E402

VALUE = b"x" * 1200  # about a ConfigMap of k8sbench's


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def measure(kv, n: int, concurrency: int, prefix: str) -> dict[str, tuple[float, float]]:
    """op -> (wall µs, CPU µs) per call, `concurrency` calls in flight."""
    results = {}
    keys = [f"/registry/configmaps/bench/{prefix}{i}" for i in range(n)]

    async def run(op) -> tuple[float, float]:
        queue = iter(range(n))

        async def worker() -> None:
            for i in queue:
                await op(i)

        start_wall, start_cpu = time.perf_counter(), cpu()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return 1e6 * (time.perf_counter() - start_wall) / n, 1e6 * (cpu() - start_cpu) / n

    revisions: dict[int, int] = {}

    async def create(i: int) -> None:
        revisions[i] = (await kv.create(keys[i], VALUE)).revision

    async def get(i: int) -> None:
        await kv.get(keys[i])

    async def update(i: int) -> None:
        await kv.update(keys[i], VALUE, revisions[i])

    for name, op in (("create", create), ("get", get), ("update", update)):
        results[name] = await run(op)
    return results


async def measured(open_kv, n: int, concurrency: int, prefix: str) -> dict[str, tuple[float, float]]:
    kv = await open_kv()
    try:
        return await measure(kv, n, concurrency, prefix)
    finally:
        await kv.close()


def serve_storage(data_dir: str, sock: socket.socket) -> None:
    """The child: the storage process, until the worker hangs up."""

    async def main() -> None:
        kv = await SQLiteKV.open(data_dir)
        done = asyncio.Event()
        server = KVServer(kv)
        await server.serve(sock)
        while server._connections or not done.is_set():
            await asyncio.sleep(0.05)
            done.set()
        await kv.close()

    uvloop.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=5000)
    parser.add_argument("-c", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as local_dir, tempfile.TemporaryDirectory() as remote_dir:

        local = uvloop.run(measured(lambda: SQLiteKV.open(local_dir), args.n, args.c, "local"))
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            ours.close()
            serve_storage(remote_dir, theirs)
            os._exit(0)
        theirs.close()
        over_socket = uvloop.run(measured(lambda: RemoteKV.connect(ours), args.n, args.c, "remote"))
        os.waitpid(pid, 0)
        storage_cpu = children_cpu()
    print(f"{args.n} calls of each, {args.c} in flight, values of {len(VALUE)} bytes; µs per call")
    print(f"{'op':8} {'in-process wall':>16} {'cpu':>8} {'socket wall':>12} {'worker cpu':>11}")
    for op in local:
        print(f"{op:8} {local[op][0]:16.1f} {local[op][1]:8.1f} {over_socket[op][0]:12.1f} {over_socket[op][1]:11.1f}")
    print(f"storage process CPU, all calls: {1e6 * storage_cpu / (3 * args.n):.1f} µs per call "
          f"(its SQLite commits included)")


if __name__ == "__main__":
    main()
