"""The front proxy's identity (--requestheader-*): a client certificate of the request-header CA vouches for the
user its X-Remote-* headers name; the configuration is published in kube-system/extension-apiserver-authentication;
and the aggregator proxies with --proxy-client-cert-file to an aggregated server that trusts exactly that."""

from __future__ import annotations

import base64
import http.client
import json
import os
import ssl
import tempfile
import threading
from collections.abc import Iterator

import pytest
from cryptography import x509
from test_aggregator import (
    AS,
    GROUP,
    GV_PATH,
    VERSION,
    JSONHandler,
    TrackingServer,
    api_service,
    available,
    host_ip,
)

from conftest import Server, wait_for
from httpsserver import serving_files
from kube_apiserver.cmd.options import ServerRunOptions
from kube_apiserver.testing.certs import CertificateAuthority, write_pair

SELF_SUBJECT_REVIEW = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
HEADER_FLAGS = ["--requestheader-username-headers", "X-Remote-User", "--requestheader-group-headers",
                "X-Remote-Group", "--requestheader-extra-headers-prefix", "X-Remote-Extra-",
                "--requestheader-uid-headers", "X-Remote-Uid"]


class PKI:
    def __init__(self, directory: str):
        self.directory = directory
        self.client_ca = CertificateAuthority.generate("client-ca")
        self.front_proxy_ca = CertificateAuthority.generate("front-proxy-ca")
        self.client_ca_file = self._write_ca("client-ca", self.client_ca)
        self.front_proxy_ca_file = self._write_ca("front-proxy-ca", self.front_proxy_ca)
        self.proxy = self._issue(self.front_proxy_ca, "front-proxy-client")
        self.other_proxy = self._issue(self.front_proxy_ca, "someone-else")
        self.jane = self._issue(self.client_ca, "jane", ("devs",))

    def _write_ca(self, stem: str, ca: CertificateAuthority) -> str:
        path = os.path.join(self.directory, f"{stem}.crt")
        with open(path, "wb") as f:
            f.write(ca.cert_pem)
        return path

    def _issue(self, ca: CertificateAuthority, name: str, orgs: tuple[str, ...] = ()) -> tuple[str, str]:
        cert, key = ca.issue(name, orgs, client=True)
        return write_pair(self.directory, name, cert, key)


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> PKI:
    return PKI(str(tmp_path_factory.mktemp("frontproxy")))


@pytest.fixture(scope="module")
def server(tmp_path_factory, pki) -> Iterator[Server]:
    server = Server(str(tmp_path_factory.mktemp("server")), [
        "--client-ca-file", pki.client_ca_file, "--requestheader-client-ca-file", pki.front_proxy_ca_file,
        "--requestheader-allowed-names", "front-proxy-client", *HEADER_FLAGS,
        "--proxy-client-cert-file", pki.proxy[0], "--proxy-client-key-file", pki.proxy[1]]).start()
    yield server
    server.stop()


def _post(server: Server, path: str, body: dict, cert: tuple[str, str] | None,
          headers: dict[str, str] | list[tuple[str, str]] = ()) -> tuple[int, dict]:
    ctx = ssl.create_default_context(cafile=server.ca_file)
    if cert:
        ctx.load_cert_chain(*cert)
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=ctx, timeout=10)
    try:
        conn.putrequest("POST", path)
        data = json.dumps(body).encode()
        for name, value in [("Content-Type", "application/json"), ("Content-Length", str(len(data))),
                            *(headers.items() if isinstance(headers, dict) else headers)]:
            conn.putheader(name, value)
        conn.endheaders(data)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def _whoami(server: Server, cert, headers=()) -> tuple[int, dict]:
    code, body = _post(server, SELF_SUBJECT_REVIEW, {"apiVersion": "authentication.k8s.io/v1",
                                                     "kind": "SelfSubjectReview"}, cert, headers)
    return code, body["status"]["userInfo"] if code == 201 else body


def test_the_front_proxy_vouches_for_the_user_its_headers_name(server, pki):
    code, user = _whoami(server, pki.proxy, [
        ("X-Remote-User", "alice"), ("X-Remote-Uid", "alice-uid"), ("X-Remote-Group", "g1"),
        ("X-Remote-Group", "g2"), ("X-Remote-Extra-Scopes", "openid"), ("X-Remote-Extra-Scopes", "profile"),
        ("X-Remote-Extra-Example.com%2fteam", "blue")])
    assert code == 201
    assert user == {"username": "alice", "uid": "alice-uid", "groups": ["g1", "g2", "system:authenticated"],
                    "extra": {"scopes": ["openid", "profile"], "example.com/team": ["blue"]}}


def test_a_name_not_allowed_is_refused(server, pki):
    assert _whoami(server, pki.other_proxy, {"X-Remote-User": "alice"})[0] == 401


def test_a_front_proxy_certificate_alone_is_no_user(server, pki):
    # No X-Remote-User: the request-header authenticator passes, and the certificate is not the client CA's.
    assert _whoami(server, pki.proxy)[0] == 401


def test_a_client_certificate_cannot_claim_a_header_identity(server, pki):
    code, user = _whoami(server, pki.jane, {"X-Remote-User": "admin", "X-Remote-Group": "system:masters"})
    assert code == 201
    assert user["username"] == "jane" and "system:masters" not in user["groups"]


