#!/usr/bin/env python3
"""Start-to-ready time of the real `kube-apiserver` command.

Each run starts `kube-apiserver --data-dir D --secure-port P` as a child process and records, from the
moment the process is spawned:

- listen: the first successful TCP connect to 127.0.0.1:P (the HTTPS server is up);
- ready:  the first `GET /readyz` answered 200 (every post-start hook has finished).

"fresh" runs use a new, empty data dir each time (certificates, keys, the admin credential, the database
and the RBAC bootstrap policy are all created); "existing" runs restart on one data dir a first run set up.
"import" is `import kube_apiserver.cmd.server` in a new interpreter. Every figure is the best of --runs (the
machine is shared: the best run is the least disturbed one), with the median beside it.

Each series runs with "cached" bytecode (a warm cache of .pyc files, kept out of the source tree through
PYTHONPYCACHEPREFIX, as an installed server has) and with "none": PYTHONDONTWRITEBYTECODE=1, as in a
sandbox that sets it, where the standard library and the installed packages still have their .pyc files
but this source tree has none, so every one of its modules a start imports is compiled again.

--baseline SRC compares with another copy of the source tree (SRC holds the kube_apiserver package, e.g.
an older checkout's src/): its runs alternate with this tree's, so the ratios come from one load.

    python bench/startup.py                          # 5 runs of each
    python bench/startup.py --bytecode cached --importtime 15   # and the 15 slowest modules to import
    python bench/startup.py --baseline /tmp/old/src  # old vs new, with ratios
    python bench/startup.py --bytecode cached --flags=--workers=1   # this tree as one process vs its default
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

HOST = "127.0.0.1"
POLL_S = 0.005
TIMEOUT_S = 60.0
IMPORT_TARGET = "kube_apiserver.cmd.server"
SERIES = ["import", "fresh: listen", "fresh: /readyz 200", "existing: listen", "existing: /readyz 200"]


@dataclass
class Variant:
    """One source tree started one way: `src` None is the installed command as it stands."""

    name: str
    src: str | None
    env: dict[str, str]
    flags: list[str] = field(default_factory=list)  # the server's own, after the data dir and port
    existing_dir: str = ""
    figures: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SERIES})


def bytecode_env(mode: str, work: str, src: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPYCACHEPREFIX", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if mode == "cached":
        env["PYTHONPYCACHEPREFIX"] = os.path.join(work, "pycache")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    return env


def stale_bytecode(src: str) -> bool:
    return any("__pycache__" in dirs for _, dirs, _ in os.walk(src))


def server_command() -> list[str]:
    exe = shutil.which("kube-apiserver")  # PYTHONPATH (a baseline's src) wins over the editable install
    return [exe] if exe else [sys.executable, "-m", "kube_apiserver"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.2):
        return True
    return False


def readyz(port: int, tls: ssl.SSLContext) -> int:
    conn = http.client.HTTPSConnection(HOST, port, timeout=2, context=tls)
    try:
        conn.request("GET", "/readyz")
        return conn.getresponse().status
    except OSError:
        return 0
    finally:
        conn.close()


def wait_for(proc: subprocess.Popen, t0: float, cond: Callable[[], bool]) -> float:
    while time.perf_counter() - t0 < TIMEOUT_S:
        if proc.poll() is not None:
            raise RuntimeError(f"kube-apiserver exited with {proc.returncode}")
        if cond():
            return time.perf_counter() - t0
        time.sleep(POLL_S)
    raise TimeoutError("kube-apiserver did not get there in time")


def start_once(data_dir: str, log_path: str, env: dict[str, str], flags: list[str]) -> tuple[float, float]:
    """One start: spawn, wait for the listen and for /readyz 200, then SIGTERM and wait for the exit."""
    tls = ssl.create_default_context()
    tls.check_hostname = False
    tls.verify_mode = ssl.CERT_NONE  # the serving certificate is signed by a CA the first start made
    port = free_port()
    cmd = [*server_command(), "--data-dir", data_dir, "--secure-port", str(port), "--shutdown-delay-duration=0s",
           *flags]
    with open(log_path, "ab") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            listen = wait_for(proc, t0, lambda: listening(port))
            ready = wait_for(proc, t0, lambda: readyz(port, tls) == 200)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return listen, ready


def import_seconds(env: dict[str, str]) -> float:
    code = f"import time; t = time.perf_counter(); import {IMPORT_TARGET}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    return float(out.stdout)


def import_self_times(top: int, env: dict[str, str]) -> list[tuple[int, int, str]]:
    """(self us, cumulative us, module) of the `top` modules with the most self time, from -X importtime."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {IMPORT_TARGET}"],
                         check=True, capture_output=True, text=True, env=env)
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = (part.strip() for part in line[len("import time:"):].split("|"))
        rows.append((int(self_us), int(cum_us), name))
    return sorted(rows, reverse=True)[:top]


