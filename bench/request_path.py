#!/usr/bin/env python3
"""The cost of one request through the whole handler chain, against bare uvicorn.

Starts the real `kube-apiserver` (a child process, a fresh data dir) and a bare uvicorn+httptools server
(a child process, same TLS certificate and uvicorn settings as server/serving.py) that answers every
request with the fixed bytes of one configmap. Over HTTPS with keep-alive and 16 connections it measures:

- baseline: bare uvicorn, GET of the fixed JSON;
- get:  GET /api/v1/namespaces/bench/configmaps/cm-0 (admin token: authn, authz, metrics, the watch cache);
- list: GET /api/v1/namespaces/bench/configmaps (100 configmaps);
- post: POST /api/v1/namespaces/bench-post/configmaps (generateName: every request creates one).

and prints requests/s, the ratio to the baseline and the server's CPU µs per request (utime+stime of the
process from /proc). The load comes from wrk (`wrk -t1 -c16`, Debian: wrk) when it is installed, else from
the asyncio client here (16 keep-alive connections); which one is printed. --baseline-src SRC also runs
another source tree (e.g. a copy taken before a change), interleaved, so before/after come from one run.
--profile DIR writes cProfile stats of the server's event-loop thread during the GET load only.

    python bench/request_path.py                              # 5 s per series
    python bench/request_path.py --duration 5 --baseline-src /tmp/before/src --profile /tmp/prof
    python -c "import pstats; pstats.Stats('/tmp/prof/get-current.prof').sort_stats('tottime').print_stats(25)"
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HOST = "127.0.0.1"
NS, POST_NS = "bench", "bench-post"
GET_PATH = f"/api/v1/namespaces/{NS}/configmaps/cm-0"
LIST_PATH = f"/api/v1/namespaces/{NS}/configmaps"
POST_PATH = f"/api/v1/namespaces/{POST_NS}/configmaps"
POST_BODY = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "load-"},
                        "data": {"key": "value"}}, separators=(",", ":"))
LIST_SIZE = 100
SERIES = {"get": ("GET", GET_PATH, ""), "list": ("GET", LIST_PATH, ""), "post": ("POST", POST_PATH, POST_BODY)}
SRC = str(Path(__file__).resolve().parent.parent / "src")


# ---------------------------------------------------------------------------------------------------------
# Child modes: the bare baseline server, and the apiserver with a cProfile switch (SIGUSR1 on, SIGUSR2 dump)
# ---------------------------------------------------------------------------------------------------------


def serve_baseline(port: int, cert: str, key: str, body_file: str) -> None:
    import uvicorn
    import uvloop

    body = Path(body_file).read_bytes()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]

    async def app(scope: dict, receive: object, send: object) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": headers})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": body})  # type: ignore[operator]

    config = uvicorn.Config(app, host=HOST, port=port, http="httptools", ws="none", lifespan="off",
                            log_config=None, access_log=False, ssl_certfile=cert, ssl_keyfile=key,
                            server_header=False, date_header=True)
    config.ssl_ciphers = "ECDHE+AESGCM:ECDHE+CHACHA20"  # as server/serving.py
    config.ssl_version = ssl.PROTOCOL_TLS_SERVER
    uvloop.run(uvicorn.Server(config).serve())


def serve_profiled(out: str, argv: list[str]) -> None:
    import cProfile

    profile = cProfile.Profile()
    # Handlers run on the main thread, the event loop's: enabling there profiles the loop's thread.
    signal.signal(signal.SIGUSR1, lambda *_: profile.enable())
    signal.signal(signal.SIGUSR2, lambda *_: (profile.disable(), profile.dump_stats(out)))
    from kube_apiserver.cmd.app import main
    main(argv)


def serve_in_process(data_dir: str, port: int, seconds: float, conns: int, profile_out: str) -> None:
    """Starts the server in this process, then drives its handler chain directly (no HTTP, no TLS) with
    `conns` concurrent tasks per series; prints {series: [requests/s, CPU µs/request]} as JSON. With
    `profile_out`, the GET series runs under cProfile (its figures then include the profiler's cost)."""
    import cProfile

    import uvloop

    from kube_apiserver.cmd.options import ServerRunOptions
    from kube_apiserver.cmd.server import run
    from kube_apiserver.endpoints.http import Request
    from kube_apiserver.server.generic_api_server import GenericAPIServer

    heads: list = []
    prepare = GenericAPIServer.prepare_run
    GenericAPIServer.prepare_run = lambda self: (heads.append(self), prepare(self))[1]  # type: ignore[method-assign]

    async def main() -> dict[str, list[float]]:
        opts = ServerRunOptions.parse(["--data-dir", data_dir, "--secure-port", str(port)]).complete()
        stop, started = asyncio.Event(), asyncio.Event()
        task = asyncio.ensure_future(run(opts, stop, started))
        await started.wait()
        token = re.search(r"token:\s*(\S+)", Path(data_dir, "admin.kubeconfig").read_text()).group(1)  # type: ignore[union-attr]
        handler = heads[-1].handler

        async def call(method: str, path: str, body: str = "") -> int:
            headers = {"authorization": f"Bearer {token}", "user-agent": "bench", "host": "localhost"}
            if body:
                headers["content-type"] = "application/json"
            req = Request(method, path, b"", headers, body=body.encode() if body else None, remote_addr=HOST)
            return (await handler(req)).status

        while await call("GET", "/readyz") != 200:  # this loop serves: no blocking client here
            await asyncio.sleep(0.1)
        for ns in (NS, POST_NS):
            await call("POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": ns}}))
        for i in range(LIST_SIZE):
            body = {"metadata": {"name": f"cm-{i}", "labels": {"app": "bench"}}, "data": {"key": f"value-{i}" * 8}}
            assert await call("POST", LIST_PATH, json.dumps(body)) == 201
        out: dict[str, list[float]] = {}
        for series, (method, path, body) in SERIES.items():
            done = [0]

            async def worker(stop_at: float, method: str = method, path: str = path, body: str = body,
                             done: list[int] = done) -> None:
                while time.monotonic() < stop_at:
                    assert await call(method, path, body) < 300
                    done[0] += 1

            profile = cProfile.Profile() if profile_out and series == "get" else None
            cpu0, t0 = time.process_time(), time.monotonic()
            if profile:
                profile.enable()
            await asyncio.gather(*(worker(t0 + seconds) for _ in range(conns)))
            if profile:
                profile.disable()
                profile.dump_stats(profile_out)
            elapsed, cpu = time.monotonic() - t0, time.process_time() - cpu0
            out[series] = [done[0] / elapsed, cpu / done[0] * 1e6]
        stop.set()
        await task
        return out

    print(json.dumps(uvloop.run(main())))


