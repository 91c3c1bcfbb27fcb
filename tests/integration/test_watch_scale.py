"""50,000 objects of one resource: watches from rv=0 and watch-lists get every object (the initial state
never counts against the slow-watcher buffer), and a server restarted on them gets ready, its informers
list once, and it stops when asked."""

from __future__ import annotations

import asyncio
import http.client
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import uuid

import pytest
import yaml

from conftest import Server, wait_for
from kube_apiserver.controllers import informer as informer_module
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV

COUNT = 50_000
NAMESPACE = "scale"
CM = f"/api/v1/namespaces/{NAMESPACE}/configmaps"


async def _seed(data_dir: str) -> None:
    """Writes the objects through the storage layer (50,000 POSTs would take minutes), as the registry
    stores them: the namespace and its ConfigMaps with the metadata a create sets."""
    kv = await SQLiteKV.open(data_dir)
    store = ObjectStore(kv)
    stamp = "2026-01-01T00:00:00Z"

    def meta(name: str, namespace: str = "") -> dict:
        return {"name": name, **({"namespace": namespace} if namespace else {}), "uid": str(uuid.uuid4()),
                "creationTimestamp": stamp}

    try:
        await store.create(f"/registry/namespaces/{NAMESPACE}", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": meta(NAMESPACE),
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
        for first in range(0, COUNT, 5000):
            await asyncio.gather(*(store.create(f"/registry/configmaps/{NAMESPACE}/cm-{i:05d}", {
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(f"cm-{i:05d}", NAMESPACE),
                "data": {"index": str(i)}}) for i in range(first, min(first + 5000, COUNT))))
    finally:
        await kv.close()


class Informers:
    """Every Informer the in-process server makes, to read how many times each listed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.made: list[informer_module.Informer] = []
        original = informer_module.Informer.__init__
        made = self.made

        def recording(self, *args, **kwargs):
            original(self, *args, **kwargs)
            made.append(self)

        monkeypatch.setattr(informer_module.Informer, "__init__", recording)

    def of(self, resource: str) -> list[informer_module.Informer]:
        return [i for i in self.made if i.resource.resource == resource]


def test_watches_get_every_object_and_a_restart_lists_once(tmp_path, monkeypatch):
    data_dir = str(tmp_path)
    asyncio.run(_seed(data_dir))
    informers = Informers(monkeypatch)
    server = Server(data_dir).start()
    try:
        wait_for(lambda: server.request("GET", f"{CM}/kube-root-ca.crt").status == 200)  # published in each
        expected = [f"cm-{i:05d}" for i in range(COUNT)] + ["kube-root-ca.crt"]
        conn, events = server.stream(f"{CM}?watch=1&resourceVersion=0")
        initial = [next(events) for _ in range(COUNT + 1)]
        assert [e["object"]["metadata"]["name"] for e in initial] == expected
        assert {e["type"] for e in initial} == {"ADDED"}
        server.request("POST", CM, {"metadata": {"name": "live"}})
        live = next(events)  # the stream goes on after the initial state
        assert (live["type"], live["object"]["metadata"]["name"]) == ("ADDED", "live")
        conn.close()

        conn, events = server.stream(f"{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                                      "&allowWatchBookmarks=true")
        added = [next(events) for _ in range(COUNT + 2)]  # and "live"
        assert {e["type"] for e in added} == {"ADDED"} and len({e["object"]["metadata"]["name"] for e in added}) == COUNT + 2
        end = next(events)
        assert end["type"] == "BOOKMARK"
        assert end["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
        conn.close()
    finally:
        server.stop()
    assert not server._thread.is_alive()

    informers.made.clear()
    restarted = Server(data_dir).start()  # ready: start() waits for /readyz
    try:
        watching = informers.of("configmaps")
        assert watching  # the root CA publisher (and the garbage collector) watch every ConfigMap
        wait_for(lambda: all(i.synced.is_set() for i in watching), timeout=60)
        listed = [i.lists for i in watching]
        assert restarted.request("GET", "/readyz").status == 200
        assert restarted.request("GET", f"{CM}?limit=1").json()["metadata"]["remainingItemCount"] == COUNT + 1
        time.sleep(2)  # a relist loop, even one backing off, would have listed again by now
        assert [i.lists for i in watching] == listed == [1] * len(watching)
    finally:
        restarted.stop()
    assert not restarted._thread.is_alive()


def _status(port: int, context: ssl.SSLContext, token: str, path: str) -> int:
    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        return conn.getresponse().status
    except OSError:
        return 0
    finally:
        conn.close()


def test_sigterm_stops_a_server_started_on_many_objects(tmp_path):
    asyncio.run(_seed(str(tmp_path)))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "kube_apiserver", "--data-dir", str(tmp_path),
                             "--secure-port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output = []
        for line in proc.stdout:
            output.append(line)
            if "admin kubeconfig:" in line:
                break
        assert proc.poll() is None, "".join(output)
        threading.Thread(target=proc.stdout.read, daemon=True).start()  # keep the pipe drained
        with open(tmp_path / "admin.kubeconfig") as f:
            token = yaml.safe_load(f)["users"][0]["user"]["token"]
        context = ssl.create_default_context(cafile=str(tmp_path / "pki" / "ca.crt"))
        wait_for(lambda: _status(port, context, token, "/readyz") == 200, timeout=60)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
