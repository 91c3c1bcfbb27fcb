"""OIDC: a small issuer served by the test over HTTPS (discovery and JWKS, its signing key rotated), the
server started with the --oidc-* flags and with an AuthenticationConfiguration of two issuers, and kubectl
presenting an ID token."""

from __future__ import annotations

import http.server
import ipaddress
import json
import os
import ssl
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import rsa

from conftest import Server, wait_for
from httpsserver import serving_files
from kube_apiserver.serviceaccount.jwt import b64url, sign
from kube_apiserver.serviceaccount.openid import jwk

CLIENT_ID = "kubectl"


class Issuer:
    """OpenID discovery and a JWK Set for the issuers https://127.0.0.1:<port>/<name>, and their tokens."""

    def __init__(self) -> None:
        directory = tempfile.mkdtemp()
        cert, key, ca_pem = serving_files(directory, [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))], "issuer")
        self.ca_file = os.path.join(directory, "ca.crt")
        with open(self.ca_file, "wb") as f:
            f.write(ca_pem)
        self.ca_pem = ca_pem.decode()
        self.keys: dict[str, list[tuple[str, Any]]] = {}  # issuer name -> (kid, private key), first signs
        self.fetches: dict[str, int] = {}
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, name: str) -> str:
        return f"https://127.0.0.1:{self.httpd.server_address[1]}/{name}"

    def rotate(self, name: str, kid: str) -> None:
        """A new signing key: it alone is served from now on."""
        self.keys[name] = [(kid, rsa.generate_private_key(65537, 2048))]

    def token(self, name: str, **claims: Any) -> str:
        kid, key = self.keys[name][0]
        now = int(time.time())
        body = {"iss": self.url(name), "aud": CLIENT_ID, "iat": now, "exp": now + 600, **claims}
        signing_input = f"{b64url(orjson.dumps({'alg': 'RS256', 'kid': kid}))}.{b64url(orjson.dumps(body))}"
        return f"{signing_input}.{b64url(sign(key, 'RS256', signing_input.encode()))}"

    def document(self, path: str) -> Any:
        name, _, rest = path.strip("/").partition("/")
        if name not in self.keys:
            return None
        if rest == ".well-known/openid-configuration":
            return {"issuer": self.url(name), "jwks_uri": self.url(name) + "/keys",
                    "id_token_signing_alg_values_supported": ["RS256"]}
        if rest == "keys":
            self.fetches[name] = self.fetches.get(name, 0) + 1
            return {"keys": [{**jwk(key.public_key()), "kid": kid} for kid, key in self.keys[name]]}
        return None

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        issuer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                document = issuer.document(self.path)
                body = json.dumps(document if document is not None else {}).encode()
                self.send_response(200 if document is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def stop(self) -> None:
        self.httpd.shutdown()


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    served = Issuer()
    for name in ("one", "two"):
        served.rotate(name, f"{name}-1")
    yield served
    served.stop()


@pytest.fixture(scope="module")
def flags_server(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(str(tmp_path_factory.mktemp("oidc-flags")), [
        "--oidc-issuer-url", issuer.url("one"), "--oidc-client-id", CLIENT_ID, "--oidc-ca-file", issuer.ca_file,
        "--oidc-username-claim", "email", "--oidc-groups-claim", "groups", "--oidc-groups-prefix", "oidc:",
        "--oidc-required-claim", "hd=example.com", "--authorization-mode", "RBAC"]).start()
    yield server
    server.stop()


def whoami(server: Server, token: str) -> tuple[int, dict]:
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    response = server.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", review, token=token)
    return response.status, response.json()


def test_flags_map_the_claims(issuer, flags_server):
    token = issuer.token("one", email="jane@example.com", email_verified=True, groups=["dev"], hd="example.com")
    status, review = whoami(flags_server, token)
    assert status == 201, review
    assert review["status"]["userInfo"]["username"] == "jane@example.com"  # email: no issuer prefix
    assert review["status"]["userInfo"]["groups"] == ["oidc:dev", "system:authenticated"]
    assert flags_server.request("GET", "/api/v1/namespaces", token=token).status == 403  # no RBAC grant
    for bad in (issuer.token("one", email="jane@example.com", hd="other.com"),
                issuer.token("one", email="jane@example.com", hd="example.com", email_verified=False),
                issuer.token("one", email="jane@example.com", hd="example.com", aud="someone-else"),
                issuer.token("one", email="jane@example.com", hd="example.com", exp=int(time.time()) - 10)):
        assert whoami(flags_server, bad)[0] == 401


def test_signing_key_rotation(issuer, flags_server):
    claims = {"email": "rot@example.com", "hd": "example.com"}
    old = issuer.token("one", **claims)
    assert whoami(flags_server, old)[0] == 201
    fetched = issuer.fetches["one"]
    issuer.rotate("one", "one-2")
    new = issuer.token("one", **claims)
    # The unknown key ID makes the server fetch the key set again (at most once a second).
    wait_for(lambda: whoami(flags_server, new)[0] == 201, timeout=10)
    assert whoami(flags_server, new)[1]["status"]["userInfo"]["username"] == "rot@example.com"
    assert issuer.fetches["one"] > fetched
    wait_for(lambda: whoami(flags_server, old)[0] == 401, timeout=10)  # its key is gone from the issuer's set


def test_kubectl_with_an_id_token(issuer, flags_server, kubectl_available):
    token = issuer.token("one", email="kube@example.com", groups=["ops", "dev"], hd="example.com")
    with open(flags_server.kubeconfig) as f:
        config = yaml.safe_load(f)
    config["users"][0]["user"] = {"token": token}
    path = os.path.join(flags_server.data_dir, "oidc.kubeconfig")
    with open(path, "w") as f:
        yaml.safe_dump(config, f)
    result = flags_server.kubectl("--kubeconfig", path, "auth", "whoami", "-o", "json")
    user = json.loads(result.stdout)["status"]["userInfo"]
    assert user["username"] == "kube@example.com"
    assert user["groups"] == ["oidc:ops", "oidc:dev", "system:authenticated"]


AUTHENTICATION_CONFIG = """apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: {one}
    audiences: [{client}]
    certificateAuthority: |
{ca}
  claimMappings:
    username: {{claim: sub, prefix: "one:"}}
- issuer:
    url: {two}
    discoveryURL: {two}/.well-known/openid-configuration
    audiences: [{client}, other]
    audienceMatchPolicy: MatchAny
    certificateAuthority: |
{ca}
  claimValidationRules:
  - {{expression: "claims.tier == 'gold'", message: only gold}}
  claimMappings:
    username: {{expression: "'two:' + claims.sub"}}
    groups: {{expression: "claims.teams.map(t, 'team:' + t)"}}
    uid: {{expression: "claims.sub + '-id'"}}
    extra:
    - {{key: example.com/tier, valueExpression: claims.tier}}
  userValidationRules:
  - {{expression: "!user.username.startsWith('two:system:')", message: no system names}}
anonymous:
  enabled: true
  conditions: [{{path: /livez}}, {{path: /readyz}}]
"""


@pytest.fixture(scope="module")
def config_server(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("oidc-config")
    ca = "\n".join("      " + line for line in issuer.ca_pem.strip().splitlines())
    path = directory / "authn.yaml"
    path.write_text(AUTHENTICATION_CONFIG.format(one=issuer.url("one"), two=issuer.url("two"), client=CLIENT_ID,
                                                 ca=ca))
    server = Server(str(directory / "data"), ["--authentication-config", str(path)]).start()
    yield server
    server.stop()


def test_two_issuers_from_the_configuration(issuer, config_server):
    status, review = whoami(config_server, issuer.token("one", sub="ann"))
    assert status == 201 and review["status"]["userInfo"]["username"] == "one:ann"
    status, review = whoami(config_server, issuer.token("two", sub="bob", tier="gold", teams=["a", "b"],
                                                        aud=["other"]))
    assert status == 201, review
    assert review["status"]["userInfo"] == {"username": "two:bob", "uid": "bob-id",
                                            "groups": ["team:a", "team:b", "system:authenticated"],
                                            "extra": {"example.com/tier": ["gold"]}}
    assert whoami(config_server, issuer.token("two", sub="bob", tier="silver", teams=[]))[0] == 401
    assert whoami(config_server, issuer.token("two", sub="system:x", tier="gold", teams=[]))[0] == 401


def test_anonymous_conditions_from_the_configuration(config_server):
    assert config_server.request("GET", "/livez", token=None).status == 200
    assert config_server.request("GET", "/version", token=None).status == 401