# ---------------------------------------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tls_client() -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the serving certificate is signed by the CA the server made
    return ctx


def request(port: int, method: str, path: str, token: str = "", body: str = "") -> tuple[int, bytes]:
    import http.client

    conn = http.client.HTTPSConnection(HOST, port, timeout=10, context=tls_client())
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if body:
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=body or None, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    except OSError:
        return 0, b""
    finally:
        conn.close()


@dataclass
class Target:
    name: str
    port: int
    proc: subprocess.Popen
    token: str = ""
    profile: str = ""
    results: dict[str, list[Result]] = field(default_factory=dict)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def wait_until(proc: subprocess.Popen, cond: object, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        if time.monotonic() > deadline:
            raise TimeoutError("server did not get ready")
        time.sleep(0.1)


def start_apiserver(name: str, src: str, work: str, profile_dir: str, log) -> Target:
    data_dir = tempfile.mkdtemp(prefix=f"{name}-", dir=work)
    port = free_port()
    # one process: the profile and the request path measured are one event loop's
    argv = ["--data-dir", data_dir, "--secure-port", str(port), "--shutdown-delay-duration=0s", "--workers=1"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
    profile = os.path.join(profile_dir, f"get-{name}.prof") if profile_dir else ""
    if profile:
        cmd = [sys.executable, __file__, "--serve-profiled", profile, "--", *argv]
    else:
        cmd = [sys.executable, "-m", "kube_apiserver", *argv]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    wait_until(proc, lambda: request(port, "GET", "/readyz")[0] == 200)
    token = re.search(r"token:\s*(\S+)", Path(data_dir, "admin.kubeconfig").read_text()).group(1)  # type: ignore[union-attr]
    target = Target(name, port, proc, token, profile)
    seed(target, data_dir)
    return target


def seed(t: Target, data_dir: str) -> None:
    for ns in (NS, POST_NS):
        request(t.port, "POST", "/api/v1/namespaces", t.token, json.dumps({"metadata": {"name": ns}}))
    for i in range(LIST_SIZE):
        body = {"metadata": {"name": f"cm-{i}", "labels": {"app": "bench"}}, "data": {"key": f"value-{i}" * 8}}
        status, _ = request(t.port, "POST", LIST_PATH, t.token, json.dumps(body))
        assert status == 201, status
    status, _ = request(t.port, "GET", GET_PATH, t.token)
    assert status == 200, status


def start_baseline(work: str, cert_dir: str, body: bytes, log) -> Target:
    port = free_port()
    body_file = os.path.join(work, "baseline-body.json")
    Path(body_file).write_bytes(body)
    cert, key = os.path.join(cert_dir, "apiserver.crt"), os.path.join(cert_dir, "apiserver.key")
    proc = subprocess.Popen([sys.executable, __file__, "--serve-baseline", str(port), cert, key, body_file],
                            stdout=log, stderr=subprocess.STDOUT)
    wait_until(proc, lambda: request(port, "GET", "/")[0] == 200)
    return Target("uvicorn", port, proc)


# ---------------------------------------------------------------------------------------------------------
# Load: wrk when installed, else an asyncio client
# ---------------------------------------------------------------------------------------------------------


@dataclass
class Result:
    rps: float
    cpu_us: float
    errors: int


def wrk_script(work: str, method: str, token: str, body: str) -> str:
    path = os.path.join(work, f"{method.lower()}-{abs(hash(token)) % 10**6}.lua")
    lines = [f'wrk.method = "{method}"']
    if token:
        lines.append(f'wrk.headers["Authorization"] = "Bearer {token}"')
    if body:
        lines.append('wrk.headers["Content-Type"] = "application/json"')
        lines.append(f"wrk.body = {json.dumps(body)}")
    Path(path).write_text("\n".join(lines) + "\n")
    return path


def run_wrk(url: str, script: str, seconds: int, conns: int) -> tuple[float, int]:
    out = subprocess.run(["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "-s", script, url],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s*([\d.]+)", out).group(1))  # type: ignore[union-attr]
    errors = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", out))
    socket_errors = re.search(r"Socket errors: (.*)", out)
    if socket_errors:
        errors += sum(int(n) for n in re.findall(r"\d+", socket_errors.group(1)))
    return rps, errors


async def _one_connection(port: int, raw: bytes, stop_at: float, counts: list[int]) -> None:
    reader, writer = await asyncio.open_connection(HOST, port, ssl=tls_client())
    try:
        while time.monotonic() < stop_at:
            writer.write(raw)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))  # type: ignore[union-attr]
            await reader.readexactly(length)
            counts[0 if 200 <= status < 400 else 1] += 1
    finally:
        writer.close()


