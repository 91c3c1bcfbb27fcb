#!/usr/bin/env python3
"""Does one CPU-heavy request starve the others? The worst /readyz answer while it runs.

Starts the real `kube-apiserver` (a child process, a fresh data dir), stores --objects ConfigMaps of about
1 KiB in one namespace, then for each scenario sends the heavy request on one connection while a probe on
another connection GETs /readyz every 10 ms. It prints, per scenario, how long the heavy request took and the
probe's worst latency and worst gap between two answers (what a health check or a small GET would have seen).

Scenarios:
- list-json, list-protobuf, list-table, list-yaml: the whole namespace listed in that representation;
- patch-smp: a strategic merge patch rewriting --env (5,000) env entries of a Deployment's container;
- patch-finalizers: a strategic merge patch adding --env (5,000) finalizers to a ConfigMap holding as many (a
  list merged as a set);
- cr-deep: a custom resource --depth levels deep created, then server-side applied;
- cr-array: a custom resource with an --items (50,000) item array created, validated by its openAPIV3Schema
  (types, patterns, formats, bounds, enums, required fields) and pruned;
- compaction: the SQLite store (in a child process on the tree's code, not the server) holding --revisions
  (50,000) revisions compacts them while a probe on its event loop sleeps 10 ms at a time (its worst gap is
  what /readyz would see) and another writes one key every 10 ms (its worst write is in the size column).

    python bench/starvation.py                                   # 20,000 ConfigMaps, every scenario
    python bench/starvation.py --objects 5000 --scenarios list-json,list-protobuf
    python bench/starvation.py --baseline-src /tmp/before/src    # the same against another tree, after
"""

from __future__ import annotations

import argparse
import http.client
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"
NS = "starve"
SRC = str(Path(__file__).resolve().parent.parent / "src")
PROBE_INTERVAL = 0.010
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PROTOBUF = "application/vnd.kubernetes.protobuf"
SCENARIOS = ["list-json", "list-protobuf", "list-table", "list-yaml", "patch-smp", "patch-finalizers", "cr-deep",
             "cr-array", "compaction"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def tls_client() -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the serving certificate is signed by the CA the server made
    return ctx


@dataclass
class Server:
    port: int
    token: str
    proc: subprocess.Popen

    def connect(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(HOST, self.port, timeout=600, context=tls_client())

    def request(self, method: str, path: str, body: object = None, content_type: str = "application/json",
                accept: str = "", conn: http.client.HTTPSConnection | None = None) -> tuple[int, bytes]:
        own = conn is None
        conn = conn or self.connect()
        headers = {"Authorization": f"Bearer {self.token}"}
        if accept:
            headers["Accept"] = accept
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            if own:
                conn.close()

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_server(src: str, work: str, log) -> Server:
    data_dir = tempfile.mkdtemp(prefix="starve-", dir=work)
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
    # one process: the question is whether the heavy request stalls the event loop the probe is served on
    proc = subprocess.Popen([sys.executable, "-m", "kube_apiserver", "--data-dir", data_dir, "--secure-port",
                             str(port), "--shutdown-delay-duration=0s", "--workers=1"],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 120
    server = Server(port, "", proc)
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if server.request("GET", "/readyz")[0] == 200:
                break
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("server did not get ready")
        time.sleep(0.2)
    server.token = re.search(r"token:\s*(\S+)", Path(data_dir, "admin.kubeconfig").read_text()).group(1)  # type: ignore[union-attr]
    return server


def seed(server: Server, objects: int) -> None:
    server.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    local = threading.local()

    def create(i: int) -> None:
        if not hasattr(local, "conn"):
            local.conn = server.connect()
        body = {"metadata": {"name": f"cm-{i:06d}", "labels": {"app": "starve"}},
                "data": {f"key-{k}": f"value-{i}-{k}-" + "x" * 80 for k in range(10)}}
        status, out = server.request("POST", f"/api/v1/namespaces/{NS}/configmaps", body, conn=local.conn)
        assert status in (201, 409), (status, out[:200])

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(create, range(objects)))


@dataclass
class Probe:
    latencies: list[float]
    gaps: list[float]


def probe_until(server: Server, done: threading.Event, out: Probe) -> None:
    """GET /readyz every PROBE_INTERVAL on one keep-alive connection until `done`."""
    conn = server.connect()
    last = time.monotonic()
    while not done.is_set():
        start = time.monotonic()
        status, _ = server.request("GET", "/readyz", conn=conn)
        end = time.monotonic()
        assert status == 200, status
        out.latencies.append(end - start)
        out.gaps.append(end - last)
        last = end
        time.sleep(PROBE_INTERVAL)
    conn.close()


def with_probe(server: Server, heavy) -> tuple[float, Probe, str]:
    done = threading.Event()
    probe = Probe([], [])
    thread = threading.Thread(target=probe_until, args=(server, done, probe))
    thread.start()
    time.sleep(0.2)  # the probe's connection is warm
    start = time.monotonic()
    try:
        note = heavy()
    finally:
        elapsed = time.monotonic() - start
        done.set()
        thread.join()
    return elapsed, probe, note


def deep_json(depth: int) -> bytes:
    """{"n":{"n":...{"leaf":"x"}}}, `depth` levels of "n": written out, as json.dumps stops at ~1,000 levels."""
    return b'{"n":' * depth + b'{"leaf":"x"}' + b"}" * depth


def prepare_crd(server: Server) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "deeps.starve.example.com"},
           "spec": {"group": "starve.example.com", "scope": "Namespaced",
                    "names": {"plural": "deeps", "singular": "deep", "kind": "Deep", "listKind": "DeepList"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object",
                                                                 "x-kubernetes-preserve-unknown-fields": True}}}]}}
    server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    deadline = time.monotonic() + 30
    while server.request("GET", f"/apis/starve.example.com/v1/namespaces/{NS}/deeps")[0] != 200:
        assert time.monotonic() < deadline, "CRD not served"
        time.sleep(0.2)


