"""The server as its users deploy it, measured with ../shared/bench/k8sbench.py: one process on SQLite,
or 1..N replicas on one local etcd sharing a data directory and one port (--permit-port-sharing, as the
README's "Three replicas behind one address"). The server CPU figures cover every replica and etcd.

    python3 bench/replicas.py --k8sbench /tmp/B [--backend etcd3 --replicas 2] [-- <k8sbench flags>]

`--k8sbench` is a copy of ../shared/bench with its venv (`bash setup.sh`). The default k8sbench flags are
`--only create,get,watch`; the JSON goes to --out (default /tmp/replicas-<backend>-<n>.json)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests")  # tests/etcd.py starts etcd
READY_TIMEOUT = 120.0


def free_port() -> int:
    sys.path.insert(0, TESTS)
    from etcd import free_port as pick

    return pick()


def start_etcd(root: str) -> tuple[object, str, int]:
    sys.path.insert(0, TESTS)
    from etcd import EtcdCluster

    cluster = EtcdCluster(os.path.join(root, "etcd"), members_count=1).start()
    return cluster, cluster.endpoints, cluster.members[0].process.pid


def start_replicas(root: str, backend: str, count: int, etcd_url: str, port: int) -> list[subprocess.Popen]:
    data_dir = os.path.join(root, "data")
    # each replica one process (--workers=1): what is compared is the replicas' count
    argv = ["kube-apiserver", "--data-dir", data_dir, f"--secure-port={port}", "--workers=1"]
    if backend == "etcd3":
        argv += ["--storage-backend=etcd3", f"--etcd-servers={etcd_url}", "--permit-port-sharing"]
    servers = []
    for i in range(count):
        log = open(os.path.join(root, f"replica-{i}.log"), "w")  # noqa: SIM115 - lives as long as the process
        servers.append(subprocess.Popen([*argv, f"--advertise-address=192.0.2.{i + 1}"], stdout=log, stderr=log))
    return servers


def wait_ready(kubeconfig: str, count: int) -> None:
    """Every replica has written the kubeconfig and answers /readyz (asked count times over new connections)."""
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if os.path.exists(kubeconfig):
            ok = all(
                subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "--raw", "/readyz"],
                               capture_output=True).returncode == 0
                for _ in range(4 * count)
            )
            if ok:
                return
        time.sleep(0.5)
    raise SystemExit("the replicas did not get ready")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k8sbench", required=True, help="a copy of ../shared/bench with its .venv")
    parser.add_argument("--backend", choices=["sqlite", "etcd3"], default="sqlite")
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--out", default="")
    parser.add_argument("bench_args", nargs="*", help="k8sbench flags (after --)")
    args = parser.parse_args()
    if args.backend == "sqlite" and args.replicas != 1:
        raise SystemExit("SQLite admits one server per data directory: use --backend etcd3 for replicas")
    out = args.out or f"/tmp/replicas-{args.backend}-{args.replicas}.json"
    with tempfile.TemporaryDirectory(prefix="bench-replicas-") as root:
        cluster, etcd_url, etcd_pid = start_etcd(root) if args.backend == "etcd3" else (None, "", 0)
        servers = start_replicas(root, args.backend, args.replicas, etcd_url, free_port())
        try:
            kubeconfig = os.path.join(root, "data", "admin.kubeconfig")
            wait_ready(kubeconfig, args.replicas)
            pids = [f"--server-pid=replica{i}={s.pid}" for i, s in enumerate(servers)]
            if etcd_pid:
                pids.append(f"--server-pid=etcd={etcd_pid}")
            label = f"{args.backend} x{args.replicas}"
            bench = os.path.join(args.k8sbench, "k8sbench.py")
            python = os.path.join(args.k8sbench, ".venv", "bin", "python")
            flags = args.bench_args or ["--only", "create,get,watch"]
            subprocess.run([python, bench, "--kubeconfig", kubeconfig, *pids, "--label", label, "--out", out,
                            *flags], check=True)
            print(f"figures: {out}")
        finally:
            for server in servers:
                server.send_signal(signal.SIGTERM)
            for server in servers:
                try:
                    server.wait(30)
                except subprocess.TimeoutExpired:
                    server.kill()
            if cluster is not None:
                cluster.stop()


if __name__ == "__main__":
    main()
