"""The real server on --storage-backend=etcd3: kubectl create/get/list/watch/delete against objects in a
real etcd, and a restart (even with a fresh --data-dir) serves what is stored there."""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any

import pytest

from conftest import Server, wait_for


def etcd_args(cluster: Any, *extra: str) -> list[str]:
    return ["--storage-backend=etcd3", f"--etcd-servers={cluster.endpoints}", *extra]


@pytest.fixture(scope="module")
def etcd_server(etcd: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    args = etcd_args(etcd, "--etcd-count-metric-poll-period=100ms")
    srv = Server(str(tmp_path_factory.mktemp("etcd-apiserver")), args).start()
    yield srv
    srv.stop()


def test_kubectl_create_get_list_delete(etcd_server: Server, kubectl_available: None) -> None:
    etcd_server.kubectl("create", "namespace", "etcd-ns")
    etcd_server.kubectl("-n", "etcd-ns", "create", "configmap", "one", "--from-literal=k=v1")
    etcd_server.kubectl("-n", "etcd-ns", "create", "configmap", "two", "--from-literal=k=v2")
    got = etcd_server.kubectl("-n", "etcd-ns", "get", "configmap", "one", "-o", "jsonpath={.data.k}")
    assert got.stdout == "v1"
    names = etcd_server.kubectl("-n", "etcd-ns", "get", "configmaps", "-o", "name").stdout.split()
    assert {"configmap/one", "configmap/two"} <= set(names)
    etcd_server.kubectl("-n", "etcd-ns", "delete", "configmap", "two")
    assert etcd_server.kubectl("-n", "etcd-ns", "get", "configmap", "two", check=False).returncode != 0
    assert not os.path.exists(os.path.join(etcd_server.data_dir, "state.db"))  # nothing stored locally


def test_kubectl_watch_sees_changes(etcd_server: Server, kubectl_available: None) -> None:
    etcd_server.kubectl("create", "namespace", "etcd-watch")
    cmd = [
        "kubectl",
        "--kubeconfig",
        etcd_server.kubeconfig,
        "-n",
        "etcd-watch",
        "get",
        "cm",
        "-w",
        "--output-watch-events",
    ]
    watch = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        etcd_server.kubectl("-n", "etcd-watch", "create", "cm", "watched")
        etcd_server.kubectl("-n", "etcd-watch", "label", "cm", "watched", "x=y")
        etcd_server.kubectl("-n", "etcd-watch", "delete", "cm", "watched")
        time.sleep(1.5)
    finally:
        watch.terminate()
        out, _ = watch.communicate(timeout=10)
    events = [line.split()[:2] for line in out.splitlines() if "watched" in line]
    assert events == [["ADDED", "watched"], ["MODIFIED", "watched"], ["DELETED", "watched"]]


def test_a_restarted_server_serves_what_etcd_holds(etcd: Any, tmp_path: Any, kubectl_available: None) -> None:
    first = Server(str(tmp_path / "first"), etcd_args(etcd)).start()
    try:
        first.kubectl("create", "namespace", "survives")
        first.kubectl("-n", "survives", "create", "secret", "generic", "kept", "--from-literal=a=b")
    finally:
        first.stop()
    second = Server(str(tmp_path / "second"), etcd_args(etcd)).start()  # a fresh data dir: only certs
    try:
        out = second.kubectl("-n", "survives", "get", "secret", "kept", "-o", "jsonpath={.data.a}").stdout
        assert out == "Yg=="
        assert wait_for(lambda: second.kubectl("get", "namespace", "survives", check=False).returncode == 0)
    finally:
        second.stop()


def test_an_unreachable_etcd_is_one_line_error(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    import kube_apiserver.storage.etcd3.client as client
    from etcd import free_port
    from kube_apiserver.cmd.storage_backend import open_storage
    from kube_apiserver.server.options.etcd import EtcdOptions

    monkeypatch.setattr(client, "FAILOVER_WINDOW", 0.5)  # nothing listens: no need to keep trying
    opts = EtcdOptions(storage_backend="etcd3", etcd_servers=[f"http://127.0.0.1:{free_port()}"])
    with pytest.raises(SystemExit) as caught:
        asyncio.run(open_storage(opts, str(tmp_path), lambda kv: None))  # type: ignore[arg-type,return-value]
    assert "unable to connect to etcd at http://127.0.0.1:" in str(caught.value)


def test_object_counts_are_polled_into_metrics(etcd_server: Server) -> None:
    etcd_server.request("POST", "/api/v1/namespaces", {"metadata": {"name": "counted"}})
    for name in ("a", "b"):
        etcd_server.request("POST", "/api/v1/namespaces/counted/configmaps", {"metadata": {"name": name}})

    def configmaps_counted() -> int:
        for line in etcd_server.request("GET", "/metrics").body.decode().splitlines():
            if line.startswith('apiserver_storage_objects{resource="configmaps"} '):
                return int(line.split()[-1])
        return 0

    assert wait_for(lambda: configmaps_counted() >= 2)
    metrics = etcd_server.request("GET", "/metrics").body.decode()
    assert 'apiserver_resource_objects{group="apps",resource="deployments"} ' in metrics
    assert "# TYPE apiserver_storage_objects gauge" in metrics


def test_servers_overrides_store_a_resource_in_its_own_etcd(etcd: Any, tmp_path: Any) -> None:
    import asyncio

    from etcd import EtcdCluster
    from kube_apiserver.storage.etcd3 import EtcdKV

    async def stored(urls: list[str], key: str) -> bool:
        kv = await EtcdKV.open(urls)
        try:
            return await kv.get(key) is not None
        finally:
            await kv.close()

    with EtcdCluster(str(tmp_path / "events-etcd")) as events_etcd:
        override = f"--etcd-servers-overrides=/events#{events_etcd.endpoints.replace(',', ';')}"
        srv = Server(str(tmp_path / "apiserver"), etcd_args(etcd, override)).start()
        try:
            event = {
                "metadata": {"name": "moved"},
                "involvedObject": {"kind": "Pod", "name": "p"},
                "reason": "Test",
                "message": "m",
            }
            assert srv.request("POST", "/api/v1/namespaces/default/events", event).status == 201
            cm = {"metadata": {"name": "stays"}}
            assert srv.request("POST", "/api/v1/namespaces/default/configmaps", cm).status == 201
            listed = srv.request("GET", "/api/v1/namespaces/default/events").json()
            assert [e["metadata"]["name"] for e in listed["items"]] == ["moved"]
        finally:
            srv.stop()
        assert asyncio.run(stored(events_etcd.client_urls, "/registry/events/default/moved"))
        assert not asyncio.run(stored(etcd.client_urls, "/registry/events/default/moved"))
        assert asyncio.run(stored(etcd.client_urls, "/registry/configmaps/default/stays"))


def test_etcd_over_tls_with_the_client_certificate_flags(tmp_path: Any) -> None:
    from etcd import EtcdCluster, make_tls

    tls = make_tls(str(tmp_path / "pki"))
    with EtcdCluster(str(tmp_path / "etcd"), tls=tls) as cluster:
        assert cluster.endpoints.startswith("https://")
        flags = [
            f"--etcd-cafile={tls.ca_file}",
            f"--etcd-certfile={tls.client_cert}",
            f"--etcd-keyfile={tls.client_key}",
        ]
        srv = Server(str(tmp_path / "apiserver"), etcd_args(cluster, *flags)).start()
        try:
            created = srv.request(
                "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "tls"}}
            )
            assert created.status == 201
            assert srv.request("GET", "/api/v1/namespaces/default/configmaps/tls").status == 200
        finally:
            srv.stop()


def test_healthz_fails_the_etcd_check_soon_when_etcd_is_down(tmp_path: Any) -> None:
    from etcd import EtcdCluster

    with EtcdCluster(str(tmp_path / "etcd")) as cluster:
        srv = Server(str(tmp_path / "apiserver"), etcd_args(cluster)).start()
        try:
            assert srv.request("GET", "/healthz").status == 200
            cluster.kill(0)
            # answered within the check's own timeout (2 s), not after the client's 20 s failover window
            down = healthz_within(srv, timeout=10)
            assert down.status == 500 and b"[-]etcd failed" in down.body
            cluster.start_member(0)
            assert wait_for(lambda: srv.request("GET", "/healthz").status == 200)
        finally:
            srv.stop()


def test_a_server_that_lost_etcd_stops_on_sigterm_with_the_outage_in_one_line(tmp_path: Any) -> None:
    """etcd killed as the server starts, then SIGTERM. The log said "etcd: trying endpoint" 6,252 times (every
    watch cache's retry, every 0.2 s), each watch cache's cut stream failed with a traceback, and so did the
    bootstrap controller's first sync, the controllers' renewal and stop, and the requests in flight ("apiserver
    panic'd"); the lease release waited the client's 20 s of retries. Now the outage is one warning line, and
    what fails for it is one error line each, as kube-apiserver logs them."""
    import signal
    import sys

    from etcd import EtcdCluster

    with EtcdCluster(str(tmp_path / "etcd")) as cluster:
        proc = subprocess.Popen([sys.executable, "-m", "kube_apiserver", "--data-dir", str(tmp_path / "apiserver"),
                                 "--secure-port=0", *etcd_args(cluster)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert "is serving on" in proc.stdout.readline()
            started = []
            for line in proc.stderr:  # the controllers lead: their lease is released as the server stops
                started.append(line)
                if "successfully acquired lease kube-system/kube-controller-manager" in line:
                    break
            cluster.kill(0)
            time.sleep(3)  # the watch caches' and controllers' calls fail meanwhile, and retry
            proc.send_signal(signal.SIGTERM)
            _, rest = proc.communicate(timeout=120)
            log = "".join(started) + rest
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, log
    assert "Traceback" not in log, log
    outage = [line for line in log.splitlines() if "etcd: endpoint" in line]
    assert len(outage) == 1 and outage[0].startswith("W") and "is unavailable; retrying" in outage[0], log
    errors = {line.split("] ", 1)[1].split(":")[0] for line in log.splitlines() if line.startswith(("E", "F"))}
    assert errors <= {
        "Failed to release lease kube-system/kube-controller-manager",  # as client-go's "Failed to release lock"
        "service allocation repair failed",
        "unable to sync kubernetes service",
        "apiserver received an error that is not an metav1.Status",  # a request in flight: a 500 with the error
    }, log


def healthz_within(srv: Server, timeout: float) -> Any:
    import http.client
    import ssl

    conn = http.client.HTTPSConnection(
        "127.0.0.1", srv.port, context=ssl.create_default_context(cafile=srv.ca_file), timeout=timeout
    )
    try:
        conn.request("GET", "/healthz?verbose", headers={"Authorization": f"Bearer {srv.token}"})
        resp = conn.getresponse()
        resp.body = resp.read()  # type: ignore[attr-defined]
        return resp
    finally:
        conn.close()


def test_storage_media_type_reaches_the_stored_values(etcd: Any, tmp_path: Any) -> None:
    import asyncio

    from kube_apiserver.storage.etcd3 import EtcdKV

    async def raw(key: str) -> bytes:
        kv = await EtcdKV.open(etcd.client_urls)
        try:
            found = await kv.get(key)
            return found.value if found else b""
        finally:
            await kv.close()

    protobuf = "--storage-media-type=application/vnd.kubernetes.protobuf"
    srv = Server(str(tmp_path), etcd_args(etcd, protobuf)).start()
    try:
        created = srv.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "pb"}})
        assert created.status == 201
    finally:
        srv.stop()
    assert asyncio.run(raw("/registry/configmaps/default/pb")).startswith(b"k8s\x00")  # the protobuf envelope
