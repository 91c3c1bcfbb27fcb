"""Watch fan-out alone: one server process (SQLite), W watch streams of ConfigMaps in one namespace, E creates
at R per second from C writers; prints deliveries per second and the delivery latency from each write's
acknowledgement (p50/p90/p99/max), the time until the last watcher had each event, and whether every watcher
got every event exactly once and in order.

    python3 bench/watch_fanout.py --watchers 500 --events 1000 --rate 100
    python3 bench/watch_fanout.py --source /tmp/before    # another checkout's src/ (e.g. `git archive` of HEAD~1)

The client is one uvloop process with lean protocols (no JSON parsing of the stream: it finds each event's
name in the line), so a delivery costs it a few microseconds; its CPU time is printed so a saturated
client can be told from a slow server. Figures move with the machine's load: compare runs back to back.

Back to back on a shared 2-core machine (load average 5-8 from other work), --writers 8, 100 creates/s offered:

    watchers x events   code                            writes/s  deliveries/s  p50 ms   p99 ms  exactly-once
    200 x 600           before (one ASGI send/event)        39.0        4,591    8,079   10,756  200/200
    200 x 600           after (direct, coalesced)           70.1       13,974       14       65  200/200
    500 x 500           before                              12.1        2,695   22,172   38,432  (names)
    500 x 500           after                               21.3       10,614       32      325  (names)

(The write rate is what the server and the loaded machine let 8 writers reach; "(names)" runs predate the
resourceVersion-order check.)"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import signal
import ssl
import subprocess
import sys
import tempfile
import time

import uvloop
import yaml

NAMESPACE = "default"
PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
NAME = re.compile(rb'"name":"(fan-\d+)"')
RESOURCE_VERSION = re.compile(rb'"resourceVersion":"(\d+)"')
READY_TIMEOUT = 120.0


class Watch(asyncio.Protocol):
    """One watch stream: the name, resourceVersion and arrival time of each event (its line holds the
    object; the chunk framing between lines is skipped, as it holds no name)."""

    def __init__(self, request: bytes):
        self.request = request
        self.head = asyncio.get_running_loop().create_future()
        self.buffer = b""
        self.seen: list[tuple[str, float]] = []
        self.revisions: list[int] = []
        self.header_done = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        if not self.header_done:
            self.buffer += data
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            self.header_done = True
            status = self.buffer.split(b" ", 2)[1]
            data, self.buffer = self.buffer[end + 4:], b""
            if not self.head.done():
                self.head.set_result(int(status))
        data = self.buffer + data
        cut = data.rfind(b"\n")
        if cut < 0:
            self.buffer = data
            return
        self.buffer = data[cut + 1:]
        for line in data[:cut].split(b"\n"):
            name = NAME.search(line)
            if name is not None:
                self.seen.append((name.group(1).decode(), now))
                self.revisions.append(int(RESOURCE_VERSION.search(line).group(1)))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.head.done():
            self.head.set_exception(ConnectionError("closed before the response head"))


def start_server(root: str, source: str, profile: str) -> tuple[subprocess.Popen, str]:
    data_dir = os.path.join(root, "data")
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = os.path.join(source, "src")
    port = _free_port()
    log = open(os.path.join(root, "server.log"), "w")  # noqa: SIM115 - lives as long as the process
    profiler = ["-m", "cProfile", "-o", profile] if profile else []
    # one process (--workers=1): the fan-out measured, and profiled, is one event loop's
    proc = subprocess.Popen([sys.executable, *profiler, "-m", "kube_apiserver", "--data-dir", data_dir,
                             f"--secure-port={port}", "--workers=1"], stdout=log, stderr=log, env=env)
    kubeconfig = os.path.join(data_dir, "admin.kubeconfig")
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if os.path.exists(kubeconfig) and subprocess.run(
                ["kubectl", "--kubeconfig", kubeconfig, "get", "--raw", "/readyz"], capture_output=True).returncode == 0:
            return proc, data_dir
        if proc.poll() is not None:
            raise SystemExit(f"the server exited; see {root}/server.log")
        time.sleep(0.5)
    raise SystemExit("the server did not get ready")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def request(host: str, port: int, context: ssl.SSLContext, raw: bytes) -> tuple[int, bytes]:
    reader, writer = await asyncio.open_connection(host, port, ssl=context)
    try:
        writer.write(raw)
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))
        return int(head.split(b" ", 2)[1]), await reader.readexactly(length)
    finally:
        writer.close()


class Writer:
    """A keep-alive connection sending creates one at a time."""

    def __init__(self, host: str, port: int, context: ssl.SSLContext, token: str):
        self.target = (host, port, context)
        self.token = token
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def create(self, name: str) -> float:
        if self.streams is None:
            host, port, context = self.target
            self.streams = await asyncio.open_connection(host, port, ssl=context)
        reader, writer = self.streams
        body = json.dumps({"metadata": {"name": name}, "data": {"k": "v" * 200}}).encode()
        writer.write(f"POST {PATH} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {self.token}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))
        await reader.readexactly(length)
        if not head.startswith(b"HTTP/1.1 201"):
            raise RuntimeError(head.decode(errors="replace"))
        return time.monotonic()


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def rank(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered))) - 1))]

    return {"p50": rank(50), "p90": rank(90), "p99": rank(99), "max": ordered[-1]}


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), robust to how busy the machine is."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run(args: argparse.Namespace, port: int, context: ssl.SSLContext, token: str, server_pid: int) -> dict:
    loop = asyncio.get_running_loop()
    status, body = await request("127.0.0.1", port, context,
                                 f"GET {PATH}?limit=1 HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n"
                                 "Connection: close\r\n\r\n".encode())
    rv = json.loads(body)["metadata"]["resourceVersion"]
    watch_request = (f"GET {PATH}?watch=1&resourceVersion={rv} HTTP/1.1\r\nHost: bench\r\n"
                     f"Authorization: Bearer {token}\r\n\r\n").encode()
    watches = []
    for first in range(0, args.watchers, 50):  # handshakes in groups: the server is one process
        batch = [Watch(watch_request) for _ in range(first, min(first + 50, args.watchers))]
        await asyncio.gather(*(loop.create_connection(lambda w=w: w, "127.0.0.1", port, ssl=context)
                               for w in batch))
        await asyncio.gather(*(w.head for w in batch))
        watches.extend(batch)
    writers = [Writer("127.0.0.1", port, context, token) for _ in range(args.writers)]
    names = [f"fan-{i:06d}" for i in range(args.events)]
    acks: dict[str, float] = {}
    queue: asyncio.Queue[str] = asyncio.Queue()
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    server_cpu_before = process_cpu_seconds(server_pid)

    async def write(w: Writer) -> None:
        while True:
            name = await queue.get()
            acks[name] = await w.create(name)
            queue.task_done()

    workers = [asyncio.ensure_future(write(w)) for w in writers]
    started = time.monotonic()
    for i, name in enumerate(names):
        if args.rate > 0:
            delay = started + i / args.rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        queue.put_nowait(name)
    await queue.join()
    last_ack = max(acks.values())
    expected = args.events * args.watchers
    deadline = time.monotonic() + args.drain_timeout
    while sum(len(w.seen) for w in watches) < expected and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    server_cpu = process_cpu_seconds(server_pid) - server_cpu_before
    for worker in workers:
        worker.cancel()
    latencies, last_per_event = [], {}
    exact = 0
    everything = sorted(names)
    for w in watches:
        got = [name for name, _ in w.seen]
        in_order = all(a < b for a, b in zip(w.revisions, w.revisions[1:], strict=False))
        exact += in_order and sorted(got) == everything
        for name, at in w.seen:
            latencies.append((at - acks[name]) * 1000)
            last_per_event[name] = max(last_per_event.get(name, 0.0), at)
    delivered = len(latencies)
    last_delivery = max(last_per_event.values()) if last_per_event else last_ack
    span = last_delivery - started
    client_cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    return {
        "watchers": args.watchers, "events": args.events, "rate": args.rate,
        "writes_per_s": round(len(acks) / (last_ack - started), 1),
        "deliveries": delivered, "expected": expected,
        "deliveries_per_s": round(delivered / span, 1) if span > 0 else 0,
        "latency_from_ack_ms": {k: round(v, 2) for k, v in percentiles(latencies).items()},
        "fanout_complete_from_ack_ms": {k: round(v, 2) for k, v in percentiles(
            [(at - acks[name]) * 1000 for name, at in last_per_event.items()]).items()},
        "drain_after_last_ack_ms": round((last_delivery - last_ack) * 1000, 1),
        "watchers_exactly_once_in_order": f"{exact}/{args.watchers}",
        "client_cpu_cores": round(client_cpu / span, 2) if span > 0 else 0,
        "server_cpu_cores": round(server_cpu / span, 2) if span > 0 else 0,
        "server_cpu_us_per_delivery": round(server_cpu / delivered * 1e6, 1) if delivered else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--watchers", type=int, default=500)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=100.0, help="creates per second (0: unpaced)")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--drain-timeout", type=float, default=30.0)
    parser.add_argument("--source", default="", help="a checkout whose src/ the server runs (default: installed)")
    parser.add_argument("--profile", default="", help="run the server under cProfile, its stats to this file")
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (8192, 8192))
    with tempfile.TemporaryDirectory(prefix="bench-fanout-") as root:
        proc, data_dir = start_server(root, args.source, args.profile)
        try:
            with open(os.path.join(data_dir, "admin.kubeconfig")) as f:
                config = yaml.safe_load(f)
            token = config["users"][0]["user"]["token"]
            port = int(config["clusters"][0]["cluster"]["server"].rsplit(":", 1)[1])
            context = ssl.create_default_context(cafile=os.path.join(data_dir, "pki", "ca.crt"))
            result = uvloop.run(run(args, port, context, token, proc.pid))
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
