"""The access matrix: every resource and subresource the server serves, with every verb its discovery lists, as
anonymous, a bad token, an unprivileged user, a node's client certificate, an OIDC user and a front-proxy user,
under --authorization-mode=Node,RBAC with the bootstrap policy. Nothing Kubernetes v1.34 denies is allowed: a
request outside what v1.34's bootstrap roles and node rules grant each identity must be 401 or 403."""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from test_oidc import CLIENT_ID, Issuer

from conftest import Server
from kube_apiserver.testing.certs import CertificateAuthority, write_pair

NAMESPACE = "matrix"
NAME = "matrix-x"

# What every authenticated user may do to resources (system:basic-user, bound to system:authenticated).
AUTHENTICATED = {
    ("authorization.k8s.io", "selfsubjectaccessreviews", "create"),
    ("authorization.k8s.io", "selfsubjectrulesreviews", "create"),
    ("authentication.k8s.io", "selfsubjectreviews", "create"),
}


def _rules(group: str, resources: tuple[str, ...], verbs: tuple[str, ...]) -> set[tuple[str, str, str]]:
    return {(group, resource, verb) for resource in resources for verb in verbs}


READ = ("get", "list", "watch")
# The most a node identity may be granted (v1.34's NodeRules and the Node authorizer's graph-decided resources,
# here for objects no pod of the node uses: the authorizer refuses those, so this is a superset).
NODE = set().union(
    _rules("authentication.k8s.io", ("tokenreviews",), ("create",)),
    _rules("authorization.k8s.io", ("subjectaccessreviews", "localsubjectaccessreviews"), ("create",)),
    _rules("", ("services",), READ),
    _rules("", ("nodes",), ("create", "get", "list", "watch", "update", "patch")),
    _rules("", ("nodes/status",), ("update", "patch")),
    _rules("", ("events",), ("create", "update", "patch")),
    _rules("events.k8s.io", ("events",), ("create", "update", "patch")),
    _rules("", ("pods",), (*READ, "create", "delete")),
    _rules("", ("pods/status",), ("update", "patch")),
    _rules("", ("pods/eviction",), ("create",)),
    _rules("", ("endpoints",), ("get",)),
    _rules("certificates.k8s.io", ("certificatesigningrequests",), ("create", "get", "list", "watch")),
    _rules("coordination.k8s.io", ("leases",), ("get", "create", "update", "patch", "delete")),
    _rules("storage.k8s.io", ("csidrivers",), READ),
    _rules("storage.k8s.io", ("csinodes",), ("get", "create", "update", "patch", "delete")),
    _rules("node.k8s.io", ("runtimeclasses",), READ),
    _rules("resource.k8s.io", ("resourceslices",), (*READ, "create", "update", "patch", "delete", "deletecollection")),
)
# Decided by the graph: refused for an object no pod of the node references (every one here).
GRAPH = {("", "secrets"), ("", "configmaps"), ("", "persistentvolumeclaims"), ("", "persistentvolumes"),
         ("", "persistentvolumeclaims/status"), ("storage.k8s.io", "volumeattachments"),
         ("resource.k8s.io", "resourceclaims"), ("", "serviceaccounts/token")}


@dataclass
class Identity:
    name: str
    allowed: set[tuple[str, str, str]]
    headers: dict[str, str] = field(default_factory=dict)
    cert: tuple[str, str] | None = None


@dataclass(frozen=True)
class Endpoint:
    group: str
    version: str
    resource: str  # with its subresource
    namespaced: bool
    verbs: tuple[str, ...]

    def collection(self) -> str:
        base = f"/api/{self.version}" if not self.group else f"/apis/{self.group}/{self.version}"
        where = f"/namespaces/{NAMESPACE}" if self.namespaced else ""
        return f"{base}{where}/{self.resource.split('/')[0]}"

    def requests(self) -> Iterator[tuple[str, str, str, bytes | None]]:
        """(verb, method, path, body) for each verb."""
        main, _, sub = self.resource.partition("/")
        item = f"{self.collection()}/{NAME}" + (f"/{sub}" if sub else "")
        body = json.dumps({"apiVersion": f"{self.group}/{self.version}".lstrip("/"), "kind": "Matrix",
                           "metadata": {"name": NAME, "namespace": NAMESPACE}}).encode()
        for verb in self.verbs:
            if verb == "get":
                yield verb, "GET", item, None
            elif verb == "list" and not sub:
                yield verb, "GET", self.collection(), None
            elif verb == "watch" and not sub:
                yield verb, "GET", self.collection() + "?watch=1&timeoutSeconds=1", None
            elif verb == "create":
                yield verb, "POST", item if sub else self.collection(), body
            elif verb == "update":
                yield verb, "PUT", item, body
            elif verb == "patch":
                yield verb, "PATCH", item, b"{}"
            elif verb == "delete":
                yield verb, "DELETE", item, None
            elif verb == "deletecollection" and not sub:
                yield verb, "DELETE", self.collection(), None


