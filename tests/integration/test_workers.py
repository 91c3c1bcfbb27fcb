"""--workers 2 on SQLite, as a user runs it: the storage process serves the store to two worker processes that
share one port. The storage process hands each new connection to the worker holding fewer, so new connections
alternate between the workers, and a write through one connection and reads, watches and conflicting writes
through others cross workers."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import Server, wait_for
from kube_apiserver.cmd.workers import STORAGE_PRIORITY_BOOST

CONNECTIONS = 24  # new connections per check: they alternate between the workers


def start(data_dir: Path, *flags: str) -> tuple[subprocess.Popen[str], Server]:
    log = open(data_dir.parent / f"{data_dir.name}.log", "a")  # noqa: SIM115 - the process's lifetime
    proc = subprocess.Popen(
        [sys.executable, "-m", "kube_apiserver", "--data-dir", str(data_dir), "--secure-port=0", "--workers=2",
         *flags],
        stdout=subprocess.PIPE, stderr=log, text=True,
    )
    try:
        return proc, connect(proc, data_dir)
    except BaseException:
        stop(proc)  # not left serving when the test fails to reach it
        raise


def connect(proc: subprocess.Popen[str], data_dir: Path) -> Server:
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("kube-apiserver is serving on https://127.0.0.1:"), first
    assert first.rstrip().endswith("(2 workers)") or "--storage-backend=etcd3" in proc.args, first  # type: ignore[operator]
    srv = Server(str(data_dir))
    srv.kubeconfig = str(data_dir / "admin.kubeconfig")
    config = yaml.safe_load(Path(srv.kubeconfig).read_text())
    srv.token = config["users"][0]["user"]["token"]
    srv.ca_file = str(data_dir / "pki" / "ca.crt")
    srv.port = int(config["clusters"][0]["cluster"]["server"].rsplit(":", 1)[1])
    srv.wait_ready()
    return srv


def children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def stop(proc: subprocess.Popen[str]) -> int:
    """SIGTERM (the storage process stops its workers first), SIGKILL to all if that does not end it."""
    workers = children(proc.pid) if proc.poll() is None else []
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(90)
    except subprocess.TimeoutExpired:
        for pid in [*workers, proc.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        raise


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.Popen[str], Server]]:
    data_dir = tmp_path_factory.mktemp("workers") / "data"
    proc, srv = start(data_dir, "--controllers=namespace")
    yield proc, srv
    if proc.poll() is None:
        stop(proc)


def configmap(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


CMS = "/api/v1/namespaces/default/configmaps"


def test_the_storage_process_serves_two_workers(workers: tuple[subprocess.Popen[str], Server]) -> None:
    proc, _ = workers
    assert len(children(proc.pid)) == 2


def stat_fields(pid: int) -> list[str]:
    """Fields 3 on of the process's stat: those after its command name (which may hold spaces and ")")."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def nice_of(pid: int) -> int:
    """The nice value of the process's main thread (field 19 of its stat)."""
    return int(stat_fields(pid)[16])


def may_raise_priority() -> bool:
    return subprocess.run([sys.executable, "-c", "import os; os.nice(-1)"], check=False).returncode == 0


def test_the_storage_process_runs_at_a_higher_priority_than_its_workers_where_it_may(
        workers: tuple[subprocess.Popen[str], Server]) -> None:
    """Every worker's writes wait for the storage process's loop: it does not wait for a worker's time slice."""
    proc, _ = workers
    storage = nice_of(proc.pid)
    boost = STORAGE_PRIORITY_BOOST if may_raise_priority() else 0
    assert [nice_of(pid) - storage for pid in children(proc.pid)] == [boost, boost]


def test_a_startup_warning_is_given_once_not_by_each_worker(workers: tuple[subprocess.Popen[str], Server]) -> None:
    _, srv = workers
    log = (Path(srv.data_dir).parent / "data.log").read_text()
    assert log.count("No CIDR for service cluster IPs specified") == 1, log


