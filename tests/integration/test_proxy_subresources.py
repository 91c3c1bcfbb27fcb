"""The proxy subresources of core/v1 as kube-apiserver v1.34 serves them: services/proxy (to a valid
address of the service's Endpoints), pods/proxy (to the pod's IP) and nodes/proxy on a port other than
the kubelet's, all through a real local HTTP backend listening on a non-loopback address of this host."""

from __future__ import annotations

import gzip
import http.server
import ipaddress
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

NS = "/api/v1/namespaces/default"
HTML = (b'<html><head><link rel="stylesheet" href="/static/app.css"></head><BODY>'
        b'<A HREF="/docs/">docs</A> <img src="logo.png"/> <a href="http://example.com/x">out</a></body></html>')


def local_ip() -> str | None:
    """A non-loopback address of this host (pod IPs may not be loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.254", 9))  # no packet is sent: this only picks the outgoing address
            address = probe.getsockname()[0]
        except OSError:
            return None
    ip = ipaddress.ip_address(address)
    return None if ip.is_loopback or ip.is_link_local else address


class Backend(http.server.BaseHTTPRequestHandler):
    """Echoes each request as JSON; a few paths answer with a redirect, HTML, CORS headers or a stream."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, code: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _answer(self) -> None:
        path = self.path.partition("?")[0]
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if path.endswith("/redirect"):
            return self._send(302, b"", "text/plain", {"Location": "/target/page"})
        if path.endswith("/page.html"):
            return self._send(200, HTML, "text/html; charset=utf-8")
        if path.endswith("/page.html.gz"):
            return self._send(200, gzip.compress(HTML), "text/html", {"Content-Encoding": "gzip"})
        if path.endswith("/cors"):
            return self._send(200, b"{}", "application/json", {"Access-Control-Allow-Origin": "*", "X-Kept": "1"})
        if path.endswith("/stream"):
            return self._stream()
        echo = {"method": self.command, "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode()}
        self._send(200, json.dumps(echo).encode(), "application/json")

    def _stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for piece in (b"one\n", b"two\n"):
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = _answer  # noqa: N815 - http.server's names


@pytest.fixture(scope="module")
def backend() -> Iterator[tuple[str, int]]:
    ip = local_ip()
    if ip is None:
        pytest.skip("this host has no non-loopback address to serve a pod IP from")
    httpd = http.server.ThreadingHTTPServer((ip, 0), Backend)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield ip, httpd.server_address[1]
    httpd.shutdown()


def closed_port(ip: str) -> int:
    with socket.socket() as s:
        s.bind((ip, 0))
        return s.getsockname()[1]


def make_pod(server: Any, name: str, ip: str, port: int | None = None) -> None:
    container: dict[str, Any] = {"name": "c", "image": "nginx"}
    if port is not None:
        container["ports"] = [{"containerPort": port}]
    created = server.request("POST", f"{NS}/pods", {"metadata": {"name": name}, "spec": {"containers": [container]}})
    assert created.status == 201, created.body
    status = {"status": {"podIP": ip, "podIPs": [{"ip": ip}]}}
    patched = server.request("PATCH", f"{NS}/pods/{name}/status", json.dumps(status),
                             {"Content-Type": "application/merge-patch+json"})
    assert patched.status == 200, patched.body


def make_service(server: Any, name: str, ip: str, port: int, target: str | None) -> None:
    service = {"metadata": {"name": name}, "spec": {"ports": [{"name": "web", "port": 80, "targetPort": port}]}}
    assert server.request("POST", f"{NS}/services", service).status == 201
    address: dict[str, Any] = {"ip": ip}
    if target is not None:
        address["targetRef"] = {"kind": "Pod", "namespace": "default", "name": target}
    endpoints = {"metadata": {"name": name},
                 "subsets": [{"addresses": [address], "ports": [{"name": "web", "port": port}]}]}
    assert server.request("POST", f"{NS}/endpoints", endpoints).status == 201


def message(resp: Any) -> tuple[int, str]:
    return resp.status, resp.json()["message"]


def test_proxy_subresources_are_discovered(server):
    resources = {r["name"]: r for r in server.request("GET", "/api/v1").json()["resources"]}
    for name, kind in (("services/proxy", "ServiceProxyOptions"), ("pods/proxy", "PodProxyOptions"),
                       ("nodes/proxy", "NodeProxyOptions")):
        assert (resources[name]["kind"], resources[name]["verbs"]) == (kind, ["connect"])


def test_pod_proxy_forwards_to_the_pod_ip(server, backend):
    ip, port = backend
    make_pod(server, "echo", ip, port)
    base = f"{NS}/pods/echo/proxy"
    got = server.request("GET", f"{base}/some/path?x=1&y=2", headers={"X-Custom": "yes"})
    assert got.status == 200, got.body
    echo = got.json()
    assert echo["path"] == "/some/path?x=1&y=2"
    headers = echo["headers"]
    assert headers["x-custom"] == "yes" and "authorization" not in headers
    assert headers["x-forwarded-uri"] == f"{base}/some/path"
    assert headers["x-forwarded-for"] == "127.0.0.1"
    assert headers["host"] == f"127.0.0.1:{server.port}"  # ReverseProxy keeps the client's Host
    with_port = f"{NS}/pods/echo:{port}/proxy"
    posted = server.request("POST", f"{with_port}/submit/", b"payload", {"Content-Type": "text/plain"}).json()
    assert (posted["method"], posted["path"], posted["body"]) == ("POST", "/submit/", "payload")
    assert posted["headers"]["x-forwarded-uri"] == f"{with_port}/submit/"
    head = server.request("HEAD", f"{base}/anything")
    assert (head.status, head.body) == (200, b"")


def test_pod_proxy_root_redirect_and_methods(server, backend):
    ip, port = backend
    make_pod(server, "rooted", ip, port)
    bare = server.request("GET", f"{NS}/pods/rooted/proxy?a=b")
    assert (bare.status, bare.headers["location"]) == (301, f"{NS}/pods/rooted/proxy/?a=b")
    assert server.request("GET", f"{NS}/pods/rooted/proxy/").json()["path"] == "/"
    patched = server.request("PATCH", f"{NS}/pods/rooted/proxy/x", b"{}",
                             {"Content-Type": "application/merge-patch+json"})
    assert (patched.status, patched.json()["reason"]) == (405, "MethodNotAllowed")


def test_pod_proxy_errors(server, backend):
    ip, _ = backend
    make_pod(server, "loopback", "127.0.0.1", 80)
    assert message(server.request("GET", f"{NS}/pods/loopback/proxy/")) == (400, "address not allowed")
    assert server.request("POST", f"{NS}/pods", {"metadata": {"name": "no-ip"},
                                                 "spec": {"containers": [{"name": "c", "image": "i"}]}}).status == 201
    assert message(server.request("GET", f"{NS}/pods/no-ip/proxy/")) == (400, "address not allowed")
    assert message(server.request("GET", f"{NS}/pods/a:b:c:d/proxy/")) == (400, 'invalid pod request "a:b:c:d"')
    assert message(server.request("GET", f"{NS}/pods/ghost/proxy/")) == (404, 'pods "ghost" not found')
    refused = closed_port(ip)
    make_pod(server, "closed", ip, refused)
    down = server.request("GET", f"{NS}/pods/closed/proxy/")
    assert (down.json()["reason"], down.json()["code"]) == ("ServiceUnavailable", 503)
    assert down.json()["message"] == f"error trying to reach service: dial tcp {ip}:{refused}: connect: connection refused"


def test_proxied_responses_are_rewritten_and_streamed(server, backend):
    ip, port = backend
    make_pod(server, "pages", ip, port)
    base = f"{NS}/pods/pages/proxy"
    redirect = server.request("GET", f"{base}/a/redirect")
    assert (redirect.status, redirect.headers["location"]) == (302, f"{base}/target/page")
    page = server.request("GET", f"{base}/site/page.html")
    assert page.body == (f'<html><head><link rel="stylesheet" href="{base}/static/app.css"></head><body>'
                         f'<a href="{base}/docs/">docs</A> <img src="logo.png"/> '
                         f'<a href="http://example.com/x">out</a></body></html>').encode()
    zipped = server.request("GET", f"{base}/site/page.html.gz")
    assert gzip.decompress(zipped.body) == page.body
    cors = server.request("GET", f"{base}/cors")
    assert "access-control-allow-origin" not in cors.headers and cors.headers["x-kept"] == "1"
    stream = server.request("GET", f"{base}/stream")
    assert (stream.status, stream.body) == (200, b"one\ntwo\n")


def test_service_proxy_reaches_a_valid_endpoint(server, backend):
    ip, port = backend
    make_pod(server, "svc-pod", ip, port)
    make_service(server, "web", ip, port, "svc-pod")
    for id_ in ("web:80", "web:web", "http:web:80"):
        got = server.request("GET", f"{NS}/services/{id_}/proxy/hello?q=1")
        assert got.status == 200, (id_, got.body)
        assert got.json()["path"] == "/hello?q=1"
        assert got.json()["headers"]["x-forwarded-uri"] == f"{NS}/services/{id_}/proxy/hello"
    # path.Join drops the trailing slash; the proxy puts the request's back
    assert server.request("GET", f"{NS}/services/web:web/proxy/dir//x/").json()["path"] == "/dir/x/"
    # without a port only an unnamed Endpoints port matches
    assert message(server.request("GET", f"{NS}/services/web/proxy/")) == \
        (503, 'no endpoints available for service "web"')
    bare = server.request("GET", f"{NS}/services/web:80/proxy")
    assert (bare.status, bare.headers["location"]) == (301, f"{NS}/services/web:80/proxy/")


def test_service_proxy_errors(server, backend):
    ip, port = backend
    assert message(server.request("GET", f"{NS}/services/a:b:c:d/proxy/")) == \
        (400, 'invalid service request "a:b:c:d"')
    assert message(server.request("GET", f"{NS}/services/ghost:80/proxy/")) == (404, 'services "ghost" not found')
    assert message(server.request("GET", f"{NS}/services/ghost/proxy/")) == (404, 'endpoints "ghost" not found')
    make_service(server, "untargeted", ip, port, None)  # isValidAddress wants the pod the address targets
    assert message(server.request("GET", f"{NS}/services/untargeted:80/proxy/")) == \
        (503, 'no endpoints available for service "untargeted:80"')
    assert message(server.request("GET", f"{NS}/services/untargeted:81/proxy/")) == \
        (503, 'no service port 81 found for service "untargeted"')
    service = {"metadata": {"name": "empty"}, "spec": {"ports": [{"port": 80}]}}
    assert server.request("POST", f"{NS}/services", service).status == 201
    assert server.request("POST", f"{NS}/endpoints", {"metadata": {"name": "empty"}}).status == 201
    assert message(server.request("GET", f"{NS}/services/empty/proxy/")) == \
        (503, 'no endpoints available for service "empty"')
    make_pod(server, "moved", "10.255.0.9")  # the endpoint's IP is not the pod's
    make_service(server, "stale", ip, port, "moved")
    assert message(server.request("GET", f"{NS}/services/stale/proxy/")) == \
        (503, 'no endpoints available for service "stale"')


def test_node_proxy_to_another_port(server, backend):
    ip, port = backend
    node = {"metadata": {"name": "worker"}, "status": {"addresses": [{"type": "InternalIP", "address": ip}]}}
    assert server.request("POST", "/api/v1/nodes", node).status == 201
    got = server.request("GET", f"/api/v1/nodes/worker:{port}/proxy/metrics")
    assert got.status == 200, got.body
    assert got.json()["path"] == "/metrics"
    kubelet = server.request("GET", "/api/v1/nodes/worker:10250/proxy/metrics")
    assert kubelet.status == 503 and "does not connect to kubelets" in kubelet.json()["message"]
    local = {"metadata": {"name": "local"}, "status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}]}}
    assert server.request("POST", "/api/v1/nodes", local).status == 201
    assert message(server.request("GET", f"/api/v1/nodes/local:{port}/proxy/")) == (400, "address not allowed")