def run_python(port: int, method: str, path: str, token: str, body: str, seconds: int, conns: int
               ) -> tuple[float, int]:
    headers = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}"]
    if token:
        headers.append(f"Authorization: Bearer {token}")
    if body:
        headers += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    raw = ("\r\n".join(headers) + "\r\n\r\n" + body).encode()
    counts = [0, 0]

    async def drive() -> float:
        start = time.monotonic()
        stop_at = start + seconds
        await asyncio.gather(*(_one_connection(port, raw, stop_at, counts) for _ in range(conns)))
        return time.monotonic() - start

    elapsed = asyncio.run(drive())
    return (counts[0] + counts[1]) / elapsed, counts[1]


def measure(t: Target, series: str, args: argparse.Namespace, work: str) -> Result:
    method, path, body = {"baseline": ("GET", "/", ""), "get": ("GET", GET_PATH, ""),
                          "list": ("GET", LIST_PATH, ""), "post": ("POST", POST_PATH, POST_BODY)}[series]
    profiling = bool(t.profile) and series == "get"
    cpu0 = cpu_seconds(t.proc.pid)
    if profiling:
        t.proc.send_signal(signal.SIGUSR1)
    if args.client == "wrk":
        script = wrk_script(work, method, t.token, body)
        rps, errors = run_wrk(f"https://{HOST}:{t.port}{path}", script, args.duration, args.connections)
    else:
        rps, errors = run_python(t.port, method, path, t.token, body, args.duration, args.connections)
    if profiling:
        t.proc.send_signal(signal.SIGUSR2)
        time.sleep(1)  # the dump is written by the server
    used = cpu_seconds(t.proc.pid) - cpu0
    return Result(rps, used / max(rps * args.duration, 1) * 1e6, errors)


# ---------------------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------------------


def report(targets: list[Target], baseline: Target, client: str, args: argparse.Namespace) -> None:
    base = max(r.rps for r in baseline.results["baseline"])
    print(f"\nclient: {client} (-c{args.connections}, {args.duration} s per run, {args.rounds} round(s); "
          f"best of rounds), HTTPS keep-alive")
    print(f"baseline: bare uvicorn+httptools, fixed JSON: {base:,.0f} req/s, "
          f"{min(r.cpu_us for r in baseline.results['baseline']):.0f} CPU µs/req")
    print(f"{'tree':<10} {'series':<6} {'req/s':>9} {'x uvicorn':>10} {'CPU µs/req':>11} {'errors':>7}")
    for t in targets:
        for series in ("get", "list", "post"):
            results = t.results[series]
            best = max(results, key=lambda r: r.rps)
            print(f"{t.name:<10} {series:<6} {best.rps:>9,.0f} {best.rps / base:>9.2f}x {best.cpu_us:>11.0f} "
                  f"{sum(r.errors for r in results):>7}")
    if args.profile:
        for t in targets:
            print(f"profile of the GET load ({t.name}): {t.profile}")


