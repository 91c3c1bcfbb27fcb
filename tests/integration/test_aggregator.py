"""The aggregator: APIService CRUD and validation, auto-registered local APIServices, and a remote
APIService served by a small HTTPS server behind a selector-less Service and its Endpoints (proxying,
request-header identity, watch streaming, discovery, availability)."""

from __future__ import annotations

import base64
import json
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from cryptography import x509

from conftest import Server, wait_for
from httpsserver import serving_files

AS = "/apis/apiregistration.k8s.io/v1/apiservices"
GROUP, VERSION = "wardle.example.com", "v1alpha1"
GV_PATH = f"/apis/{GROUP}/{VERSION}"
MERGE = {"Content-Type": "application/merge-patch+json"}
AGGREGATED = {"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}


def api_service(name: str, **spec) -> dict:
    version, _, group = name.partition(".")
    body = {"group": group, "version": version, "groupPriorityMinimum": 100, "versionPriority": 10, **spec}
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": name},
            "spec": body}




def available(server: Server, name: str) -> dict:
    obj = server.request("GET", f"{AS}/{name}").json()
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == "Available"), {})


# ---- local APIServices and the APIService API ----

def test_builtin_group_versions_are_local_apiservices(server):
    items = {i["metadata"]["name"]: i for i in server.request("GET", AS).json()["items"]}
    for name in ("v1.", "v1.apps", "v2.autoscaling", "v1.rbac.authorization.k8s.io"):
        assert items[name]["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
        assert "service" not in items[name]["spec"]
        condition = items[name]["status"]["conditions"][0]
        assert {k: condition[k] for k in ("type", "status", "reason", "message")} == {
            "type": "Available", "status": "True", "reason": "Local",
            "message": "Local APIServices are always available"}
    assert items["v1.apps"]["spec"] == {"group": "apps", "version": "v1", "groupPriorityMinimum": 17800,
                                        "versionPriority": 15}
    assert items["v1."]["spec"]["groupPriorityMinimum"] == 18000
    assert items["v2.autoscaling"]["spec"]["versionPriority"] == 30


def test_apis_ordered_by_priority(server):
    names = [g["name"] for g in server.request("GET", "/apis").json()["groups"]]
    assert names[:8] == ["apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
                         "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io"]
    autoscaling = server.request("GET", "/apis/autoscaling").json()
    assert autoscaling["preferredVersion"]["version"] == "v2"
    assert [v["version"] for v in autoscaling["versions"]] == ["v2", "v1"]
    aggregated = [i["metadata"]["name"] for i in server.request("GET", "/apis", headers=AGGREGATED).json()["items"]]
    assert aggregated[:3] == ["apiregistration.k8s.io", "apps", "events.k8s.io"]


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_get_apiservices(server):
    lines = server.kubectl("get", "apiservices").stdout.splitlines()
    assert lines[0].split() == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    rows = {line.split()[0]: line.split()[1:3] for line in lines[1:]}
    assert rows["v1."] == ["Local", "True"] and rows["v1.apps"] == ["Local", "True"]
    assert "apiservices" in server.kubectl("api-resources", "--api-group=apiregistration.k8s.io").stdout


VALIDATION_CASES = [
    (api_service("v1.wrong.example.com", group="other.example.com"),
     'metadata.name: Invalid value: "v1.wrong.example.com": must be `spec.version+"."+spec.group`: '
     '"v1.other.example.com"'),
    (api_service("v2.", group=""),
     "spec.group: Required value: only v1 may have an empty group and it better be legacy kube"),
    (api_service("v1.bad_group", group="bad_group"),
     'spec.group: Invalid value: "bad_group": a lowercase RFC 1123 subdomain must consist of lower case '
     "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
     "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
     "[a-z0-9])?)*')"),
    (api_service("v1.prio.example.com", groupPriorityMinimum=0),
     "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000"),
    (api_service("v1.prio.example.com", versionPriority=1001),
     "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000"),
    (api_service("v1.local.example.com", caBundle=base64.b64encode(b"12345").decode()),
     'spec.caBundle: Invalid value: "5 bytes": local APIServices may not have a caBundle'),
    (api_service("v1.local.example.com", insecureSkipTLSVerify=True),
     "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify"),
    (api_service("v1.svc.example.com", service={"port": 70000}),
     "spec.service.namespace: Required value"),
    (api_service("v1.svc.example.com", service={"namespace": "ns", "name": "s", "port": 70000}),
     "spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive"),
    (api_service("v1.svc.example.com", service={"namespace": "ns", "name": "s"}, insecureSkipTLSVerify=True,
                 caBundle=base64.b64encode(b"x").decode()),
     "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present"),
]


@pytest.mark.parametrize(("body", "message"), VALIDATION_CASES)
def test_validation(server, body, message):
    answer = server.request("POST", AS, body)
    assert answer.status == 422, answer.body
    status = answer.json()
    assert status["message"].startswith(f'APIService.apiregistration.k8s.io "{body["metadata"]["name"]}" is invalid: ')
    assert message in status["message"]


def test_create_defaults_update_and_status(server):
    created = server.request("POST", AS, api_service("v1beta1.crud.example.com", service={
        "namespace": "default", "name": "crud"}))
    assert created.status == 201, created.body
    obj = created.json()
    assert obj["spec"]["service"] == {"namespace": "default", "name": "crud", "port": 443}
    unconditional = server.request("PUT", f"{AS}/v1beta1.crud.example.com", {**obj, "metadata": {
        "name": "v1beta1.crud.example.com"}})
    assert unconditional.status == 422  # AllowUnconditionalUpdate is false for APIServices
    assert "metadata.resourceVersion: Invalid value" in unconditional.json()["message"]
    bad = wait_for(lambda: server.request("GET", f"{AS}/v1beta1.crud.example.com").json())
    bad["status"] = {"conditions": [{"type": "Available", "status": "Maybe"}]}
    rejected = server.request("PUT", f"{AS}/v1beta1.crud.example.com/status", bad)
    assert rejected.status == 422
    assert 'status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", ' \
           '"Unknown"' in rejected.json()["message"]
    spec_via_status = server.request("PATCH", f"{AS}/v1beta1.crud.example.com/status",
                                     {"spec": {"versionPriority": 99}}, MERGE)
    assert spec_via_status.status == 200 and spec_via_status.json()["spec"]["versionPriority"] == 10
    missing = wait_for(lambda: available(server, "v1beta1.crud.example.com").get("reason") == "ServiceNotFound"
                       and available(server, "v1beta1.crud.example.com"))
    assert missing["status"] == "False"
    assert missing["message"] == 'service/crud in "default" is not present'
    assert server.request("DELETE", f"{AS}/v1beta1.crud.example.com").status == 200


def test_local_apiservice_of_unserved_group_passes_through(server):
    assert server.request("POST", AS, api_service("v1.nothing.example.com")).status == 201
    wait_for(lambda: "nothing.example.com" in [g["name"] for g in server.request("GET", "/apis").json()["groups"]])
    assert server.request("GET", "/apis/nothing.example.com").json()["preferredVersion"]["version"] == "v1"
    assert server.request("GET", "/apis/nothing.example.com/v1").status == 404
    assert server.request("DELETE", f"{AS}/v1.nothing.example.com").status == 200
    wait_for(lambda: server.request("GET", "/apis/nothing.example.com").status == 404)


# ---- a remote APIService: an aggregated API server behind a Service ----

def _certificates(directory: str, dns_name: str) -> tuple[str, str, bytes]:
    """A CA and a serving certificate for `dns_name` it signed: (cert file, key file, CA PEM)."""
    return serving_files(directory, [x509.DNSName(dns_name)], "wardle")


def _flunder(name: str, headers: dict | None = None) -> dict:
    meta = {"name": name, "namespace": "default", "resourceVersion": "7", "creationTimestamp": "2025-01-01T00:00:00Z"}
    if headers is not None:
        meta["annotations"] = {"seen-user": headers.get("X-Remote-User", ""),
                               "seen-groups": ",".join(headers.get_all("X-Remote-Group") or []),
                               "seen-authorization": headers.get("Authorization", "")}
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Flunder", "metadata": meta, "spec": {}}


RESOURCES = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{GROUP}/{VERSION}", "resources": [
    {"name": "flunders", "singularName": "flunder", "namespaced": True, "kind": "Flunder",
     "verbs": ["get", "list", "watch"], "shortNames": ["fl"], "categories": ["all"]},
    {"name": "flunders/status", "singularName": "", "namespaced": True, "kind": "Flunder", "verbs": ["get"]}]}


