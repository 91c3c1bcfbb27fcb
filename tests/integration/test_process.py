"""The command as a process: --help, validation, kill -9 durability, graceful shutdown on SIGTERM."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time

import pytest
import yaml

KLOG_LINE = re.compile(r"^[IWEF]\d{4} ")

# The command's two ways to serve: one process, and its default where there is more than one core, a worker
# per core (on one core the default is one process too).
WAYS = pytest.mark.parametrize("way", [("--workers=1",), ()], ids=["one process", "default"])


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "kube_apiserver", *args]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Process:
    def __init__(self, data_dir: str, *args: str):
        self.data_dir = data_dir
        self.port = free_port()
        self.proc = subprocess.Popen(command("--data-dir", data_dir, "--secure-port", str(self.port), *args),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.kubeconfig = os.path.join(data_dir, "admin.kubeconfig")
        deadline = time.time() + 30
        while True:
            assert self.proc.poll() is None, self.proc.stdout.read()
            line = self.proc.stdout.readline()
            if "admin kubeconfig:" in line:
                break
            assert time.time() < deadline, "server did not start"
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()  # keep the pipe drained
        config = yaml.safe_load(open(self.kubeconfig))
        self.token = config["users"][0]["user"]["token"]
        self.ca = os.path.join(data_dir, "pki", "ca.crt")

    def connection(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.port,
                                           context=ssl.create_default_context(cafile=self.ca), timeout=30)

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        conn = self.connection()
        conn.request(method, path, body=json.dumps(body) if body else None,
                     headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, data


def test_help_prints_flag_sections():
    out = subprocess.run(command("--help"), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    for section in ("Generic flags:", "Etcd flags:", "Secure serving flags:", "Authentication flags:",
                    "Authorization flags:", "Admission flags:", "Misc flags:"):
        assert section in out.stdout, section
    assert "--secure-port int" in out.stdout


def test_invalid_flags_exit_non_zero_with_message():
    out = subprocess.run(command("--secure-port=70000"), capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert "--secure-port 70000 must be between 1 and 65535, inclusive. It cannot be turned off with 0" in out.stderr
    both = subprocess.run(command("--secure-port=70000", "--service-cluster-ip-range=nonsense",
                                  "--storage-backend=mongo"), capture_output=True, text=True, timeout=60)
    # what completing logs comes first, as klog lines (as kube-apiserver's), then the one aggregate error
    errors = [line for line in both.stderr.splitlines() if not KLOG_LINE.match(line)]
    assert both.returncode == 1 and len(errors) == 1 and errors[0].startswith("Error: ["), both.stderr
    for fragment in ("service-cluster-ip-range[0] is not a valid cidr", "--storage-backend invalid",
                     "--secure-port 70000 must be between 1 and 65535"):
        assert fragment in errors[0], fragment


def test_completing_warns_in_klog_lines():
    """The defaulted service IP range's deprecation, as kube-apiserver's services.go logs it, even when the flags
    are then refused (the warning was a bare line, printed before logging was set up)."""
    out = subprocess.run(command("--secure-port=70000"), capture_output=True, text=True, timeout=60)
    warning = [line for line in out.stderr.splitlines() if "No CIDR for service cluster IPs specified" in line]
    assert len(warning) == 1 and re.match(r"^W\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ service_ip\.py:\d+\] No CIDR",
                                          warning[0]), out.stderr


def test_version():
    out = subprocess.run(command("--version"), capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "Kubernetes v1.34.0"


@WAYS
def test_acknowledged_creates_survive_kill_9(tmp_path, way):
    server = Process(str(tmp_path), *way)
    acknowledged: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def writer(worker: int) -> None:
        conn = server.connection()
        for i in range(10_000):
            if stop.is_set():
                return
            name = f"burst-{worker}-{i}"
            try:
                conn.request("POST", "/api/v1/namespaces/default/configmaps",
                             body=json.dumps({"metadata": {"name": name}, "data": {"i": str(i)}}),
                             headers={"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
            except (OSError, http.client.HTTPException):
                return
            if resp.status == 201:
                with lock:
                    acknowledged.append(name)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    time.sleep(2.0)
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(10)
    stop.set()
    for t in threads:
        t.join(10)
    assert len(acknowledged) > 50, "the burst did not get going"
    restarted = Process(str(tmp_path), *way)
    try:
        code, body = restarted.request("GET", "/api/v1/namespaces/default/configmaps")
        assert code == 200
        stored = {item["metadata"]["name"] for item in json.loads(body)["items"]}
        missing = set(acknowledged) - stored
        assert not missing, f"{len(missing)} acknowledged creates lost"
        assert restarted.token == server.token  # the credential is reused
    finally:
        restarted.proc.terminate()
        restarted.proc.wait(30)


@WAYS
def test_sigterm_fails_readyz_first_ends_watches_and_exits(tmp_path, way):
    server = Process(str(tmp_path), "--shutdown-delay-duration=3s", *way)
    conn = server.connection()
    conn.request("GET", "/api/v1/namespaces/default/configmaps?watch=1",
                 headers={"Authorization": f"Bearer {server.token}"})
    watch = conn.getresponse()
    assert watch.status == 200
    server.proc.send_signal(signal.SIGTERM)
    time.sleep(1)
    code, body = server.request("GET", "/readyz?verbose")
    assert code == 500 and b"[-]shutdown failed" in body
    assert server.request("GET", "/livez")[0] == 200  # alive while draining
    # The watch ends cleanly: its initial events (kube-root-ca.crt), then no error event.
    events = [json.loads(line) for line in watch.read().splitlines() if line]
    assert all(event["type"] == "ADDED" for event in events), events
    assert server.proc.wait(30) == 0


@pytest.mark.parametrize("flags", [("--workers=1",), ("--workers=2",)], ids=["one process", "workers"])
def test_sigterm_as_soon_as_it_serves_stops_without_an_error(tmp_path, flags):
    """Its post-start hooks (RBAC bootstrap, the controllers' start) are still running: they stop where they
    are, before the pre-shutdown hooks and the storage's close, instead of running on into a closed store
    (a panic'd request, a failed hook, a task's exception never retrieved, each an error line)."""
    proc = subprocess.Popen(command("--data-dir", str(tmp_path), "--secure-port=0", *flags),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "is serving on" in proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        _, log = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, log
    assert [line for line in log.splitlines() if line.startswith(("E", "F", "Traceback"))] == [], log


@pytest.fixture(autouse=True)
def _no_stray_processes():
    yield
