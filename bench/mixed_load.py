"""A sustained mixed load with a constant object count, its throughput printed every minute: does it decay?

One server (started here on SQLite, as deployed, or the one of --kubeconfig) holds --objects ConfigMaps in
one namespace. For --minutes, concurrent clients: churners delete one object and create another (the count
stays constant), getters read objects, listers page through the namespace (limit --page), watchers watch
it (each reconnects from where it stopped). Every --interval seconds a line: the operations per second of
each kind, the watch events delivered per second, the p50/p99 latency of the requests, the server's
CPU share, CPU time per request and RSS (when started here) and this client's CPU share. On a machine
shared with other work the rates follow its load; the server's CPU time per request does not. The last
line compares the last interval to the first.

    python3 bench/mixed_load.py --minutes 10
    python3 bench/mixed_load.py --minutes 1 --interval 10 --objects 200   # a quick look"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from dataclasses import dataclass, field

import aiohttp
import yaml

NAMESPACE = "mixed-load"
READY_TIMEOUT = 120.0
KINDS = ("create", "delete", "get", "page", "list")


@dataclass
class Stats:
    ops: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    watch_events: int = 0


@dataclass
class Client:
    session: aiohttp.ClientSession
    base: str
    headers: dict[str, str]
    stats: Stats

    async def call(self, kind: str, method: str, path: str, body: object | None = None,
                   ok: tuple[int, ...] = (200, 201)) -> dict | None:
        started = time.perf_counter()
        data = json.dumps(body).encode() if body is not None else None
        async with self.session.request(method, self.base + path, data=data, headers=self.headers) as resp:
            payload = await resp.read()
        self.stats.latencies.append(time.perf_counter() - started)
        if resp.status not in ok:
            self.stats.errors[f"{kind} {resp.status}"] += 1
            return None
        self.stats.ops[kind] += 1
        return json.loads(payload)


def configmap(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"payload": "x" * 512}}


CM = f"/api/v1/namespaces/{NAMESPACE}/configmaps"


async def churner(client: Client, live: deque[str], serial: list[int], stop: asyncio.Event) -> None:
    """Deletes the oldest object, creates a new one: the count stays the same."""
    while not stop.is_set():
        name = live.popleft()
        await client.call("delete", "DELETE", f"{CM}/{name}", ok=(200,))
        serial[0] += 1
        fresh = f"cm-{serial[0]:08d}"
        if await client.call("create", "POST", CM, configmap(fresh)) is not None:
            live.append(fresh)


async def getter(client: Client, live: deque[str], stop: asyncio.Event) -> None:
    while not stop.is_set():
        name = live[random.randrange(len(live))]
        await client.call("get", "GET", f"{CM}/{name}", ok=(200, 404))  # 404: deleted meanwhile


async def lister(client: Client, page: int, stop: asyncio.Event) -> None:
    """Pages through the namespace as kubectl and informers do (a consistent first page, then continues)."""
    while not stop.is_set():
        token = ""
        while True:
            suffix = f"&continue={token}" if token else ""
            body = await client.call("page", "GET", f"{CM}?limit={page}{suffix}")
            token = body["metadata"].get("continue", "") if body else ""
            if not token:
                break
        client.stats.ops["list"] += 1


async def watcher(client: Client, start: str, stop: asyncio.Event) -> None:
    revision = start
    while not stop.is_set():
        path = f"{CM}?watch=1&resourceVersion={revision}&allowWatchBookmarks=true&timeoutSeconds=30"
        try:
            async with client.session.get(client.base + path, headers=client.headers,
                                          timeout=aiohttp.ClientTimeout(total=None, sock_read=60)) as resp:
                if resp.status != 200:
                    client.stats.errors[f"watch {resp.status}"] += 1
                    await asyncio.sleep(1)
                    continue
                async for line in resp.content:
                    event = json.loads(line)
                    if event["type"] == "ERROR":  # 410: start again from now
                        revision = ""
                        break
                    revision = event["object"]["metadata"]["resourceVersion"]
                    if event["type"] != "BOOKMARK":
                        client.stats.watch_events += 1
                    if stop.is_set():
                        return
        except (TimeoutError, aiohttp.ClientError):
            client.stats.errors["watch broken"] += 1
        if not revision:
            body = await client.call("list", "GET", f"{CM}?limit=1")
            revision = body["metadata"]["resourceVersion"] if body else ""


class ServerProcess:
    """The server as deployed: one process on SQLite."""

    def __init__(self, root: str, port: int):
        self.data_dir = os.path.join(root, "data")
        self.log = open(os.path.join(root, "server.log"), "w")  # noqa: SIM115 - lives as long as the process
        self.process = subprocess.Popen(["kube-apiserver", "--data-dir", self.data_dir, f"--secure-port={port}"],
                                        stdout=self.log, stderr=self.log)
        self.kubeconfig = os.path.join(self.data_dir, "admin.kubeconfig")

    def cpu_seconds(self) -> float:
        with open(f"/proc/{self.process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self) -> float:
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def free_port() -> int:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from etcd import free_port as pick

    return pick()


async def connect(kubeconfig: str, session: aiohttp.ClientSession, stats: Stats) -> Client:
    deadline = time.monotonic() + READY_TIMEOUT
    while not os.path.exists(kubeconfig):
        if time.monotonic() > deadline:
            raise SystemExit("the server wrote no kubeconfig")
        await asyncio.sleep(0.5)
    with open(kubeconfig) as f:
        config = yaml.safe_load(f)
    client = Client(session, config["clusters"][0]["cluster"]["server"],
                    {"Authorization": f"Bearer {config['users'][0]['user']['token']}",
                     "Content-Type": "application/json"}, stats)
    while True:
        try:
            async with session.get(client.base + "/readyz", headers=client.headers) as resp:
                if resp.status == 200:
                    return client
        except aiohttp.ClientError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit("the server did not get ready")
        await asyncio.sleep(0.5)


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def report(stats: Stats, server: ServerProcess | None, interval: float, count: int,
                 stop: asyncio.Event) -> list[float]:
    """Prints one line per interval; returns each interval's requests per second."""
    rates: list[float] = []
    header = " ".join(f"{k + '/s':>9}" for k in KINDS)
    print(f"{'minute':>6} {header} {'events/s':>9} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'errors':>6} {'cpu %':>6} {'cpu ms/req':>10} {'rss MiB':>8} {'client cpu %':>12}", flush=True)
    cpu = server.cpu_seconds() if server else 0.0
    client_cpu = time.process_time()
    for index in range(1, count + 1):
        await asyncio.sleep(interval)
        ops, events, latencies, errors = stats.ops, stats.watch_events, stats.latencies, stats.errors
        stats.ops, stats.watch_events, stats.latencies, stats.errors = Counter(), 0, [], Counter()
        requests = sum(ops[k] for k in KINDS if k != "list") + sum(errors.values())
        rates.append(requests / interval)
        now = server.cpu_seconds() if server else 0.0
        share, cpu = 100 * (now - cpu) / interval, now
        client_share, client_cpu = 100 * (time.process_time() - client_cpu) / interval, time.process_time()
        columns = " ".join(f"{ops[k] / interval:9.1f}" for k in KINDS)
        print(f"{index * interval / 60:6.1f} {columns} {events / interval:9.1f} {rates[-1]:8.1f} "
              f"{1000 * percentile(latencies, 0.5):7.1f} {1000 * percentile(latencies, 0.99):7.1f} "
              f"{sum(errors.values()):6d} {share:6.0f} {10 * share / max(rates[-1], 1e-9):10.2f} "
              f"{server.rss_mib() if server else 0:8.0f} {client_share:12.0f}",
              flush=True)
        if errors:
            print(f"       errors: {dict(errors)}", flush=True)
    stop.set()
    return rates


