#!/usr/bin/env python3
"""How much memory do stored objects cost the server? RSS per 10,000 ConfigMaps of about 1 KiB.

Starts the real `kube-apiserver` (a child process, a fresh data dir; SQLite, or --backend etcd3 on a local
etcd started here), reads its RSS (VmRSS of /proc/<pid>/status) once ready, then stores --objects (30,000)
ConfigMaps of about 1 KiB of data each in one namespace, reading RSS after each 10,000, and prints the RSS
delta per 10,000 (the apiserver's; etcd's is printed apart). The server's watch cache holds every
ConfigMap, as kube-apiserver's does, so the delta is what one more object costs while served.

The reference kube-apiserver (../shared/reference/refcluster.sh) is measured the same way when given its
kubeconfig and pid files (--ref DIR, the $REF the script started it in):

    python3 bench/memory.py                                  # ours on SQLite, 30,000 ConfigMaps
    python3 bench/memory.py --backend etcd3                  # ours on etcd
    python3 bench/memory.py --ref /tmp/ref-memory --skip-ours  # the reference only
    python3 bench/memory.py --baseline-src /tmp/before/src     # another tree, for before/after figures
    python3 bench/memory.py -- --workers 2                     # flags for our server after --

`--tracemalloc N` runs ours in a child that traces allocations (N frames each) and prints, once the
objects are stored, the memory still held grouped by the line that allocated it (and by N-frame traceback
for the largest). Tracing costs time and memory: figures from such a run are not RSS figures."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.client import HTTPSConnection
from pathlib import Path
from urllib.parse import urlparse

HOST = "127.0.0.1"
NS = "memory"
SRC = str(Path(__file__).resolve().parent.parent / "src")
TESTS = str(Path(__file__).resolve().parent.parent / "tests")  # tests/etcd.py starts etcd
STEP = 10_000
SETTLE_SECONDS = 3.0  # after the last write, for the watch cache and the informers to take it in
READY_TIMEOUT = 120.0


def rss_kib(pid: int) -> int:
    """The resident set of `pid` (VmRSS) and of its descendants (the workers of `--workers N`), in KiB."""
    match = re.search(r"^VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    return (int(match.group(1)) if match else 0) + sum(rss_kib(child) for child in children(pid))


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


@dataclass
class Target:
    """A server to write to: its address, bearer token and the pids whose RSS is read."""

    label: str
    host: str
    port: int
    token: str
    server_pid: int
    etcd_pid: int = 0

    def connect(self) -> HTTPSConnection:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # both servers serve a self-signed certificate
        return HTTPSConnection(self.host, self.port, timeout=120, context=ctx)

    def request(
        self, conn: HTTPSConnection, method: str, path: str, body: object = None
    ) -> tuple[int, bytes]:
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        conn.request(method, path, body=None if body is None else json.dumps(body).encode(), headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()


def configmap(i: int) -> dict:
    """About 1 KiB of data: ten keys of about 100 bytes."""
    return {
        "metadata": {"name": f"cm-{i:06d}", "labels": {"app": "memory"}},
        "data": {f"key-{k}": f"value-{i}-{k}-" + "x" * 80 for k in range(10)},
    }


def store(target: Target, first: int, last: int, workers: int) -> None:
    local = threading.local()

    def create(i: int) -> None:
        if not hasattr(local, "conn"):
            local.conn = target.connect()
        status, out = target.request(local.conn, "POST", f"/api/v1/namespaces/{NS}/configmaps", configmap(i))
        if status not in (201, 409):
            raise RuntimeError(f"create cm-{i}: {status} {out[:200]!r}")

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(create, range(first, last)))


def measure(target: Target, objects: int, workers: int, on_stored: Callable[[], None] | None = None) -> dict:
    conn = target.connect()
    target.request(conn, "POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    time.sleep(SETTLE_SECONDS)
    start = rss_kib(target.server_pid), rss_kib(target.etcd_pid) if target.etcd_pid else 0
    points = [(0, *start)]
    print(
        f"{target.label}: at start apiserver {start[0] / 1024:.1f} MiB, etcd {start[1] / 1024:.1f} MiB",
        file=sys.stderr,
    )
    began = time.monotonic()
    step = min(STEP, objects)  # a traced run stores fewer
    for stored in range(step, objects + 1, step):
        store(target, stored - step, stored, workers)
        time.sleep(SETTLE_SECONDS)
        now = rss_kib(target.server_pid), rss_kib(target.etcd_pid) if target.etcd_pid else 0
        points.append((stored, *now))
        print(
            f"{target.label}: {stored} ConfigMaps after {time.monotonic() - began:.0f} s: apiserver "
            f"{now[0] / 1024:.1f} MiB, etcd {now[1] / 1024:.1f} MiB",
            file=sys.stderr,
        )
    if on_stored is not None:
        on_stored()
    last = points[-1]
    per_step = (last[1] - start[0]) / (last[0] / STEP) / 1024
    etcd_per_step = (last[2] - start[1]) / (last[0] / STEP) / 1024 if target.etcd_pid else None
    return {
        "label": target.label,
        "points": [{"objects": n, "apiserver_kib": a, "etcd_kib": e} for n, a, e in points],
        "apiserver_mib_per_10k": round(per_step, 1),
        "etcd_mib_per_10k": None if etcd_per_step is None else round(etcd_per_step, 1),
    }


# ---- ours ----


def start_ours(
    src: str, root: str, backend: str, trace_frames: int, server_flags: list[str]
) -> tuple[subprocess.Popen, Target, object]:
    data_dir = os.path.join(root, "data")
    argv = [
        sys.executable,
        "-m",
        "kube_apiserver",
        "--data-dir",
        data_dir,
        f"--secure-port={free_port()}",
        "--shutdown-delay-duration=0s",
        *server_flags,
    ]
    cluster, etcd_pid = None, 0
    if backend == "etcd3":
        sys.path.insert(0, TESTS)
        from etcd import EtcdCluster

        cluster = EtcdCluster(os.path.join(root, "etcd"), members_count=1).start()
        etcd_pid = cluster.members[0].process.pid
        argv += ["--storage-backend=etcd3", f"--etcd-servers={cluster.endpoints}"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
    if trace_frames:  # the same server, run in-process by this script's traced child
        argv = [
            sys.executable,
            __file__,
            "--traced-child",
            str(trace_frames),
            os.path.join(root, "allocations.txt"),
            "--",
            *argv[3:],
        ]
    log = open(os.path.join(root, "server.log"), "w")  # noqa: SIM115 - lives as long as the process
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
    kubeconfig = Path(data_dir, "admin.kubeconfig")
    deadline = time.monotonic() + READY_TIMEOUT
    while not kubeconfig.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"our server did not start; see {root}/server.log")
        time.sleep(0.2)
    target = target_from_kubeconfig(f"ours ({backend})", kubeconfig, proc.pid, etcd_pid)
    wait_ready(target, proc)
    return proc, target, cluster


def target_from_kubeconfig(label: str, kubeconfig: Path, server_pid: int, etcd_pid: int) -> Target:
    text = kubeconfig.read_text()
    url = urlparse(re.search(r"server:\s*\"?([^\s\"}]+)", text).group(1))  # type: ignore[union-attr]
    token = re.search(r"token:\s*(\S+?)[}\s]", text + "\n").group(1)  # type: ignore[union-attr]
    return Target(label, url.hostname or HOST, url.port or 443, token, server_pid, etcd_pid)


def wait_ready(target: Target, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            if target.request(target.connect(), "GET", "/readyz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit("the server did not get ready")


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_ours(args: argparse.Namespace, src: str, label: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as root:
        proc, target, cluster = start_ours(src, root, args.backend, args.tracemalloc, args.server_flags)
        target.label = label
        try:
            dump = None
            if args.tracemalloc:
                dump = lambda: dump_allocations(proc, Path(root, "allocations.txt"))  # noqa: E731
            return measure(target, args.objects, args.workers, dump)
        finally:
            stop(proc)
            if cluster is not None:
                cluster.stop()  # type: ignore[attr-defined]


def dump_allocations(proc: subprocess.Popen, out: Path) -> None:
    """Asks the traced child (SIGUSR2) for what its server holds, and prints it."""
    proc.send_signal(signal.SIGUSR2)
    deadline = time.monotonic() + 900  # a snapshot of millions of traced blocks takes minutes
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(1)
    print(out.read_text() if out.exists() else "no allocations were written", file=sys.stderr)


def traced_child(frames: int, out: str, server_argv: list[str]) -> None:
    """Runs the server in a thread of this process, tracing allocations; on SIGUSR2 writes what is held."""
    import asyncio
    import tracemalloc

    import uvloop

    from kube_apiserver.cmd.options import ServerRunOptions
    from kube_apiserver.cmd.server import run

    tracemalloc.start(frames)

    async def serve() -> None:
        completed = ServerRunOptions.parse(server_argv).complete()
        errs = completed.validate()
        if errs:
            raise SystemExit(f"invalid options: {errs}")
        await run(completed, asyncio.Event(), asyncio.Event())

    threading.Thread(target=lambda: uvloop.run(serve()), daemon=True).start()
    dumped = threading.Event()
    signal.signal(signal.SIGUSR2, lambda *_: dumped.set())
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    dumped.wait()
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    by_line = snapshot.statistics("lineno")
    total = sum(s.size for s in by_line)
    lines = [
        f"traced memory held: {total / 2**20:.1f} MiB in {sum(s.count for s in by_line)} blocks",
        "by line:",
    ]
    lines += [f"{s.size / 2**20:8.2f} MiB {s.count:9} blocks  {s.traceback[0]}" for s in by_line[:25]]
    lines.append("by traceback (largest):")
    for stat in snapshot.statistics("traceback")[:8]:
        lines.append(f"{stat.size / 2**20:8.2f} MiB {stat.count:9} blocks")
        lines += [f"        {frame}" for frame in stat.traceback]
    Path(out + ".tmp").write_text("\n".join(lines) + "\n")
    os.replace(out + ".tmp", out)
    threading.Event().wait()


# ---- the reference ----


def run_reference(args: argparse.Namespace) -> dict:
    ref = Path(args.ref)
    target = target_from_kubeconfig(
        "reference v1.20.2",
        ref / "kubeconfig",
        int((ref / "apiserver.pid").read_text()),
        int((ref / "etcd.pid").read_text()),
    )
    wait_ready(target)
    return measure(target, args.objects, args.workers)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--objects", type=int, default=3 * STEP, help="ConfigMaps stored (a multiple of 10,000, or fewer)"
    )
    parser.add_argument("--backend", choices=["sqlite", "etcd3"], default="sqlite")
    parser.add_argument("--workers", type=int, default=8, help="concurrent creating connections")
    parser.add_argument(
        "--ref", default="", help="$REF of a running refcluster.sh: measure the reference too"
    )
    parser.add_argument("--skip-ours", action="store_true")
    parser.add_argument("--baseline-src", default="", help="also measure the server of another tree's src")
    parser.add_argument(
        "--tracemalloc",
        type=int,
        default=0,
        metavar="FRAMES",
        help="print where ours holds memory once the objects are stored (not an RSS figure)",
    )
    parser.add_argument("--out", default="", help="the figures as JSON")
    parser.add_argument("server_flags", nargs="*", help="after --: flags for our server (e.g. --workers 2)")
    if sys.argv[1:2] == ["--traced-child"]:
        traced_child(int(sys.argv[2]), sys.argv[3], sys.argv[5:])
        return
    args = parser.parse_args()
    results = []
    if args.baseline_src:
        results.append(run_ours(args, args.baseline_src, f"baseline ({args.backend})"))
    if not args.skip_ours:
        results.append(run_ours(args, SRC, f"ours ({args.backend})"))
    if args.ref:
        results.append(run_reference(args))
    print(
        f"{'server':<24} {'MiB/10k ConfigMaps':>20} {'etcd MiB/10k':>14} {'RSS at start':>13} {'RSS at end':>11}"
    )
    for r in results:
        etcd = "" if r["etcd_mib_per_10k"] is None else f"{r['etcd_mib_per_10k']:.1f}"
        first, last = r["points"][0], r["points"][-1]
        print(
            f"{r['label']:<24} {r['apiserver_mib_per_10k']:>20.1f} {etcd:>14} "
            f"{first['apiserver_kib'] / 1024:>10.1f} MiB {last['apiserver_kib'] / 1024:>7.1f} MiB"
        )
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