def run_series(variants: list[Variant], runs: int, work: str, log_path: str) -> None:
    """Every measurement of every variant, one variant after the other within each round."""
    for v in variants:
        import_seconds(v.env)  # writes the .pyc files where they are kept
        v.existing_dir = tempfile.mkdtemp(dir=work)
        start_once(v.existing_dir, log_path, v.env, v.flags)  # sets the reused data dir up
    for _ in range(runs):
        for v in variants:
            v.figures["import"].append(import_seconds(v.env))
            for label, data_dir in (("fresh", tempfile.mkdtemp(dir=work)), ("existing", v.existing_dir)):
                listen, ready = start_once(data_dir, log_path, v.env, v.flags)
                v.figures[f"{label}: listen"].append(listen)
                v.figures[f"{label}: /readyz 200"].append(ready)


def report(mode: str, variants: list[Variant]) -> None:
    print(f"bytecode {mode}:")
    for label in SERIES:
        cells = [f"{min(v.figures[label]):6.3f} s (median {statistics.median(v.figures[label]):6.3f})"
                 for v in variants]
        ratio = ""
        if len(variants) == 2:
            ratio = f"   x{min(variants[0].figures[label]) / min(variants[1].figures[label]):.2f}"
        print(f"  {label:<22} " + "   ".join(cells) + ratio)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bytecode", choices=["cached", "none", "both"], default="both")
    parser.add_argument("--baseline", metavar="SRC", help="a source tree to compare with (holds kube_apiserver/)")
    parser.add_argument("--importtime", type=int, default=0, metavar="N",
                        help="also list the N modules with the most import self time (cached bytecode)")
    parser.add_argument("--flags", default="", metavar="FLAGS",
                        help="without --baseline: this tree started with FLAGS (space-separated) vs as it is")
    parser.add_argument("--keep-logs", action="store_true", help="keep the servers' output (path printed)")
    args = parser.parse_args()
    modes = ["cached", "none"] if args.bytecode == "both" else [args.bytecode]
    for src in [args.baseline, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")]:
        if "none" in modes and src and stale_bytecode(src):
            print(f"note: {src} has __pycache__ dirs: 'none' reads them", file=sys.stderr)
    work = tempfile.mkdtemp(prefix="kube-apiserver-startup-")
    log_path = os.path.join(work, "server.log")
    sources: list[tuple[str, str | None, list[str]]] = [("this tree", None, [])]
    if args.baseline:
        sources.insert(0, ("baseline", os.path.abspath(args.baseline), []))
    elif args.flags:
        sources.insert(0, (args.flags, None, args.flags.split()))
    results: dict[str, list[Variant]] = {}
    try:
        for mode in modes:
            results[mode] = [Variant(name, src, bytecode_env(mode, work, src), flags) for name, src, flags in sources]
            run_series(results[mode], args.runs, work, log_path)
        slowest = import_self_times(args.importtime, bytecode_env("cached", work, None)) if args.importtime else []
    except Exception:
        print(f"server output: {log_path}", file=sys.stderr)
        args.keep_logs = True
        raise
    finally:
        if not args.keep_logs:
            shutil.rmtree(work, ignore_errors=True)
    columns = " vs ".join(name for name, _, _ in sources)
    print(f"{' '.join(server_command())}: best (median) of {args.runs}; {columns}")
    for mode, variants in results.items():
        report(mode, variants)
    if slowest:
        print(f"\n{'self ms':>8} {'cum ms':>8}  module")
        for self_us, cum_us, name in slowest:
            print(f"{self_us / 1000:8.1f} {cum_us / 1000:8.1f}  {name}")
    if args.keep_logs:
        print(f"server output: {log_path}")


if __name__ == "__main__":
    main()