def endpoints(server: Server) -> list[Endpoint]:
    found: list[Endpoint] = []
    versions = [("", "v1")] + [(g["name"], g["preferredVersion"]["version"])
                               for g in server.request("GET", "/apis").json()["groups"]]
    for group, version in versions:
        path = f"/api/{version}" if not group else f"/apis/{group}/{version}"
        for resource in server.request("GET", path).json()["resources"]:
            found.append(Endpoint(group, version, resource["name"], resource["namespaced"],
                                  tuple(resource.get("verbs") or ())))
    return found


class Client:
    """One keep-alive connection per identity (a node's and the front proxy's carry their certificate)."""

    def __init__(self, server: Server, identity: Identity):
        self.server, self.identity = server, identity
        self.context = ssl.create_default_context(cafile=server.ca_file)
        if identity.cert is not None:
            self.context.load_cert_chain(*identity.cert)
        self.conn: http.client.HTTPSConnection | None = None

    def status(self, method: str, path: str, body: bytes | None) -> int:
        for _ in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection("127.0.0.1", self.server.port, context=self.context,
                                                        timeout=30)
            headers = dict(self.identity.headers)
            if body is not None:
                headers["Content-Type"] = ("application/merge-patch+json" if method == "PATCH"
                                           else "application/json")
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                response.read()
                if response.getheader("connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return response.status
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = None
        raise AssertionError(f"no answer to {method} {path}")


@pytest.fixture(scope="module")
def matrix(tmp_path_factory) -> Iterator[tuple[Server, list[Identity], str]]:
    d = tmp_path_factory.mktemp("matrix")
    client_ca, front_proxy_ca = CertificateAuthority.generate("client-ca"), CertificateAuthority.generate("fp-ca")
    client_ca.write(str(d / "client-ca.crt"), str(d / "client-ca.key"))
    front_proxy_ca.write(str(d / "fp-ca.crt"), str(d / "fp-ca.key"))
    node_cert = write_pair(str(d), "node", *client_ca.issue("system:node:matrix-node", ("system:nodes",),
                                                            client=True))
    proxy_cert = write_pair(str(d), "proxy", *front_proxy_ca.issue("front-proxy-client", client=True))
    (d / "tokens.csv").write_text("jane-token,jane,jane-uid\n")
    issuer = Issuer()
    issuer.rotate("matrix", "matrix-1")
    server = Server(str(d / "data"), [
        "--authorization-mode", "Node,RBAC", "--token-auth-file", str(d / "tokens.csv"),
        "--client-ca-file", str(d / "client-ca.crt"), "--requestheader-client-ca-file", str(d / "fp-ca.crt"),
        "--requestheader-allowed-names", "front-proxy-client", "--requestheader-username-headers", "X-Remote-User",
        "--requestheader-group-headers", "X-Remote-Group", "--oidc-issuer-url", issuer.url("matrix"),
        "--oidc-client-id", CLIENT_ID, "--oidc-ca-file", issuer.ca_file, "--oidc-username-claim", "sub"]).start()
    assert server.request("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}}).status == 201
    oidc_token = issuer.token("matrix", sub="olivia")
    identities = [
        Identity("anonymous", set()),
        Identity("bad token", set(), {"Authorization": "Bearer not-a-valid-token"}),
        Identity("unprivileged user", AUTHENTICATED, {"Authorization": "Bearer jane-token"}),
        Identity("node", AUTHENTICATED | NODE, cert=node_cert),
        Identity("OIDC user", AUTHENTICATED, {"Authorization": f"Bearer {oidc_token}"}),
        Identity("front-proxy user", AUTHENTICATED, {"X-Remote-User": "proxied", "X-Remote-Group": "proxied-group"},
                 cert=proxy_cert),
    ]
    try:
        yield server, identities, issuer.url("matrix")
    finally:
        server.stop()
        issuer.stop()


def test_the_identities_are_who_they_say(matrix):
    server, identities, issuer_url = matrix
    review = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}).encode()
    names = {}
    for identity in identities[2:]:
        client = Client(server, identity)
        client.conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=client.context, timeout=30)
        client.conn.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body=review,
                            headers={**identity.headers, "Content-Type": "application/json"})
        names[identity.name] = json.loads(client.conn.getresponse().read())["status"]["userInfo"]["username"]
    # a username claim other than email gets the issuer URL as its prefix
    assert names == {"unprivileged user": "jane", "node": "system:node:matrix-node",
                     "OIDC user": f"{issuer_url}#olivia", "front-proxy user": "proxied"}


def test_nothing_kubernetes_denies_is_allowed(matrix):
    server, identities, _ = matrix
    served = endpoints(server)
    assert len(served) > 100  # resources and subresources of every group
    wrongly_allowed: list[str] = []
    for identity in identities:
        client = Client(server, identity)
        for endpoint in served:
            group, resource = endpoint.group, endpoint.resource
            for verb, method, path, body in endpoint.requests():
                if (group, resource, verb) in identity.allowed and (group, resource) not in GRAPH:
                    continue
                status = client.status(method, path, body)
                expected = {401} if identity.name == "bad token" else {401, 403}
                if status not in expected:
                    wrongly_allowed.append(f"{identity.name}: {verb} {group}/{resource} ({method} {path}) -> {status}")
    assert not wrongly_allowed, "\n".join(wrongly_allowed)