def run_in_process(trees: list[tuple[str, str]], args: argparse.Namespace) -> None:
    """Each tree's chain driven in its own process, the trees alternating round by round."""
    figures: dict[str, dict[str, list[list[float]]]] = {name: {} for name, _ in trees}
    for _ in range(args.rounds):
        for name, src in trees:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
            with tempfile.TemporaryDirectory() as data_dir:
                profile = os.path.join(args.profile, f"get-in-process-{name}.prof") if args.profile else ""
                out = subprocess.run([sys.executable, __file__, "--serve-in-process", data_dir, str(free_port()),
                                      str(args.duration), str(args.connections), profile],
                                     capture_output=True, text=True, env=env, check=True).stdout
            for series, value in json.loads(out.strip().splitlines()[-1]).items():
                figures[name].setdefault(series, []).append(value)
    print(f"\nin-process handler chain (no HTTP, no TLS), {args.connections} concurrent tasks, {args.duration} s "
          f"per run, {args.rounds} round(s); median of rounds")
    print(f"{'tree':<10} {'series':<6} {'req/s':>9} {'CPU µs/req':>11}")
    for name, _ in trees:
        for series, values in figures[name].items():
            rps = statistics.median(v[0] for v in values)
            cpu = statistics.median(v[1] for v in values)
            ratio = ""
            if name != trees[0][0]:
                ratio = f"   current/before: x{statistics.median(v[0] for v in figures[trees[0][0]][series]) / rps:.2f}"
            print(f"{name:<10} {series:<6} {rps:>9,.0f} {cpu:>11.0f}{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=5, help="seconds per load run")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--client", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument("--baseline-src", metavar="SRC", help="another source tree to compare with")
    parser.add_argument("--profile", metavar="DIR", help="write cProfile stats of each server's GET load here")
    parser.add_argument("--serve-baseline", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--in-process", action="store_true",
                        help="drive the handler chain in-process (no HTTP, no TLS) instead of over HTTPS")
    parser.add_argument("--serve-profiled", help=argparse.SUPPRESS)
    parser.add_argument("--serve-in-process", nargs=5, help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.serve_baseline:
        port, cert, key, body = args.serve_baseline
        serve_baseline(int(port), cert, key, body)
        return
    if args.serve_profiled:
        serve_profiled(args.serve_profiled, [a for a in rest if a != "--"])
        return
    if args.serve_in_process:
        data_dir, port, seconds, conns, profile_out = args.serve_in_process
        serve_in_process(data_dir, int(port), float(seconds), int(conns), profile_out)
        return
    if args.client == "auto":
        args.client = "wrk" if shutil.which("wrk") else "python"
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
    trees = [("current", SRC)] + ([("before", os.path.abspath(args.baseline_src))] if args.baseline_src else [])
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
    if args.in_process:
        run_in_process(trees, args)
        return
    work = tempfile.mkdtemp(prefix="kube-apiserver-request-path-")
    targets: list[Target] = []
    with open(os.path.join(work, "servers.log"), "ab") as log:
        try:
            for name, src in trees:
                targets.append(start_apiserver(name, src, work, args.profile, log))
            _, body = request(targets[0].port, "GET", GET_PATH, targets[0].token)
            cert_dir = os.path.join(_data_dir(targets[0]), "pki")  # the self-signed serving certificate
            baseline = start_baseline(work, cert_dir, body, log)
            targets_all = [baseline, *targets]
            for _ in range(args.rounds):
                for series in ("baseline", "get", "list", "post"):
                    for t in (targets_all if series == "baseline" else targets):
                        t.results.setdefault(series, []).append(measure(t, series, args, work))
            report(targets, baseline, args.client, args)
        finally:
            for t in [*targets, *([baseline] if "baseline" in locals() else [])]:
                with contextlib.suppress(Exception):
                    t.stop()
    shutil.rmtree(work, ignore_errors=True)


def _data_dir(t: Target) -> str:
    args = t.proc.args
    return args[args.index("--data-dir") + 1]


if __name__ == "__main__":
    main()