class JSONHandler(BaseHTTPRequestHandler):
    """A quiet keep-alive handler answering JSON (the aggregated servers these tests play)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def _json(self, code: int, doc: dict) -> None:
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class WardleHandler(JSONHandler):
    """The aggregated server: discovery, flunders (list, get, watch); remembers what it was sent."""

    seen: list[tuple[str, dict]] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path, _, query = self.path.partition("?")
        type(self).seen.append((self.path, self.headers))
        flunders = f"{GV_PATH}/namespaces/default/flunders"
        if path == "/apis":
            self._json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": []})
        elif path == GV_PATH:
            self._json(200, RESOURCES)
        elif path == flunders and "watch=true" in query:
            self._watch()
        elif path == flunders:
            self._json(200, {"apiVersion": f"{GROUP}/{VERSION}", "kind": "FlunderList",
                             "metadata": {"resourceVersion": "7"}, "items": [_flunder("one")]})
        elif path.startswith(flunders + "/"):
            self._json(200, _flunder(path.rsplit("/", 1)[1], self.headers))
        else:
            self._json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                             "reason": "NotFound", "message": "not found"})

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        """Creates answer with what they were sent, and the content type it came as."""
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        body.setdefault("metadata", {})["annotations"] = {"seen-content-type": self.headers.get("Content-Type", "")}
        self._json(201, body)

    def _watch(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for name in ("one", "two"):
            event = json.dumps({"type": "ADDED", "object": _flunder(name)}).encode() + b"\n"
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            self.wfile.flush()
            time.sleep(0.2)
        self.wfile.write(b"0\r\n\r\n")


def host_ip() -> str | None:
    """A non-loopback address of this host: Endpoints may not point at 127.0.0.0/8."""
    for probe in ("192.0.2.1", "10.255.255.255", "8.8.8.8"):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.connect((probe, 9))
                address = s.getsockname()[0]
            except OSError:
                continue
            if not address.startswith("127."):
                return address
    return None


class TrackingServer(ThreadingHTTPServer):
    """Remembers its open connections, so that stopping drops the kept-alive ones too, as a dying server would.

    Stopping shuts them down and leaves closing each to the thread serving it, which still uses it; a lock
    keeps that close and the shutdown apart, so that neither reaches a descriptor number reused meanwhile."""

    daemon_threads = True

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def get_request(self):
        conn, address = super().get_request()
        with self.connections_lock:
            self.connections.add(conn)
        return conn, address

    def shutdown_request(self, request) -> None:
        with self.connections_lock:
            self.connections.discard(request)
            super().shutdown_request(request)

    @classmethod
    def serving_tls(cls, handler: type[BaseHTTPRequestHandler], cert: str, key: str) -> TrackingServer:
        """A server on an ephemeral port of every address, serving TLS with `cert` in a daemon thread."""
        httpd = cls(("0.0.0.0", 0), handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        return httpd

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        with self.connections_lock:
            for conn in self.connections:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class Backend:
    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp()
        cert, key, self.ca_pem = _certificates(self.directory, "api.default.svc")
        self.httpd = TrackingServer.serving_tls(WardleHandler, cert, key)
        self.port = self.httpd.server_address[1]

    def stop(self) -> None:
        self.httpd.stop()


@pytest.fixture(scope="module")
def wardle(tmp_path_factory) -> Iterator[tuple[Server, Backend]]:
    """A server rechecking availability every second, and the backend registered in it."""
    ip = host_ip()
    if ip is None:
        pytest.skip("this host has no non-loopback address for an Endpoints object")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("kube_apiserver.aggregator.lister.RESYNC_SECONDS", 1.0)
        server = Server(str(tmp_path_factory.mktemp("aggregator"))).start()
    backend = Backend()
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": "default"},
               "spec": {"ports": [{"name": "https", "port": 443, "targetPort": backend.port}]}}
    endpoints = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "api", "namespace": "default"},
                 "subsets": [{"addresses": [{"ip": ip}], "ports": [{"name": "https", "port": backend.port}]}]}
    assert server.request("POST", "/api/v1/namespaces/default/services", service).status == 201
    assert server.request("POST", "/api/v1/namespaces/default/endpoints", endpoints).status == 201
    registration = api_service(f"{VERSION}.{GROUP}", service={"namespace": "default", "name": "api"},
                               caBundle=base64.b64encode(backend.ca_pem).decode(), groupPriorityMinimum=1000,
                               versionPriority=15)
    assert server.request("POST", AS, registration).status == 201
    yield server, backend
    backend.stop()
    server.stop()


def test_remote_apiservice_becomes_available(wardle):
    server, _ = wardle
    condition = wait_for(lambda: available(server, f"{VERSION}.{GROUP}").get("status") == "True"
                         and available(server, f"{VERSION}.{GROUP}"))
    assert (condition["reason"], condition["message"]) == ("Passed", "all checks passed")


def test_proxied_get_and_list_carry_the_user(wardle):
    server, _ = wardle
    wait_for(lambda: available(server, f"{VERSION}.{GROUP}").get("status") == "True")
    listed = server.request("GET", f"{GV_PATH}/namespaces/default/flunders")
    assert listed.status == 200 and [i["metadata"]["name"] for i in listed.json()["items"]] == ["one"]
    got = server.request("GET", f"{GV_PATH}/namespaces/default/flunders/x", headers={"X-Remote-User": "mallory"})
    annotations = got.json()["metadata"]["annotations"]
    assert annotations["seen-user"] == "admin"
    assert "system:masters" in annotations["seen-groups"].split(",")
    assert annotations["seen-authorization"] == ""  # the credential stops at the aggregator
    resources = server.request("GET", GV_PATH).json()
    assert [r["name"] for r in resources["resources"]] == ["flunders", "flunders/status"]


def test_proxied_create_forwards_the_body(wardle):
    server, _ = wardle
    wait_for(lambda: available(server, f"{VERSION}.{GROUP}").get("status") == "True")
    created = server.request("POST", f"{GV_PATH}/namespaces/default/flunders", _flunder("new"))
    assert created.status == 201
    assert created.json()["metadata"]["name"] == "new"
    assert created.json()["metadata"]["annotations"] == {"seen-content-type": "application/json"}


def test_proxied_watch_streams(wardle):
    server, _ = wardle
    wait_for(lambda: available(server, f"{VERSION}.{GROUP}").get("status") == "True")
    answer = server.request("GET", f"{GV_PATH}/namespaces/default/flunders?watch=true")
    assert answer.status == 200 and answer.headers.get("transfer-encoding") == "chunked"
    events = [json.loads(line) for line in answer.body.decode().splitlines()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "one"), ("ADDED", "two")]


def test_remote_group_in_discovery(wardle):
    server, _ = wardle
    wait_for(lambda: available(server, f"{VERSION}.{GROUP}").get("status") == "True")
    groups = [g["name"] for g in server.request("GET", "/apis").json()["groups"]]
    assert groups[-1] == GROUP  # priority 1000, below every built-in group
    assert server.request("GET", f"/apis/{GROUP}").json()["preferredVersion"]["groupVersion"] == f"{GROUP}/{VERSION}"

    def remote_entry() -> dict | None:
        doc = server.request("GET", "/apis", headers=AGGREGATED).json()
        item = next((i for i in doc["items"] if i["metadata"]["name"] == GROUP), None)
        return item if item and item["versions"][0]["resources"] else None
    item = wait_for(remote_entry)
    version = item["versions"][0]
    assert version["freshness"] == "Current"
    flunders = version["resources"][0]
    assert (flunders["resource"], flunders["scope"], flunders["shortNames"]) == ("flunders", "Namespaced", ["fl"])
    assert flunders["subresources"][0]["subresource"] == "status"


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_sees_the_remote_group(wardle):
    server, _ = wardle
    wait_for(lambda: available(server, f"{VERSION}.{GROUP}").get("status") == "True")
    out = server.kubectl("api-resources", f"--api-group={GROUP}").stdout
    assert "flunders" in out and "Flunder" in out
    assert server.kubectl("get", "flunders", "-o", "name").stdout.split() == [f"flunder.{GROUP}/one"]
    row = [line.split() for line in server.kubectl("get", "apiservices").stdout.splitlines()
           if line.startswith(f"{VERSION}.{GROUP}")][0]
    assert row[1:3] == ["default/api", "True"]


def test_backend_stopping_makes_it_unavailable(wardle):
    """Last in the module: it stops the backend."""
    server, backend = wardle
    wait_for(lambda: available(server, f"{VERSION}.{GROUP}").get("status") == "True")
    backend.stop()
    # A check whose connection was in the backlog as the listener closed fails with a reset instead (as Go's
    # would, in its TLS handshake's read); the failed check is retried, and once the backend is gone every
    # dial is refused.
    url = f"https://{host_ip()}:{backend.port}{GV_PATH}"
    refused = (f'failing or missing response from {url}: Get "{url}": dial tcp {host_ip()}:{backend.port}: '
               f'connect: connection refused')
    condition = wait_for(lambda: (found := available(server, f"{VERSION}.{GROUP}")).get("message") == refused
                         and found)
    assert (condition["status"], condition["reason"]) == ("False", "FailedDiscoveryCheck")
    answer = server.request("GET", f"{GV_PATH}/namespaces/default/flunders")
    assert (answer.status, answer.body) == (503, b"service unavailable\n")
    assert answer.headers["content-type"] == "text/plain; charset=utf-8"


def test_crd_group_versions_get_local_apiservices(server):
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    if server.request("GET", crds).status == 404:
        pytest.skip("CustomResourceDefinitions are not served")
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.agg.example.com"},
           "spec": {"group": "agg.example.com", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema},
                                 {"name": "v1beta1", "served": False, "storage": False, "schema": schema}]}}
    assert server.request("POST", crds, crd).status == 201
    registered = wait_for(lambda: server.request("GET", f"{AS}/v1.agg.example.com").json().get("spec"))
    assert registered == {"group": "agg.example.com", "version": "v1", "groupPriorityMinimum": 1000,
                          "versionPriority": 100}
    labels = server.request("GET", f"{AS}/v1.agg.example.com").json()["metadata"]["labels"]
    assert labels == {"kube-aggregator.kubernetes.io/automanaged": "true"}
    assert server.request("GET", f"{AS}/v1beta1.agg.example.com").status == 404  # not served
    assert server.request("DELETE", f"{crds}/gadgets.agg.example.com").status == 200
    wait_for(lambda: server.request("GET", f"{AS}/v1.agg.example.com").status == 404)
