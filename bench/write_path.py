#!/usr/bin/env python3
"""Where the CPU of one write goes: create ConfigMap, update (PUT), merge patch and create Pod, through the
real handler chain in-process (no HTTP, no TLS), with the bodies ../shared/bench/k8sbench.py sends.

Starts the server in a child process (a fresh SQLite data dir), drives each workload through the handler
chain one request at a time, and prints, per workload, the server's CPU µs per request (process CPU, the
SQLite writer thread included) split into the stages of the write path by timers wrapped around them:

  decode        the body into an object: JSON, typed decoding, strict field checks (decode_object; for a
                patch, the body's JSON and the patched object's field checks)
  patch         applying a patch to the stored object
  defaulting    the kind's defaults (RequestScope.default)
  managedFields the Update entry of the request's manager (RequestScope.track)
  admission     mutating and validating admission (Chain.admit, Chain.validate)
  strategy      PrepareForCreate/Update, validation and canonicalization (before_create, before_update)
  store encode  the object into its stored value (StorageCodec.encode)
  store decode  stored values into objects: the stored object an update reads, the object a write returns,
                and the watch cache's copy of the event (StorageCodec.decode)
  commit        the SQLite transaction, on the writer thread (SQLiteKV._commit)
  watch cache   the watch cache taking the event (Cacher: WatchCache.process)
  response      the returned object's encoding (write_object)
  other         the rest: filters (authentication, authorization, priority and fairness, audit, request
                info), routing, the store's and handlers' glue, the in-process controllers' informers,
                asyncio; "off loop" is its part on other threads than the event loop's (the SQLite
                writer's besides its transaction, the reader's)

Each figure is CPU time (time.thread_time) exclusive of the stages timed inside it. Over HTTPS a request
costs more: k8sbench's server_cpu_ms_per_op minus this total is the HTTP and TLS layers' share.
--baseline-src SRC runs another source tree too (a copy taken before a change), interleaved round by round.
--profile DIR writes a cProfile of each workload (untimed run) to DIR/<workload>-<tree>.prof.

    python3 bench/write_path.py                          # 300 writes per workload, 3 rounds
    python3 bench/write_path.py -n 500 --baseline-src /tmp/before/src --profile /tmp/prof
    python3 bench/write_path.py -- --controllers=         # without the built-in controllers' informers
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SRC = str(Path(__file__).resolve().parent.parent / "src")
NS = "bench"
WORKLOADS = ("create", "update", "patch", "pod")
STAGES = (
    "decode",
    "patch",
    "defaulting",
    "managedFields",
    "admission",
    "strategy",
    "store encode",
    "store decode",
    "commit",
    "watch cache",
    "response",
    "other",
)


# ---------------------------------------------------------------------------------------------------------
# Stage timers: exclusive CPU time of the wrapped callables, on the event loop's thread (and the writer's)
# ---------------------------------------------------------------------------------------------------------


class StageClock:
    """Wraps callables so that each call's thread CPU time goes to its stage, minus the time of the stages
    timed inside it. Requests are driven one at a time, so an async stage's suspensions are short."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self._stack: list[list[float]] = []  # per open stage on the loop's thread: [time of its children]
        self._loop_thread = threading.get_ident()

    def _enter(self) -> tuple[bool, float]:
        if threading.get_ident() != self._loop_thread:
            return False, time.thread_time()
        self._stack.append([0.0])
        return True, time.thread_time()

    def _leave(self, stage: str, nested: bool, start: float) -> None:
        spent = time.thread_time() - start
        if not nested:
            self.totals[stage] += spent
            return
        children = self._stack.pop()[0]
        self.totals[stage] += spent - children
        if self._stack:
            self._stack[-1][0] += spent

    def wrap(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        if asyncio.iscoroutinefunction(fn):

            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                nested, start = self._enter()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    self._leave(stage, nested, start)

            return timed_async

        def timed(*args: Any, **kwargs: Any) -> Any:
            nested, start = self._enter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._leave(stage, nested, start)

        return timed

    def patch(self, owner: Any, name: str, stage: str) -> None:
        setattr(owner, name, self.wrap(stage, getattr(owner, name)))

    def reset(self) -> None:
        self.totals = dict.fromkeys(STAGES, 0.0)


def install_clock() -> StageClock:
    """Wraps the stages where the handlers and the store call them (the names their modules imported)."""
    from kube_apiserver.admission.interfaces import Chain
    from kube_apiserver.endpoints.handlers import create, patch, scope, update
    from kube_apiserver.registry import store
    from kube_apiserver.storage import codec
    from kube_apiserver.storage.cacher import watch_cache
    from kube_apiserver.storage.sqlite import kv

    clock = StageClock()
    for module in (create, update):
        clock.patch(module, "decode_object", "decode")
        clock.patch(module, "write_object", "response")
    clock.patch(patch, "write_object", "response")
    field_validation = patch._field_validation  # returns the check of the patched object, timed as decode too
    patch._field_validation = clock.wrap(
        "decode", lambda *args, **kwargs: clock.wrap("decode", field_validation(*args, **kwargs))
    )
    clock.patch(patch.serializer, "decode_json", "decode")
    clock.patch(patch, "_apply", "patch")
    clock.patch(scope.RequestScope, "default", "defaulting")
    clock.patch(scope.RequestScope, "track", "managedFields")
    clock.patch(Chain, "admit", "admission")
    clock.patch(Chain, "validate", "admission")
    clock.patch(store, "before_create", "strategy")
    clock.patch(store, "before_update", "strategy")
    clock.patch(codec.StorageCodec, "encode", "store encode")
    clock.patch(codec.StorageCodec, "decode", "store decode")
    clock.patch(kv.SQLiteKV, "_commit", "commit")
    clock.patch(watch_cache.WatchCache, "process", "watch cache")
    return clock


# ---------------------------------------------------------------------------------------------------------
# The child: a server in this process, its handler chain driven directly
# ---------------------------------------------------------------------------------------------------------


def rand_str(rnd: random.Random) -> str:
    return base64.b64encode(rnd.randbytes(189)).decode()  # 252 characters, as k8sbench's


def configmap(name: str, i: int, rnd: random.Random) -> bytes:
    data = {f"k{j}": rand_str(rnd) for j in range(4)}
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"app": "k8sbench", "shard": str(i % 10)}},
            "data": data,
        }
    ).encode()