ARRAY_SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"items": {
    "type": "array", "items": {"type": "object", "required": ["name", "port"], "properties": {
        "name": {"type": "string", "maxLength": 63, "pattern": "^[a-z0-9-]+$"},
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "protocol": {"type": "string", "enum": ["TCP", "UDP"]},
        "host": {"type": "string", "format": "ipv4"},
        "weight": {"type": "number", "minimum": 0}}}}}}}}


def prepare_array_crd(server: Server) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "arrays.starve.example.com"},
           "spec": {"group": "starve.example.com", "scope": "Namespaced",
                    "names": {"plural": "arrays", "singular": "array", "kind": "Array", "listKind": "ArrayList"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": ARRAY_SCHEMA}}]}}
    server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    deadline = time.monotonic() + 30
    while server.request("GET", f"/apis/starve.example.com/v1/namespaces/{NS}/arrays")[0] != 200:
        assert time.monotonic() < deadline, "CRD not served"
        time.sleep(0.2)


COMPACTION_PROBE = r"""
import asyncio, json, sys, tempfile, time
from kube_apiserver.storage.sqlite import SQLiteKV

async def main(revisions, keys, work):
    kv = await SQLiteKV.open(tempfile.mkdtemp(prefix="compact-", dir=work))
    revs = {}
    for k in range(keys):
        revs[k] = (await kv.create(f"/registry/configmaps/starve/k{k}", b"x" * 1000)).revision

    async def writer(k):
        for i in range(revisions // keys):
            revs[k] = (await kv.update(f"/registry/configmaps/starve/k{k}", b"y" * 1000, revs[k])).revision

    await asyncio.gather(*(writer(k) for k in range(keys)))
    done, gaps, writes = asyncio.Event(), [], []

    async def loop_probe():
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.010)
            gaps.append(time.monotonic() - last)
            last = time.monotonic()

    async def write_probe():
        while not done.is_set():
            start = time.monotonic()
            revs[0] = (await kv.update("/registry/configmaps/starve/k0", b"z" * 1000, revs[0])).revision
            writes.append(time.monotonic() - start)
            await asyncio.sleep(0.010)

    probes = [asyncio.ensure_future(loop_probe()), asyncio.ensure_future(write_probe())]
    await asyncio.sleep(0.2)
    start = time.monotonic()
    await kv.compact(await kv.current_revision())
    elapsed = time.monotonic() - start
    await asyncio.sleep(0.05)
    done.set()
    await asyncio.gather(*probes)
    await kv.close()
    print(json.dumps({"elapsed": elapsed, "worst_gap": max(gaps), "gaps": len(gaps), "worst_write": max(writes)}))

asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]))
"""


def compaction_scenario(src: str, work: str, revisions: int) -> tuple[float, Probe, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
    out = subprocess.run([sys.executable, "-c", COMPACTION_PROBE, str(revisions), str(max(revisions // 100, 1)),
                          work], env=env, check=True, capture_output=True, text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    probe = Probe([result["worst_gap"]], [result["worst_gap"]] * result["gaps"])
    return result["elapsed"], probe, f"{revisions:,} revs, write {result['worst_write'] * 1000:.0f} ms"


def heavy_request(server: Server, scenario: str, depth: int, entries: int, items: int = 50_000):
    listing = f"/api/v1/namespaces/{NS}/configmaps"
    if scenario.startswith("list-"):
        accept = {"list-json": "application/json", "list-protobuf": PROTOBUF, "list-table": TABLE,
                  "list-yaml": "application/yaml"}[scenario]

        # One object first in the same representation: the first protobuf client loads its encoder.
        assert server.request("GET", f"{listing}/cm-000000", accept=accept)[0] == 200

        def run() -> str:
            status, body = server.request("GET", listing, accept=accept)
            assert status == 200, (status, body[:300])
            return f"{len(body) / 1e6:.1f} MB"
        return run
    if scenario == "patch-smp":
        env = [{"name": f"E{i}", "value": "a"} for i in range(entries)]
        labels = {"app": "envs"}
        deploy = {"metadata": {"name": "envs"},
                  "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                      "containers": [{"name": "c", "image": "busybox", "env": env}]}}}}
        path = f"/apis/apps/v1/namespaces/{NS}/deployments"
        server.request("DELETE", f"{path}/envs")
        status, body = server.request("POST", path, deploy)
        assert status == 201, (status, body[:300])
        value = str(time.time())
        patch = {"spec": {"template": {"spec": {"containers": [
            {"name": "c", "env": [{"name": f"E{i}", "value": value} for i in range(entries)]}]}}}}

        def run() -> str:
            status, body = server.request("PATCH", f"{path}/envs", patch,
                                          "application/strategic-merge-patch+json")
            assert status in (200, 504), (status, body[:300])  # 504: not done within the request timeout
            return f"{entries:,} env entries" + (" (504)" if status == 504 else "")
        return run
    if scenario == "patch-finalizers":
        name = f"fin-{time.monotonic_ns()}"  # finalizers keep a deleted one: a new name each run
        path = f"/api/v1/namespaces/{NS}/configmaps"
        body = {"metadata": {"name": name, "finalizers": [f"a.example.com/f{i}" for i in range(entries)]}}
        status, out = server.request("POST", path, body)
        assert status == 201, (status, out[:300])
        patch = {"metadata": {"finalizers": [f"b.example.com/f{i}" for i in range(entries)]}}

        def run() -> str:
            status, out = server.request("PATCH", f"{path}/{name}", patch, "application/strategic-merge-patch+json")
            assert status in (200, 504), (status, out[:300])
            return f"{entries:,} + {entries:,} finalizers" + (" (504)" if status == 504 else "")
        return run
    if scenario == "cr-deep":
        prepare_crd(server)
        obj = (b'{"apiVersion":"starve.example.com/v1","kind":"Deep","metadata":{"name":"d"},"spec":'
               + deep_json(depth) + b"}")

        def run() -> str:
            server.request("DELETE", f"/apis/starve.example.com/v1/namespaces/{NS}/deeps/d")
            status, body = server.request("PATCH", f"/apis/starve.example.com/v1/namespaces/{NS}/deeps/d"
                                                   "?fieldManager=bench", obj, "application/apply-patch+yaml")
            assert status in (200, 201), (status, body[:300])
            return f"apply {depth} levels deep"
        return run
    if scenario == "cr-array":
        prepare_array_crd(server)
        # Small items: 50,000 of them stay under the 1.5 MiB an object may take in storage.
        spec_items = [{"name": f"p{i}", "port": 1 + i % 99} if i % 100 else
                      {"name": f"p{i}", "port": 1, "protocol": "UDP", "host": "10.0.0.1", "weight": 0.5}
                      for i in range(items)]
        obj = {"apiVersion": "starve.example.com/v1", "kind": "Array", "metadata": {"name": "a"},
               "spec": {"items": spec_items}}
        path = f"/apis/starve.example.com/v1/namespaces/{NS}/arrays"

        def run() -> str:
            server.request("DELETE", f"{path}/a")
            status, body = server.request("POST", path, obj)
            assert status == 201, (status, body[:300])
            return f"{items:,} items"
        return run
    raise ValueError(scenario)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=20_000)
    parser.add_argument("--depth", type=int, default=2_000, help="levels of the cr-deep custom resource")
    parser.add_argument("--env", type=int, default=5_000,
                        help="env entries of the patch-smp Deployment, finalizers of patch-finalizers")
    parser.add_argument("--items", type=int, default=50_000, help="array items of the cr-array custom resource")
    parser.add_argument("--revisions", type=int, default=50_000, help="revisions the compaction scenario compacts")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--baseline-src", metavar="SRC", help="another source tree, run after this one")
    parser.add_argument("--log", default=os.devnull, help="the servers' output")
    args = parser.parse_args()
    trees = [("current", SRC)] + ([("before", args.baseline_src)] if args.baseline_src else [])
    scenarios = args.scenarios.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as work, open(args.log, "ab") as log:
        for name, src in trees:
            server = start_server(src, work, log)
            try:
                t0 = time.monotonic()
                seed(server, args.objects)
                print(f"{name}: {args.objects} ConfigMaps stored in {time.monotonic() - t0:.1f} s", flush=True)
                for scenario in scenarios:
                    if scenario == "compaction":
                        elapsed, probe, note = compaction_scenario(src, work, args.revisions)
                    else:
                        elapsed, probe, note = with_probe(server, heavy_request(server, scenario, args.depth,
                                                                                args.env, args.items))
                    rows.append((name, scenario, note, elapsed, max(probe.latencies), max(probe.gaps),
                                 len(probe.latencies)))
                    print(f"  {scenario}: {elapsed:.2f} s, worst /readyz {max(probe.latencies) * 1000:.0f} ms",
                          flush=True)
            finally:
                server.stop()
    print(f"\n/readyz probed every {PROBE_INTERVAL * 1000:.0f} ms while the heavy request runs "
          f"({args.objects} ConfigMaps; the machine is shared, so compare rows of one run)")
    print(f"{'tree':<8} {'scenario':<14} {'size':<30} {'heavy s':>8} {'worst readyz ms':>16} {'worst gap ms':>13} "
          f"{'probes':>7}")
    for name, scenario, note, elapsed, worst, gap, count in rows:
        print(f"{name:<8} {scenario:<14} {note:<30} {elapsed:>8.2f} {worst * 1000:>16.0f} {gap * 1000:>13.0f} "
              f"{count:>7}")


if __name__ == "__main__":
    main()