def test_the_configuration_is_published_for_aggregated_servers(server, pki):
    path = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
    data = wait_for(lambda: server.request("GET", path).status == 200 and server.request("GET", path).json()["data"])
    assert sorted(data) == ["client-ca-file", "requestheader-allowed-names", "requestheader-client-ca-file",
                            "requestheader-extra-headers-prefix", "requestheader-group-headers",
                            "requestheader-uid-headers", "requestheader-username-headers"]
    assert x509.load_pem_x509_certificate(data["client-ca-file"].encode()).subject == pki.client_ca.cert.subject
    assert data["requestheader-client-ca-file"].encode() == pki.front_proxy_ca.cert_pem
    assert json.loads(data["requestheader-allowed-names"]) == ["front-proxy-client"]
    assert data["requestheader-username-headers"] == '["X-Remote-User"]'
    assert json.loads(data["requestheader-group-headers"]) == ["X-Remote-Group"]
    assert json.loads(data["requestheader-extra-headers-prefix"]) == ["X-Remote-Extra-"]


def test_flag_errors(tmp_path, pki):
    def errors(*args: str) -> list[str]:
        return ServerRunOptions.parse(["--data-dir", str(tmp_path), *args]).complete().validate()

    assert 'empty value in "requestheader-username-headers"' in errors(
        "--requestheader-client-ca-file", pki.front_proxy_ca_file, "--requestheader-username-headers", " ")
    assert any(e.startswith("unable to load request-header-client-ca-file: ")
               for e in errors("--requestheader-client-ca-file", str(tmp_path / "missing.crt")))
    assert any(e.startswith("failed to load proxy client certificate and key: ")
               for e in errors("--proxy-client-cert-file", pki.proxy[0], "--proxy-client-key-file", pki.jane[1]))


# ---- an aggregated server that authenticates the aggregator as kube-apiserver's delegated authentication does ----

class DelegatedAuthHandler(JSONHandler):
    """Trusts X-Remote-* only from a client certificate of the published request-header CA with an allowed name."""

    allowed: set[str] = set()
    seen: list[dict] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        cert = self.connection.getpeercert()
        subject = dict(pair[0] for pair in cert.get("subject", ())) if cert else {}
        if subject.get("commonName") not in type(self).allowed:
            self._json(401, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 401})
            return
        type(self).seen.append({"path": self.path, "user": self.headers.get("X-Remote-User"),
                                "groups": self.headers.get_all("X-Remote-Group") or [],
                                "proxy": subject.get("commonName")})
        if self.path.split("?")[0] == GV_PATH:
            self._json(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{GROUP}/{VERSION}",
                             "resources": [{"name": "flunders", "singularName": "flunder", "namespaced": True,
                                            "kind": "Flunder", "verbs": ["get"]}]})
            return
        self._json(200, {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Flunder",
                         "metadata": {"name": self.path.rsplit("/", 1)[1], "namespace": "default"}})


def test_the_aggregator_proxies_with_the_front_proxy_identity(server, pki):
    ip = host_ip()
    if ip is None:
        pytest.skip("this host has no non-loopback address for an Endpoints object")
    path = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
    published = wait_for(lambda: server.request("GET", path).status == 200 and server.request("GET", path).json())
    data = published["data"]
    DelegatedAuthHandler.allowed = set(json.loads(data["requestheader-allowed-names"]))
    directory = tempfile.mkdtemp()
    cert, key, ca_pem = serving_files(directory, [x509.DNSName("flunders.default.svc")], "flunders")
    httpd = TrackingServer(("0.0.0.0", 0), DelegatedAuthHandler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.load_verify_locations(cadata=data["requestheader-client-ca-file"])
    context.verify_mode = ssl.CERT_REQUIRED  # only the front proxy may call
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        port = httpd.server_address[1]
        service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "flunders", "namespace": "default"},
                   "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]}}
        endpoints = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "flunders", "namespace": "default"},
                     "subsets": [{"addresses": [{"ip": ip}], "ports": [{"name": "https", "port": port}]}]}
        assert server.request("POST", "/api/v1/namespaces/default/services", service).status == 201
        assert server.request("POST", "/api/v1/namespaces/default/endpoints", endpoints).status == 201
        registration = api_service(f"{VERSION}.{GROUP}", service={"namespace": "default", "name": "flunders"},
                                   caBundle=base64.b64encode(ca_pem).decode(), groupPriorityMinimum=1000,
                                   versionPriority=15)
        assert server.request("POST", AS, registration).status == 201
        wait_for(lambda: available(server, f"{VERSION}.{GROUP}").get("status") == "True", timeout=30)
        got = server.request("GET", f"{GV_PATH}/namespaces/default/flunders/x", headers={"X-Remote-User": "mallory"})
        assert got.status == 200, got.body
        seen = [entry for entry in DelegatedAuthHandler.seen if entry["path"].endswith("/flunders/x")]
        assert [(entry["proxy"], entry["user"]) for entry in seen] == [("front-proxy-client", "admin")]
        assert "system:masters" in seen[0]["groups"]
    finally:
        httpd.stop()
