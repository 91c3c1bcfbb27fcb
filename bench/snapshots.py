#!/usr/bin/env python3
"""Snapshot, restore and reset of the whole store, with --objects ConfigMaps (1,000 by default): on the storage
alone, then through /debug/testing/* (--enable-testing-endpoints) of a running `kube-apiserver` (a child
process on a fresh data dir, on each of --backends: memory, kube_apiserver.testing's default for a temporary
data dir, and SQLite, the command's) with every embedded controller on (its default), then through the
library (kube_apiserver.testing.state on an APIServer in this process, as a test calls it).

- snapshot: POST /debug/testing/snapshots with the objects stored;
- reset:    POST /debug/testing/reset with the objects stored: the restore deletes every one;
- restore:  POST /debug/testing/snapshots/<full>/restore after a reset: it creates every one again;
- restore (modified): the same after every object was changed through the API: it updates every one.

Each is timed from the client (request to answer, on one kept-alive connection), best and median of --runs.
The target: each under 50 ms for 1,000 objects. The writer of a restore is answered once its writes are
committed; the server's own watchers (every resource's watch cache, the embedded controllers' informers) take
the events after that, which costs the server's loop about as much CPU again. "settled" runs start once the
server is done with the previous run's events (--settle seconds after it, and a consistent list of the
ConfigMaps); "back to back" runs do not wait, so each also pays for what the previous one left to dispatch.
--server-arg=--controllers=... shows the controllers' share. "storage only" is the same on a MemoryKV and
an SQLiteKV in this process, with no watcher.

    python bench/snapshots.py
    python bench/snapshots.py --objects 5000 --runs 3 --server-arg=--controllers=namespace
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import yaml

from kube_apiserver.storage import snapshot
from kube_apiserver.storage.memory import MemoryKV
from kube_apiserver.storage.sqlite import SQLiteKV

HOST = "127.0.0.1"
TIMEOUT_S = 60.0
NAMESPACE = "default"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Client:
    def __init__(self, port: int, data_dir: str):
        with open(os.path.join(data_dir, "admin.kubeconfig")) as f:
            config = yaml.safe_load(f)
        self.token = config["users"][0]["user"]["token"]
        ca = config["clusters"][0]["cluster"].get("certificate-authority")
        context = ssl.create_default_context(cafile=ca) if ca else ssl._create_unverified_context()  # noqa: S323
        self.conn = http.client.HTTPSConnection(HOST, port, context=context, timeout=TIMEOUT_S)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {self.token}"}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=headers)
        resp = self.conn.getresponse()
        raw = resp.read()
        return resp.status, (json.loads(raw) if raw.startswith(b"{") else raw)

    def timed(self, method: str, path: str) -> tuple[float, Any]:
        start = time.perf_counter()
        status, body = self.request(method, path)
        elapsed = time.perf_counter() - start
        if status >= 300:
            raise SystemExit(f"{method} {path}: {status} {body}")
        return elapsed, body


def start_server(data_dir: str, port: int, extra: list[str]) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable,
        "-m",
        "kube_apiserver",
        "--data-dir",
        data_dir,
        "--secure-port",
        str(port),
        "--enable-testing-endpoints",
        *extra,
    ]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_ready(port: int, data_dir: str) -> Client:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            client = Client(port, data_dir)
            if client.request("GET", "/readyz")[0] == 200:
                return client
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.05)
    raise SystemExit("the server did not become ready")


def configmaps(client: Client, count: int, value: str) -> None:
    path = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    for i in range(count):
        name = f"bench-{i:05d}"
        status, body = client.request("GET", f"{path}/{name}")
        if status == 404:
            obj = {"metadata": {"name": name}, "data": {"k": value}}
            status, body = client.request("POST", path, obj)
        else:
            body["data"] = {"k": value}
            status, body = client.request("PUT", f"{path}/{name}", body)
        if status >= 300:
            raise SystemExit(f"writing {name}: {status} {body}")


def report(name: str, times: list[float], writes: int | None = None) -> None:
    what = f" ({writes} writes)" if writes is not None else ""
    print(
        f"{name:<24} best {min(times) * 1000:7.1f} ms   median {statistics.median(times) * 1000:7.1f} ms{what}"
    )


async def storage_alone(kind: type[SQLiteKV] | type[MemoryKV], count: int, runs: int) -> None:
    """storage.snapshot on a KV of `count` keys: take, then restore to empty and back (no watcher)."""
    with tempfile.TemporaryDirectory() as data_dir:
        kv = await kind.open(data_dir)
        try:
            empty = await snapshot.take(kv)
            value = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v" * 200}}).encode()
            await asyncio.gather(
                *(kv.create(f"/registry/configmaps/default/bench-{i:05d}", value) for i in range(count))
            )
            takes, resets, restores = [], [], []
            for _ in range(runs):
                start = time.perf_counter()
                full = await snapshot.take(kv)
                takes.append(time.perf_counter() - start)
                start = time.perf_counter()
                await snapshot.restore(kv, empty)
                resets.append(time.perf_counter() - start)
                start = time.perf_counter()
                await snapshot.restore(kv, full)
                restores.append(time.perf_counter() - start)
        finally:
            await kv.close()
    print(f"storage only: {count} keys in a {kind.__name__}, {runs} runs")
    report("snapshot", takes)
    report("reset", resets, count)
    report("restore", restores, count)


def settle(client: Client, seconds: float) -> None:
    """Until the server is done with what it was dispatching: its watch cache of ConfigMaps caught up (a
    consistent list waits for it), then `seconds` for the informers."""
    status, body = client.request("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps?limit=1")
    if status != 200:
        raise SystemExit(f"listing: {status} {body}")
    time.sleep(seconds)


def through_server(client: Client, args: argparse.Namespace, backend: str) -> None:
    configmaps(client, args.objects, "v1")
    snapshots: list[float] = []
    for _ in range(args.runs):
        elapsed, body = client.timed("POST", "/debug/testing/snapshots")
        snapshots.append(elapsed)
        full = body["name"]
    print(f"server on {backend}, all controllers: {args.objects} ConfigMaps, {args.runs} runs, target < 50 ms each")
    report("snapshot", snapshots)
    for label, pause in (("settled", args.settle), ("back to back", None)):
        resets, restores, written = [], [], {}
        for _ in range(args.runs):
            for name, path in (
                ("reset", "/debug/testing/reset"),
                ("restore", f"/debug/testing/snapshots/{full}/restore"),
            ):
                if pause is not None:
                    settle(client, pause)
                elapsed, body = client.timed("POST", path)
                (resets if name == "reset" else restores).append(elapsed)
                written[name] = body["deleted"] + body["created"] + body["updated"]
        report(f"reset ({label})", resets, written["reset"])
        report(f"restore ({label})", restores, written["restore"])
    configmaps(client, args.objects, "v2")
    settle(client, args.settle)
    modified, body = client.timed("POST", f"/debug/testing/snapshots/{full}/restore")
    report("restore (modified)", [modified], body["updated"])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--settle", type=float, default=0.5, help="seconds a settled run waits before it")
    parser.add_argument("--server-arg", action="append", default=[], help="passed to kube-apiserver")
    parser.add_argument("--backends", default="memory,sqlite", help="the servers' --storage-backend, in turn")
    parser.add_argument("--no-library", action="store_true", help="leave out kube_apiserver.testing's run")
    args = parser.parse_args()
    for kind in (MemoryKV, SQLiteKV):
        asyncio.run(storage_alone(kind, args.objects, args.runs))
    for backend in args.backends.split(","):
        with tempfile.TemporaryDirectory() as data_dir:
            port = free_port()
            proc = start_server(data_dir, port, [f"--storage-backend={backend}", *args.server_arg])
            try:
                through_server(wait_ready(port, data_dir), args, backend)
            finally:
                proc.terminate()
                proc.wait(30)
    if not args.no_library:
        through_library(args)


def through_library(args: argparse.Namespace) -> None:
    """The same through kube_apiserver.testing: an APIServer from a Template in this process (its store in
    memory, its default for a temporary data dir), its snapshot/restore/reset methods, settled runs."""
    from kube_apiserver.testing import APIServer, Template

    template = Template.create()
    try:
        with APIServer(args=args.server_arg, template=template) as server:
            path = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
            for i in range(args.objects):
                obj = {"metadata": {"name": f"bench-{i:05d}"}, "data": {"k": "v1"}}
                if server.request("POST", path, obj).status != 201:
                    raise SystemExit("creating the ConfigMaps failed")
            takes, resets, restores = [], [], []
            for _ in range(args.runs):
                start = time.perf_counter()
                full = server.snapshot()
                takes.append(time.perf_counter() - start)
            for _ in range(args.runs):
                for timings, operation in ((resets, APIServer.reset), (restores, lambda s: s.restore(full))):
                    server.request("GET", f"{path}?limit=1")
                    time.sleep(args.settle)
                    start = time.perf_counter()
                    operation(server)
                    timings.append(time.perf_counter() - start)
    finally:
        template.remove()
    print(f"library (thread mode, memory), all controllers: {args.objects} ConfigMaps, {args.runs} runs, settled")
    report("snapshot", takes)
    report("reset", resets, args.objects)
    report("restore", restores, args.objects)


if __name__ == "__main__":
    main()
