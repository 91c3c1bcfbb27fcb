"""Shared fixtures: a real kube-apiserver in-process (own thread and event loop) on an ephemeral port."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import uvloop
import yaml

from kube_apiserver.cmd.options import ServerRunOptions
from kube_apiserver.cmd.server import run


def wait_for(predicate: Any, timeout: float = 30.0, interval: float = 0.05) -> Any:
    """The first truthy value of predicate(), polled until timeout (then the test fails)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(interval)


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


# The API's tests see objects as kube-apiserver with the housekeeping controllers leaves them (namespaces emptied,
# garbage collected, default service accounts, quota usage): no workload controller, scheduler or kubelet moves
# their pods and sets meanwhile. A test that wants the cluster to move passes --controllers (e.g. "*", the
# server's default: every controller).
API_TESTS_CONTROLLERS = (
    "--controllers=garbagecollector,namespace,serviceaccount,resourcequota,pvc-protection,pv-protection,"
    "clusterrole-aggregation,root-ca-cert-publisher"
)



def with_controllers(*names: str) -> str:
    """--controllers for a test of some controllers: the housekeeping ones and `names`, nothing else moving."""
    return ",".join([API_TESTS_CONTROLLERS, *names])

@dataclass
class Server:
    data_dir: str
    args: list[str] = field(default_factory=list)
    port: int = 0
    kubeconfig: str = ""
    token: str = ""
    ca_file: str = ""
    _loop: asyncio.AbstractEventLoop | None = None
    _stop: asyncio.Event | None = None
    _thread: threading.Thread | None = None
    _error: BaseException | None = None

    def start(self) -> Server:
        started = threading.Event()

        async def main() -> None:
            args = (
                self.args
                if any(a.startswith("--controllers") for a in self.args)
                else [API_TESTS_CONTROLLERS, *self.args]
            )
            opts = ServerRunOptions.parse(["--data-dir", self.data_dir, "--secure-port", "6443", *args])
            completed = opts.complete()
            errs = completed.validate()
            assert not errs, errs
            completed.secure_serving.bind_port = 0
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            up = asyncio.Event()
            task = asyncio.ensure_future(run(completed, self._stop, up))
            await asyncio.wait({task, asyncio.ensure_future(up.wait())}, return_when=asyncio.FIRST_COMPLETED)
            self.ca_file = completed.ca_file
            started.set()
            await task

        def thread_main() -> None:
            try:
                uvloop.run(main())
            except BaseException as err:  # noqa: BLE001 - reported to the test
                self._error = err
                started.set()

        self._thread = threading.Thread(target=thread_main, daemon=True)
        self._thread.start()
        assert started.wait(30), "server did not start"
        if self._error:
            raise self._error
        self.kubeconfig = os.path.join(self.data_dir, "admin.kubeconfig")
        with open(self.kubeconfig) as f:
            config = yaml.safe_load(f)
        self.token = config["users"][0]["user"]["token"]
        self.port = int(config["clusters"][0]["cluster"]["server"].rsplit(":", 1)[1])
        self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 30) -> None:
        """Until /readyz passes: every post-start hook (system namespaces, priority classes...) has run."""
        deadline = time.time() + timeout
        while self.request("GET", "/readyz").status != 200:
            assert time.time() < deadline, "server did not become ready"
            time.sleep(0.05)

    def stop(self) -> None:
        if self._loop and self._stop:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread:
            self._thread.join(30)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        token: str | None = "admin",
    ) -> Response:
        ctx = ssl.create_default_context(cafile=self.ca_file)
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=ctx, timeout=30)
        hdrs = dict(headers or {})
        if token == "admin":
            hdrs["Authorization"] = f"Bearer {self.token}"
        elif token:
            hdrs["Authorization"] = f"Bearer {token}"
        if body is not None and not isinstance(body, bytes | str):
            body = json.dumps(body)
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)

    def stream(self, path: str, timeout: float = 60) -> tuple[http.client.HTTPSConnection, Iterator[dict]]:
        """A watch's events as they arrive, one JSON line at a time (close the connection when done)."""
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                           context=ssl.create_default_context(cafile=self.ca_file))
        conn.request("GET", path, headers={"Authorization": f"Bearer {self.token}"})
        response = conn.getresponse()
        assert response.status == 200, response.read()
        return conn, (json.loads(line) for line in response)

    def kubectl(
        self, *args: str, check: bool = True, timeout: float = 60, input_text: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        cache = os.path.join(self.data_dir, "kubecache")
        proc = subprocess.run(
            ["kubectl", "--kubeconfig", self.kubeconfig, "--cache-dir", cache, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input_text,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
        return proc


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(str(tmp_path_factory.mktemp("apiserver"))).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One etcd member on loopback (tests/etcd.py; skips when etcd is not installed)."""
    from etcd import EtcdCluster

    with EtcdCluster(str(tmp_path_factory.mktemp("etcd")), members_count=1) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def etcd_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Three etcd members on loopback: a cluster that keeps quorum when one member dies."""
    from etcd import EtcdCluster

    with EtcdCluster(str(tmp_path_factory.mktemp("etcd3")), members_count=3) as cluster:
        yield cluster


@pytest.fixture
def kubectl_available() -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")


# ---- CEL unit tests (tests/unit/cel): evaluate an expression, or get the error it raises ----


def _cel_evaluate(expression: str, **variables: Any) -> Any:
    from kube_apiserver import cel

    return cel.compile(expression, variables=variables).evaluate(variables)


def _cel_error(expression: str, **variables: Any) -> str:
    from kube_apiserver import cel

    with pytest.raises(cel.EvaluationError) as caught:
        _cel_evaluate(expression, **variables)
    return str(caught.value)


@pytest.fixture
def ev() -> Any:
    return _cel_evaluate


@pytest.fixture
def err() -> Any:
    return _cel_error


@contextlib.contextmanager
def repeating(step: Callable[[], None], interval: float = 0.1) -> Iterator[None]:
    """Runs `step` in a thread every `interval` seconds until the block ends (a test playing a kubelet,
    nodes, a scheduler)."""
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            step()
            stop.wait(interval)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(10)


@contextlib.contextmanager
def playing_kubelet(srv: Server, namespace: str = "default") -> Iterator[None]:
    """Marks the namespace's pods Running and Ready through pods/status, as a kubelet would, until the
    block ends (for tests of controllers without nodes)."""

    def mark_ready() -> None:
        pods = srv.request("GET", f"/api/v1/namespaces/{namespace}/pods")
        for pod in pods.json()["items"] if pods.status == 200 else ():
            if pod["metadata"].get("deletionTimestamp") or pod.get("status", {}).get("phase") == "Running":
                continue
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            status = {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}],
            }
            srv.request(
                "PATCH",
                f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}/status",
                json.dumps({"status": status}),
                {"Content-Type": "application/merge-patch+json"},
            )

    with repeating(mark_ready):
        yield