def established(pid: int, port: int) -> int:
    """How many connections to `port` the process holds."""
    sockets = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                sockets.add(target[8:-1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local_port, state, inode = int(fields[1].rsplit(":", 1)[1], 16), fields[3], fields[9]
            count += local_port == port and state == "01" and inode in sockets
    return count


def test_connections_are_spread_evenly_over_the_workers(workers: tuple[subprocess.Popen[str], Server]) -> None:
    """Clients keep their connections, and a connection's load stays where it landed: the kernel's hashing
    (SO_REUSEPORT) lands 8 on one worker and 4 on the other as often as not."""
    proc, srv = workers
    pids = children(proc.pid)
    before = [established(pid, srv.port) for pid in pids]
    context = ssl.create_default_context(cafile=srv.ca_file)
    held = []
    try:
        for _ in range(12):
            conn = http.client.HTTPSConnection("127.0.0.1", srv.port, context=context, timeout=30)
            conn.request("GET", "/readyz", headers={"Authorization": f"Bearer {srv.token}"})
            assert conn.getresponse().read() == b"ok"
            held.append(conn)
        after = [established(pid, srv.port) for pid in pids]
        assert [now - then for now, then in zip(after, before, strict=True)] == [6, 6]
    finally:
        for conn in held:
            conn.close()


def test_a_write_through_one_connection_is_read_through_every_other(workers: tuple[subprocess.Popen[str], Server],
                                                                     ) -> None:
    _, srv = workers
    created = srv.request("POST", CMS, configmap("seen-everywhere", a="1"))
    assert created.status == 201, created.body
    for _ in range(CONNECTIONS):  # each request is a new connection
        got = srv.request("GET", f"{CMS}/seen-everywhere")
        assert got.status == 200, got.body
        assert got.json()["metadata"]["resourceVersion"] == created.json()["metadata"]["resourceVersion"]
        listed = srv.request("GET", CMS)
        assert "seen-everywhere" in [item["metadata"]["name"] for item in listed.json()["items"]]


def test_a_watch_sees_every_workers_writes_once_and_in_order(workers: tuple[subprocess.Popen[str], Server]) -> None:
    _, srv = workers
    start_rv = srv.request("GET", CMS).json()["metadata"]["resourceVersion"]
    conn, events = srv.stream(f"{CMS}?watch=true&labelSelector=batch%3Dordered&resourceVersion={start_rv}")
    try:
        names = [f"ordered-{i}" for i in range(CONNECTIONS)]
        for name in names:
            body = configmap(name)
            body["metadata"]["labels"] = {"batch": "ordered"}
            assert srv.request("POST", CMS, body).status == 201
        seen = []
        for event in events:
            assert event["type"] == "ADDED", event
            seen.append((int(event["object"]["metadata"]["resourceVersion"]), event["object"]["metadata"]["name"]))
            if len(seen) == len(names):
                break
        assert [name for _, name in seen] == names
        assert [rv for rv, _ in seen] == sorted(rv for rv, _ in seen)
    finally:
        conn.close()


def test_conflicting_updates_through_both_workers_lose_nothing(workers: tuple[subprocess.Popen[str], Server],
                                                               ) -> None:
    """Read-modify-write increments from 6 threads, each request a new connection: a 409 is read again, so
    every increment lands once."""
    _, srv = workers
    assert srv.request("POST", CMS, configmap("counter", n="0")).status == 201
    per_thread, threads = 10, 6

    def increment() -> None:
        done = 0
        while done < per_thread:
            current = srv.request("GET", f"{CMS}/counter").json()
            current["data"]["n"] = str(int(current["data"]["n"]) + 1)
            answer = srv.request("PUT", f"{CMS}/counter", current)
            assert answer.status in (200, 409), answer.body
            done += answer.status == 200

    running = [threading.Thread(target=increment) for _ in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join(120)
    assert srv.request("GET", f"{CMS}/counter").json()["data"]["n"] == str(per_thread * threads)


def test_a_scrape_of_one_worker_counts_every_workers_requests(workers: tuple[subprocess.Popen[str], Server]) -> None:
    """A scrape reaches one worker (and Prometheus keeps its connection): that worker's /metrics merges the
    others', so no worker's requests go uncounted."""
    _, srv = workers
    for _ in range(10):  # new connections: five to each worker
        assert srv.request("GET", "/api/v1/namespaces/default/podtemplates/none").status == 404
    sample = ('apiserver_request_total{component="apiserver",dry_run="",group="",resource="podtemplates",'
              'scope="resource",subresource="",verb="GET",version="v1",code="404"} ')

    def counted() -> str | None:
        text = srv.request("GET", "/metrics").body.decode()
        return text if sample + "10\n" in text else None

    text = wait_for(counted)
    assert text.count("# TYPE apiserver_request_total counter") == 1


def test_one_worker_runs_the_controllers(workers: tuple[subprocess.Popen[str], Server]) -> None:
    _, srv = workers
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "goes-away"}}
    assert srv.request("POST", "/api/v1/namespaces", namespace).status == 201
    assert srv.request("DELETE", "/api/v1/namespaces/goes-away").status == 200
    wait_for(lambda: srv.request("GET", "/api/v1/namespaces/goes-away").status == 404)
    lease = srv.request("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager")
    holder = lease.json()["spec"]["holderIdentity"]
    assert holder.endswith(("-0", "-1")), holder


def test_a_restart_after_a_crash_keeps_the_data_and_takes_the_controllers_lease_at_once(
    tmp_path: Path, kubectl_available: None
) -> None:
    """Every process of the first run is killed (no lease released); the new run's leader takes the lease its
    workers held without waiting out its duration (an hour here: waiting would not end within the test)."""
    data_dir = tmp_path / "data"
    flags = ("--controllers=namespace", "--leader-elect-lease-duration=1h", "--leader-elect-renew-deadline=50m")
    proc, srv = start(data_dir, *flags)
    lease_path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager"
    try:
        assert srv.request("POST", CMS, configmap("kept", a="1")).status == 201
        wait_for(lambda: srv.request("GET", lease_path).status == 200)
        first_holder = srv.request("GET", lease_path).json()["spec"]["holderIdentity"]
    finally:
        for pid in children(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait(30)
    proc, srv = start(data_dir, *flags)
    try:
        assert srv.request("GET", f"{CMS}/kept").json()["data"] == {"a": "1"}
        wait_for(lambda: srv.request("GET", lease_path).json()["spec"]["holderIdentity"] != first_holder)
        out = srv.kubectl("get", "configmap", "kept", "-o", "json")
        assert json.loads(out.stdout)["data"] == {"a": "1"}
    finally:
        assert stop(proc) == 0


def test_a_worker_that_dies_stops_the_server(tmp_path: Path) -> None:
    """The storage process stops the other worker and exits with an error (a supervisor above restarts it)."""
    proc, _ = start(tmp_path / "data", "--controllers=")
    try:
        workers = children(proc.pid)
        os.kill(workers[0], signal.SIGKILL)
        assert proc.wait(90) != 0
        assert not any(alive(pid) for pid in workers)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_workers_stop_when_the_storage_process_is_gone(tmp_path: Path) -> None:
    proc, _ = start(tmp_path / "data", "--controllers=")
    workers = children(proc.pid)
    proc.kill()
    proc.wait(30)
    wait_for(lambda: not any(alive(pid) for pid in workers))


def alive(pid: int) -> bool:
    """Running, and not a zombie (an orphan is reaped by init, maybe not at once)."""
    try:
        return stat_fields(pid)[0] != "Z"
    except OSError:
        return False


def test_a_port_in_use_fails_in_one_line(tmp_path: Path) -> None:
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "kube_apiserver", "--data-dir", str(tmp_path / "d"), "--workers=2",
             f"--secure-port={taken.getsockname()[1]}"],
            capture_output=True, text=True, timeout=60,
        )
    finally:
        taken.close()
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("E")]
    assert len(errors) == 1 and "address already in use" in errors[0], done.stderr
    assert "Traceback" not in done.stderr


def test_on_etcd_each_worker_is_a_replica_of_its_own(tmp_path: Path, etcd: Any) -> None:
    """Nothing to share but the port: the workers connect to etcd themselves; the first announces the server."""
    proc, srv = start(tmp_path / "data", "--controllers=", "--storage-backend=etcd3",
                      f"--etcd-servers={etcd.endpoints}")
    try:
        assert len(children(proc.pid)) == 2
        assert srv.request("POST", CMS, configmap("on-etcd")).status == 201
        for _ in range(CONNECTIONS):
            assert srv.request("GET", f"{CMS}/on-etcd").status == 200
    finally:
        assert stop(proc) == 0
    assert proc.stdout is not None and "serving on" not in proc.stdout.read()  # announced once