async def run(args: argparse.Namespace, server: ServerProcess | None, kubeconfig: str) -> None:
    stats = Stats()
    connector = aiohttp.TCPConnector(ssl=False, limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        client = await connect(kubeconfig, session, stats)
        await client.call("setup", "POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}}, ok=(201, 409))
        live: deque[str] = deque()
        for start in range(0, args.objects, 50):
            batch = [f"cm-{i:08d}" for i in range(start, min(args.objects, start + 50))]
            await asyncio.gather(*(client.call("setup", "POST", CM, configmap(n), ok=(201, 409)) for n in batch))
            live.extend(batch)
        serial = [args.objects]
        listed = await client.call("setup", "GET", f"{CM}?limit=1")
        stats.ops.clear()
        stop = asyncio.Event()
        print(f"{args.objects} objects; {args.churners} churners, {args.getters} getters, {args.listers} listers "
              f"(limit {args.page}), {args.watchers} watchers; {args.minutes} min", flush=True)
        workers = [churner(client, live, serial, stop) for _ in range(args.churners)]
        workers += [getter(client, live, stop) for _ in range(args.getters)]
        workers += [lister(client, args.page, stop) for _ in range(args.listers)]
        workers += [watcher(client, listed["metadata"]["resourceVersion"], stop) for _ in range(args.watchers)]
        tasks = [asyncio.ensure_future(w) for w in workers]
        count = max(1, round(args.minutes * 60 / args.interval))
        rates = await report(stats, server, args.interval, count, stop)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        first, last = rates[0], rates[-1]
        print(f"requests/s: first interval {first:.1f}, last {last:.1f} ({100 * (last - first) / first:+.0f}%), "
              f"min {min(rates):.1f}, max {max(rates):.1f}; objects now {len(live)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--interval", type=float, default=60, help="seconds per printed line")
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--page", type=int, default=100, help="the listers' limit")
    parser.add_argument("--churners", type=int, default=4)
    parser.add_argument("--getters", type=int, default=4)
    parser.add_argument("--listers", type=int, default=2)
    parser.add_argument("--watchers", type=int, default=10)
    parser.add_argument("--kubeconfig", default="", help="load a running server instead of starting one")
    args = parser.parse_args()
    if args.kubeconfig:
        asyncio.run(run(args, None, args.kubeconfig))
        return
    with tempfile.TemporaryDirectory(prefix="bench-mixed-") as root:
        server = ServerProcess(root, free_port())
        try:
            asyncio.run(run(args, server, server.kubeconfig))
        finally:
            server.stop()


if __name__ == "__main__":
    main()