def pod(name: str) -> bytes:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "k8sbench"}},
            "spec": {
                "automountServiceAccountToken": False,
                "containers": [{"name": "main", "image": "busybox:1.36"}],
            },
        }
    ).encode()


def serve_and_measure(
    data_dir: str,
    port: int,
    count: int,
    profile_dir: str,
    tree: str,
    server_args: list[str],
) -> dict[str, Any]:
    import cProfile
    import gc

    import uvloop

    from kube_apiserver.cmd.options import ServerRunOptions
    from kube_apiserver.cmd.server import run
    from kube_apiserver.endpoints.http import Request
    from kube_apiserver.server.generic_api_server import GenericAPIServer

    clock = install_clock()
    heads: list = []
    prepare = GenericAPIServer.prepare_run
    GenericAPIServer.prepare_run = lambda self: (heads.append(self), prepare(self))[1]  # type: ignore[method-assign]
    rnd = random.Random(1)
    values = [rand_str(rnd) for _ in range(64)]

    async def main() -> dict[str, Any]:
        opts = ServerRunOptions.parse(
            ["--data-dir", data_dir, "--secure-port", str(port), *server_args]
        ).complete()
        stop, started = asyncio.Event(), asyncio.Event()
        task = asyncio.ensure_future(run(opts, stop, started))
        await started.wait()
        token = re.search(r"token:\s*(\S+)", Path(data_dir, "admin.kubeconfig").read_text()).group(1)  # type: ignore[union-attr]
        handler = heads[-1].handler

        async def call(
            method: str,
            path: str,
            body: bytes = b"",
            content_type: str = "application/json",
        ) -> tuple[int, bytes]:
            headers = {
                "authorization": f"Bearer {token}",
                "user-agent": "k8sbench/0.1.0",
                "host": "localhost",
                "accept": "application/json",
            }
            if body:
                headers["content-type"] = content_type
                headers["content-length"] = str(len(body))
            req = Request(method, path, b"", headers, body=body or None, remote_addr="127.0.0.1")
            resp = await handler(req)
            return resp.status, resp.body if isinstance(resp.body, bytes) else b""

        while (await call("GET", "/readyz"))[0] != 200:
            await asyncio.sleep(0.1)
        await call("POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": NS}}).encode())
        await call(
            "POST",
            f"/api/v1/namespaces/{NS}/serviceaccounts",
            json.dumps({"metadata": {"name": "default"}}).encode(),
        )
        cms = f"/api/v1/namespaces/{NS}/configmaps"
        pods = f"/api/v1/namespaces/{NS}/pods"
        await asyncio.sleep(1)  # the controllers' start-up writes are over

        def ops(workload: str, round_: int) -> list[Callable[[], Any]]:
            names = [f"cm-{round_}-{i:05d}" for i in range(count)]
            if workload == "create":
                bodies = [configmap(n, i, rnd) for i, n in enumerate(names)]
                return [lambda b=b: call("POST", cms, b) for b in bodies]
            if workload == "update":

                async def rmw(name: str, i: int) -> tuple[int, bytes]:
                    status, body = await call("GET", f"{cms}/{name}")
                    obj = json.loads(body)
                    obj["data"]["k0"] = values[i & 63]
                    return await call("PUT", f"{cms}/{name}", json.dumps(obj).encode())

                return [lambda n=n, i=i: rmw(n, i) for i, n in enumerate(names)]
            if workload == "patch":
                patches = [json.dumps({"data": {"k1": values[i & 63]}}).encode() for i in range(64)]
                return [
                    lambda n=n, i=i: call(
                        "PATCH", f"{cms}/{n}", patches[i & 63], "application/merge-patch+json"
                    )
                    for i, n in enumerate(names)
                ]
            return [
                lambda n=n: call("POST", pods, pod(n))
                for n in (f"pod-{round_}-{i:05d}" for i in range(count))
            ]

        out: dict[str, Any] = {}
        for round_, workload in enumerate(WORKLOADS * 2):
            # Round 0: the untimed warm-up (and the profile); round 1: measured. Updates and patches
            # work on the configmaps created by the create workload of the same round.
            measured = round_ >= len(WORKLOADS)
            batch = ops(workload, round_ // len(WORKLOADS))
            profile = cProfile.Profile(time.thread_time) if profile_dir and not measured else None
            gc.collect()
            gc.disable()
            clock.reset()
            cpu0, main0 = time.process_time(), time.thread_time()
            if profile:
                profile.enable()
            for op in batch:
                status, body = await op()
                assert status < 300, (workload, status, body[:300])
            if profile:
                profile.disable()
                profile.dump_stats(os.path.join(profile_dir, f"{workload}-{tree}.prof"))
            cpu, main_cpu = time.process_time() - cpu0, time.thread_time() - main0
            gc.enable()
            if measured:
                stages = {k: v / count * 1e6 for k, v in clock.totals.items()}
                stages["other"] = cpu / count * 1e6 - sum(stages.values())
                out[workload] = {
                    "total": cpu / count * 1e6,
                    "stages": stages,
                    "other threads": (cpu - main_cpu) / count * 1e6 - stages["commit"],
                }
        stop.set()
        await task
        return out

    return uvloop.run(main())


# ---------------------------------------------------------------------------------------------------------
# The parent: rounds of each tree, the table
# ---------------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_tree(name: str, src: str, count: int, profile_dir: str, server_args: list[str]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
    with tempfile.TemporaryDirectory() as data_dir:
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                data_dir,
                str(free_port()),
                str(count),
                profile_dir,
                name,
                "--",
                *server_args,
            ],
            capture_output=True,
            text=True,
            env=env,
        )
    if proc.returncode:
        sys.stderr.write(proc.stderr[-3000:])
        raise SystemExit(f"the {name} tree failed")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(figures: dict[str, list[dict[str, Any]]], trees: list[str], count: int, rounds: int) -> None:
    print(
        f"\nwrite path, in-process handler chain (no HTTP, no TLS), one request at a time, {count} writes per "
        f"workload, median of {rounds} round(s); CPU µs per request"
    )
    print("(update: a GET then a PUT, as k8sbench's read-modify-write; the GET is in 'other')")
    for workload in WORKLOADS:
        header = f"{workload:<14}" + "".join(f"{t:>10}" for t in trees)
        print("\n" + header)
        for stage in (*STAGES, "total"):
            row = [
                statistics.median(
                    r[workload]["total"] if stage == "total" else r[workload]["stages"][stage]
                    for r in figures[t]
                )
                for t in trees
            ]
            if stage != "total" and not any(abs(v) >= 0.5 for v in row):
                continue
            print(f"  {stage:<12}" + "".join(f"{v:>10.0f}" for v in row))
            if stage == "other":
                row = [statistics.median(r[workload]["other threads"] for r in figures[t]) for t in trees]
                print(f"  {'  off loop':<12}" + "".join(f"{v:>10.0f}" for v in row))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", "--count", type=int, default=300, help="writes per workload")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-src", metavar="SRC", help="another source tree to compare with")
    parser.add_argument(
        "--profile", metavar="DIR", default="", help="write cProfile stats of each workload here"
    )
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("server_args", nargs="*", help="kube-apiserver flags (after --), e.g. --controllers=")
    args = parser.parse_args()
    if args.child:
        data_dir, port, count, profile_dir, tree = args.child
        result = serve_and_measure(data_dir, int(port), int(count), profile_dir, tree, args.server_args)
        print(json.dumps(result))
        return
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
    trees = [("current", SRC)] + (
        [("before", os.path.abspath(args.baseline_src))] if args.baseline_src else []
    )
    figures: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
    for _ in range(args.rounds):
        for name, src in trees:
            figures[name].append(run_tree(name, src, args.count, args.profile, args.server_args))
    report(figures, [name for name, _ in trees], args.count, args.rounds)


if __name__ == "__main__":
    main()
