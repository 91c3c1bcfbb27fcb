"""kube_apiserver.testing.APIServer: a real server for tests, in a thread or a subprocess, on an ephemeral port."""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import threading
from collections.abc import Iterator

import kubernetes.client
import pytest

from kube_apiserver.testing import PKI, APIServer, Response, Template

CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe"}, "data": {"k": "v"}}


@pytest.fixture(scope="module")
def template() -> Iterator[Template]:
    """One bootstrapped data dir the quick servers of this module start from."""
    made = Template.create()
    yield made
    made.remove()
    assert not os.path.exists(made.directory)


def refuses_connections(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_thread_mode_serves_and_stops_cleanly() -> None:
    server = APIServer()
    with server:
        assert server.port > 0 and server.url == f"https://127.0.0.1:{server.port}"
        assert server.kubeconfig == os.path.join(server.data_dir, "admin.kubeconfig")
        cluster = server.kubeconfig_dict["clusters"][0]["cluster"]
        assert cluster["server"] == server.url
        assert server.kubeconfig_dict["users"][0]["user"]["token"] == server.token
        assert server.request("GET", "/readyz").status == 200
        created = server.request("POST", "/api/v1/namespaces/default/configmaps", CONFIGMAP)
        assert isinstance(created, Response) and created.status == 201, created.body
        assert created.json()["data"] == {"k": "v"}
        # anonymous: system:anonymous under RBAC (the library's default), refused but for public paths
        assert server.request("GET", "/api/v1/namespaces", token=None).status == 403
        assert server.request("GET", "/version", token=None).status == 200
        assert server.request("GET", "/api/v1/namespaces", token="not-a-token").status == 401
        thread, data_dir = server._runner.thread, server.data_dir  # type: ignore[union-attr]
    assert not thread.is_alive()  # stop() joined the server's thread
    assert not os.path.exists(data_dir)  # the temporary data dir is removed
    assert refuses_connections(server.port)


def test_a_given_data_dir_is_kept(tmp_path, template: Template) -> None:
    data_dir = str(tmp_path / "data")
    with APIServer(data_dir=data_dir, template=template) as server:
        assert server.request("POST", "/api/v1/namespaces/default/configmaps", CONFIGMAP).status == 201
    assert os.path.exists(os.path.join(data_dir, "state.db"))
    with APIServer(data_dir=data_dir) as again:  # a restart on the same data
        assert again.request("GET", "/api/v1/namespaces/default/configmaps/probe").status == 200


def test_a_temporary_server_keeps_its_store_in_memory_from_the_template(template: Template) -> None:
    """Its data dir is deleted at stop: no database is written there, the template's is only read."""
    with APIServer(template=template) as server:
        assert server.request("POST", "/api/v1/namespaces/default/configmaps", CONFIGMAP).status == 201
        assert server.request("GET", "/api/v1/namespaces/default/configmaps/probe").status == 200
        # the template's bootstrap objects are there, and nothing writes to the copied database
        assert server.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin").status == 200
        stored = os.path.join(server.data_dir, "state.db")
        assert not os.path.exists(stored + "-wal") or os.path.getsize(stored + "-wal") == 0
        assert os.path.getmtime(stored) == os.path.getmtime(os.path.join(template.directory, "state.db"))


def test_a_template_is_made_on_sqlite_whatever_its_args_say() -> None:
    made = Template.create(["--storage-backend", "memory"])
    try:
        assert os.path.exists(os.path.join(made.directory, "state.db"))
    finally:
        made.remove()


def test_a_threads_requests_share_one_kept_alive_connection(template: Template) -> None:
    with APIServer(template=template) as server:
        made: list[object] = []
        connect = server.connection
        server.connection = lambda timeout=30.0: made.append(timeout) or connect(timeout)  # type: ignore[method-assign]
        for _ in range(3):
            assert server.request("GET", "/api/v1/namespaces/default").status == 200
        assert len(made) == 1
        other: list[int] = []
        worker = threading.Thread(target=lambda: other.append(server.request("GET", "/readyz").status))
        worker.start()
        worker.join()
        assert other == [200] and len(made) == 2  # a thread of its own, a connection of its own
        # one the server closed (here: shut down under it) is not reused: the request goes on a new one
        kept = server._connections._local.conn
        kept.sock.shutdown(socket.SHUT_RDWR)
        assert server.request("GET", "/api/v1/namespaces/default").status == 200
        assert len(made) == 3


def test_in_process_snapshots_restores_and_resets_go_to_the_servers_loop_not_over_https(template: Template) -> None:
    """The caller's thread waits once for the answer instead of taking turns with the server's at each step
    of reading an HTTPS response, while the server hands the restore's events to its watchers."""
    with APIServer(template=template) as server:
        assert server.request("POST", "/api/v1/namespaces/default/configmaps", CONFIGMAP).status == 201
        name = server.snapshot()

        def no_https(*args: object, **kwargs: object) -> Response:
            raise AssertionError("sent over HTTPS")

        server.request = no_https  # type: ignore[method-assign]
        assert server.reset()["deleted"] >= 1
        assert server.restore(name)["created"] >= 1
        assert server.snapshot("again") == "again"
        del server.request  # the class's again
        assert server.request("GET", "/api/v1/namespaces/default/configmaps/probe").status == 200


def test_two_servers_in_one_process_are_isolated(template: Template) -> None:
    with APIServer(template=template) as first, APIServer(template=template) as second:
        assert first.port != second.port and first.data_dir != second.data_dir
        assert first.token != second.token  # each copy of the template makes its own admin token
        assert first.request("POST", "/api/v1/namespaces/default/configmaps", CONFIGMAP).status == 201
        assert second.request("GET", "/api/v1/namespaces/default/configmaps/probe").status == 404
        assert second.request("GET", "/api/v1/namespaces", token=first.token).status == 401
        first.stop()
        assert second.request("GET", "/api/v1/namespaces/default").status == 200  # still serving


def test_kubernetes_client_verifies_the_ca_and_authenticates(template: Template) -> None:
    with APIServer(template=template) as server:
        api_client = server.kubernetes_client()
        assert api_client.configuration.verify_ssl and api_client.configuration.ssl_ca_cert == server.ca_file
        core = kubernetes.client.CoreV1Api(api_client)
        core.create_namespace({"metadata": {"name": "from-client"}})
        names = {ns.metadata.name for ns in core.list_namespace().items}
        assert {"default", "kube-system", "from-client"} <= names
        api_client.close()


def test_async_context_manager_leaves_the_callers_loop_running(template: Template) -> None:
    async def main() -> tuple[int, int]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        ticker = asyncio.ensure_future(tick())
        async with APIServer(template=template) as server:
            status = await asyncio.to_thread(lambda: server.request("GET", "/api/v1/namespaces").status)
        ticker.cancel()
        return status, ticks

    status, ticks = asyncio.run(main())
    assert status == 200
    assert ticks > 1  # the loop ran while the server started and stopped


def test_args_are_passed_through(template: Template) -> None:
    with APIServer(
        args=["--controllers=namespace", "--enable-priority-and-fairness=false"], template=template
    ) as s:
        assert s.request("GET", "/api/v1/namespaces").headers.get("x-kubernetes-pf-flowschema-uid") is None


def test_invalid_args_fail_the_start_and_leave_nothing_behind() -> None:
    server = APIServer(args=["--authorization-mode=Nonsense"])
    with pytest.raises(ValueError, match='authorization-mode "Nonsense" is not a valid mode'):
        server.start()
    assert not os.path.exists(server.data_dir)
    # a command line pflag refuses: its message, not the usage on stderr and SystemExit
    for mode in ("thread", "subprocess"):
        with pytest.raises(ValueError, match='invalid argument "abc" for "--secure-port" flag'):
            APIServer(args=["--secure-port=abc"], mode=mode).start()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown flag: --nonsense"):
        APIServer(args=["--nonsense"]).start()


def test_servers_sharing_a_pki_trust_one_ca() -> None:
    pki = PKI.create()
    with APIServer(pki=pki) as first, APIServer(pki=pki) as second:
        with open(first.ca_file, "rb") as a, open(second.ca_file, "rb") as b:
            assert a.read() == b.read()
        context = ssl.create_default_context(cafile=first.ca_file)  # one CA verifies both
        assert context and second.request("GET", "/readyz").status == 200
    pki.remove()
    assert not os.path.exists(pki.directory)


def test_subprocess_mode_with_secure_port_zero(tmp_path) -> None:
    """`python -m kube_apiserver --secure-port 0`: an ephemeral port, logged and written to the kubeconfig."""
    data_dir = str(tmp_path / "data")
    server = APIServer(mode="subprocess", data_dir=data_dir)
    with server:
        assert server.port > 0
        assert server.request("GET", "/api/v1/namespaces/default").status == 200
        process = server._runner.process  # type: ignore[union-attr]
        with open(os.path.join(data_dir, "apiserver.out")) as out:
            assert f"kube-apiserver is serving on {server.url}\n" in out.read()
    assert process.returncode == 0  # SIGTERM: a clean shutdown
    with open(os.path.join(data_dir, "apiserver.log")) as log:  # the klog line names the real port
        assert f"] Serving securely on 127.0.0.1:{server.port}\n" in log.read()


def test_subprocess_mode_removes_its_temporary_data_dir(template: Template) -> None:
    server = APIServer(mode="subprocess", template=template)
    with server:
        assert server.request("GET", "/readyz").status == 200
    assert not os.path.exists(server.data_dir)
    assert refuses_connections(server.port)


CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"


def test_the_test_tools_are_the_servers_methods(template: Template) -> None:
    """Snapshots, users under RBAC, faults and the request history, through the server object alone."""
    with APIServer(template=template) as server:
        before = server.snapshot()
        assert server.request("POST", CONFIGMAPS, CONFIGMAP).status == 201
        server.restore(before)
        assert server.request("GET", f"{CONFIGMAPS}/probe").status == 404

        alice = server.create_user("alice", ["dev"])
        assert alice.request("GET", PODS).status == 403  # RBAC by default, as envtest
        server.grant(alice, [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}], namespace="default")
        assert alice.request("GET", PODS).status == 200

        with server.injected(verb="get", resource="configmaps", name="kube-root-ca.crt", status=409, count=1):
            assert server.request("GET", f"{CONFIGMAPS}/kube-root-ca.crt").status == 409
            assert server.request("GET", f"{CONFIGMAPS}/kube-root-ca.crt").status == 200  # count=1
        assert server.requests(user="alice", resource="pods").statuses() == [403, 200]

        assert server.request("POST", CONFIGMAPS, CONFIGMAP).status == 201
        server.reset()
        assert server.request("GET", f"{CONFIGMAPS}/probe").status == 404


def test_without_test_tools_the_server_is_the_commands(template: Template) -> None:
    with APIServer(template=template, testing_tools=False, args=["--authorization-mode=AlwaysAllow"]) as server:
        assert server.request("POST", "/debug/testing/snapshots").status == 404
        assert "--client-ca-file" not in " ".join(server._command_args())
