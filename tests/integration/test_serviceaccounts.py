"""core/v1 serviceaccounts and their tokens: kubectl create serviceaccount/token, the `default` account of
every namespace (the serviceaccount controller), TokenRequest (claims, bound objects, validation),
service account bearer tokens (who they authenticate as; expired, tampered and invalidated ones), the
ServiceAccount admission plugin's token volume, and the issuer's OpenID discovery documents."""

from __future__ import annotations

import base64
import calendar
import json
import os
import re
import time
import uuid

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from conftest import Server
from kube_apiserver.cmd.options import ServerRunOptions
from kube_apiserver.serviceaccount import keys
from kube_apiserver.serviceaccount.jwt import TokenGenerator

SAS = "/api/v1/namespaces/default/serviceaccounts"
PODS = "/api/v1/namespaces/default/pods"
ISSUER = "https://kubernetes.default.svc.cluster.local"
TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
VOLUME_NAME = re.compile(r"^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$")
YEAR = 24 * 365 * 3600


def segment(token: str, index: int) -> dict:
    part = token.split(".")[index]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def create_sa(server: Server, name: str, namespace: str = "default", **fields) -> dict:
    body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}, **fields}
    created = server.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", body)
    assert created.status == 201, created.body
    return created.json()


def token_request(server: Server, sa: str, namespace: str = "default", **spec):
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}
    return server.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{sa}/token", body)


def token_for(server: Server, sa: str, **spec) -> str:
    created = token_request(server, sa, **spec)
    assert created.status == 201, created.body
    return created.json()["status"]["token"]


def create_pod(server: Server, name: str, **spec) -> dict:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}
    created = server.request("POST", PODS, body)
    assert created.status == 201, created.body
    return created.json()


def wait_for(check, timeout: float = 10):
    deadline = time.time() + timeout
    while True:
        value = check()
        if value or time.time() > deadline:
            return value
        time.sleep(0.05)


def whoami_status(server: Server, token: str) -> int:
    return server.request("GET", "/api/v1/namespaces/default/configmaps", token=token).status


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_creates_and_lists_service_accounts(server):
    created = server.kubectl("create", "serviceaccount", "sa1", "-v=8")
    assert "serviceaccount/sa1 created" in created.stdout
    assert "Content-Type: application/vnd.kubernetes.protobuf" in created.stderr
    got = server.request("GET", f"{SAS}/sa1").json()
    assert got["kind"] == "ServiceAccount" and got["metadata"]["namespace"] == "default"
    lines = server.kubectl("get", "sa").stdout.splitlines()
    assert lines[0].split() == ["NAME", "SECRETS", "AGE"]
    assert [line.split()[:2] for line in lines[1:]][:2] == [["default", "0"], ["sa1", "0"]]
    resources = server.kubectl("api-resources", "--api-group=").stdout
    assert re.search(r"^serviceaccounts\s+sa\s+v1\s+true\s+ServiceAccount$", resources, re.M)
    references = create_sa(server, "with-refs", secrets=[{"name": "s", "namespace": "x", "uid": "u"}])
    assert references["secrets"] == [{"name": "s"}]


def test_discovery_lists_the_token_subresource(server):
    resources = {r["name"]: r for r in server.request("GET", "/api/v1").json()["resources"]}
    assert resources["serviceaccounts/token"] == {"name": "serviceaccounts/token", "singularName": "",
                                                  "namespaced": True, "group": "authentication.k8s.io",
                                                  "version": "v1", "kind": "TokenRequest", "verbs": ["create"]}
    assert resources["serviceaccounts"]["shortNames"] == ["sa"]


def test_every_namespace_gets_a_default_service_account(server):
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "sa-ns"}}
    assert server.request("POST", "/api/v1/namespaces", namespace).status == 201
    default = "/api/v1/namespaces/sa-ns/serviceaccounts/default"
    first = wait_for(lambda: server.request("GET", default).json().get("metadata"))
    assert first and first["name"] == "default"
    assert server.request("DELETE", default).status == 200
    again = wait_for(lambda: (server.request("GET", default).json().get("metadata") or {}).get("uid") not in
                     (None, first["uid"]))
    assert again, "the default service account was not recreated"
    created = server.request("POST", "/api/v1/namespaces/sa-ns/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c",
                                                                                               "image": "x"}]}})
    assert created.status == 201 and created.json()["spec"]["serviceAccountName"] == "default"


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_create_token_returns_a_signed_jwt_with_kubernetes_claims(server):
    sa = create_sa(server, "claims")
    token = server.kubectl("create", "token", "claims").stdout.strip()
    header, claims = segment(token, 0), segment(token, 1)
    jwks = server.request("GET", "/openid/v1/jwks").json()["keys"]
    assert header == {"alg": "RS256", "kid": jwks[0]["kid"]}
    assert set(claims) == {"aud", "exp", "iat", "iss", "jti", "kubernetes.io", "nbf", "sub"}
    assert claims["iss"] == ISSUER and claims["aud"] == [ISSUER]
    assert claims["sub"] == "system:serviceaccount:default:claims"
    assert claims["exp"] - claims["iat"] == 3600 and claims["nbf"] == claims["iat"]
    assert abs(claims["iat"] - time.time()) < 60 and uuid.UUID(claims["jti"])
    assert claims["kubernetes.io"] == {"namespace": "default",
                                       "serviceaccount": {"name": "claims", "uid": sa["metadata"]["uid"]}}
    # The signature verifies with the published key.
    numbers = rsa.RSAPublicNumbers(int.from_bytes(_b64(jwks[0]["e"]), "big"), int.from_bytes(_b64(jwks[0]["n"]), "big"))
    signing_input, signature = token.rsplit(".", 1)
    numbers.public_key().verify(_b64(signature), signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    assert whoami_status(server, token) == 200


def _b64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_token_request_defaults_validation_and_response(server):
    create_sa(server, "tr")
    created = token_request(server, "tr", audiences=["vault"], expirationSeconds=1200)
    assert created.status == 201
    body = created.json()
    assert body["kind"] == "TokenRequest" and body["apiVersion"] == "authentication.k8s.io/v1"
    assert body["metadata"]["name"] == "tr" and body["metadata"]["namespace"] == "default"
    assert body["spec"] == {"audiences": ["vault"], "expirationSeconds": 1200}
    claims = segment(body["status"]["token"], 1)
    assert claims["aud"] == ["vault"] and claims["exp"] - claims["iat"] == 1200
    expires = calendar.timegm(time.strptime(body["status"]["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
    assert expires == claims["exp"]
    # A token for another audience does not authenticate against the API.
    assert whoami_status(server, body["status"]["token"]) == 401
    short = token_request(server, "tr", expirationSeconds=300)
    assert short.status == 422
    assert short.json()["message"] == ('TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
                                       "Invalid value: 300: may not specify a duration less than 10 minutes")
    long = token_request(server, "tr", expirationSeconds=(1 << 32) + 1).json()
    assert long["details"]["causes"][0]["message"].endswith("may not specify a duration larger than 2^32 seconds")
    missing = token_request(server, "nobody")
    assert (missing.status, missing.json()["message"]) == (404, 'serviceaccounts "nobody" not found')
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": {"name": "other"}}
    renamed = server.request("POST", f"{SAS}/tr/token", body).json()
    assert renamed["details"]["causes"][0]["message"].endswith("must match the service account name if specified")


@pytest.mark.usefixtures("kubectl_available")
def test_bound_tokens_name_their_object_and_die_with_it(server):
    sa = create_sa(server, "bound")
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bound-secret"}}
    secret_uid = server.request("POST", "/api/v1/namespaces/default/secrets", secret).json()["metadata"]["uid"]
    token = server.kubectl("create", "token", "bound", "--bound-object-kind", "Secret", "--bound-object-name",
                           "bound-secret").stdout.strip()
    assert segment(token, 1)["kubernetes.io"] == {
        "namespace": "default", "serviceaccount": {"name": "bound", "uid": sa["metadata"]["uid"]},
        "secret": {"name": "bound-secret", "uid": secret_uid}}
    assert whoami_status(server, token) == 200
    assert server.request("DELETE", "/api/v1/namespaces/default/secrets/bound-secret").status == 200
    assert whoami_status(server, token) == 401


def test_pod_bound_tokens_carry_the_node_and_the_extended_expiration(server):
    create_sa(server, "runner")
    pod = create_pod(server, "runner-pod", serviceAccountName="runner", nodeName="node-x")
    ref = {"kind": "Pod", "apiVersion": "v1", "name": "runner-pod"}
    token = token_for(server, "runner", boundObjectRef=ref, expirationSeconds=3607)
    claims = segment(token, 1)
    private = claims["kubernetes.io"]
    assert private["pod"] == {"name": "runner-pod", "uid": pod["metadata"]["uid"]}
    assert private["node"] == {"name": "node-x"}  # the node is not known: its name alone
    assert private["warnafter"] == claims["iat"] + 3607 and claims["exp"] - claims["iat"] == YEAR
    plain = segment(token_for(server, "runner", boundObjectRef=ref), 1)
    assert "warnafter" not in plain["kubernetes.io"] and plain["exp"] - plain["iat"] == 3600
    assert whoami_status(server, token) == 200
    wrong_uid = token_request(server, "runner", boundObjectRef={**ref, "uid": "nope"})
    assert wrong_uid.status == 409
    assert wrong_uid.json()["message"] == (
        'Operation cannot be fulfilled on Pod "runner-pod": the UID in the bound object reference (nope) does not '
        "match the UID in record. The object might have been deleted and then recreated")
    other = token_request(server, "default", boundObjectRef=ref).json()
    assert other["message"] == ('cannot bind token for serviceaccount "default" to pod running with different '
                                "serviceaccount name.")
    kind = token_request(server, "runner", boundObjectRef={"kind": "ConfigMap", "apiVersion": "v1", "name": "x"})
    assert (kind.status, kind.json()["message"]) == (
        400, 'cannot bind token for serviceaccount "runner" to object of type /v1, Kind=ConfigMap')
    node = token_request(server, "runner", boundObjectRef={"kind": "Node", "apiVersion": "v1", "name": "ghost"})
    assert (node.status, node.json()["message"]) == (404, 'nodes "ghost" not found')
    assert server.request("DELETE", f"{PODS}/runner-pod?gracePeriodSeconds=0").status == 200
    assert whoami_status(server, token) == 401


def test_expired_tampered_and_foreign_tokens_are_unauthorized(server):
    create_sa(server, "victim")
    token = token_for(server, "victim")
    claims = segment(token, 1)
    signer = TokenGenerator(ISSUER, keys.load_private_key(os.path.join(server.data_dir, "pki", "sa.key")))
    assert whoami_status(server, signer.generate({**claims, "iss": ISSUER})) == 200
    past = {**claims, "iat": claims["iat"] - 7200, "nbf": claims["nbf"] - 7200, "exp": claims["iat"] - 3600}
    assert whoami_status(server, signer.generate(past)) == 401
    header, payload, signature = token.split(".")
    forged = base64.urlsafe_b64encode(json.dumps({**claims, "sub": "system:serviceaccount:default:default"})
                                      .encode()).decode().rstrip("=")
    assert whoami_status(server, f"{header}.{forged}.{signature}") == 401
    assert whoami_status(server, f"{header}.{payload}.{signature[:-4]}AAAA") == 401
    stranger = TokenGenerator(ISSUER, ec.generate_private_key(ec.SECP256R1()))
    assert whoami_status(server, stranger.generate(claims)) == 401
    other_issuer = TokenGenerator("https://elsewhere", ec.generate_private_key(ec.SECP256R1()))
    assert whoami_status(server, other_issuer.generate(claims)) == 401


def test_deleting_the_service_account_invalidates_its_tokens(server):
    create_sa(server, "short-lived")
    token = token_for(server, "short-lived")
    assert whoami_status(server, token) == 200
    assert server.request("DELETE", f"{SAS}/short-lived").status == 200
    assert whoami_status(server, token) == 401
    create_sa(server, "short-lived")  # the same name, another uid
    assert whoami_status(server, token) == 401


def test_pods_get_the_service_account_and_its_projected_token_volume(server):
    created = create_pod(server, "projected", initContainers=[{"name": "init", "image": "busybox"}])
    spec = created["spec"]
    assert spec["serviceAccountName"] == "default" and spec["serviceAccount"] == "default"
    [volume] = spec["volumes"]
    assert VOLUME_NAME.match(volume["name"])
    assert volume["projected"] == {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}
    mount = {"name": volume["name"], "readOnly": True, "mountPath": TOKEN_PATH}
    assert spec["containers"][0]["volumeMounts"] == [mount] and spec["initContainers"][0]["volumeMounts"] == [mount]
    assert "imagePullSecrets" not in spec


def test_service_account_admission_choices(server):
    create_sa(server, "no-mount", automountServiceAccountToken=False, imagePullSecrets=[{"name": "registry"}])
    quiet = create_pod(server, "quiet", serviceAccountName="no-mount")["spec"]
    assert "volumes" not in quiet and quiet["imagePullSecrets"] == [{"name": "registry"}]
    wants = create_pod(server, "wants", serviceAccountName="no-mount", automountServiceAccountToken=True)["spec"]
    assert VOLUME_NAME.match(wants["volumes"][0]["name"])
    declined = create_pod(server, "declined", automountServiceAccountToken=False)["spec"]
    assert "volumes" not in declined and declined["serviceAccountName"] == "default"
    own = {"name": "c", "image": "x", "volumeMounts": [{"name": "mine", "mountPath": TOKEN_PATH}]}
    kept = create_pod(server, "own-mount", containers=[own], volumes=[{"name": "mine", "emptyDir": {}}])["spec"]
    assert [v["name"] for v in kept["volumes"]] == ["mine"]
    alias = create_pod(server, "alias", serviceAccount="no-mount")["spec"]
    assert alias["serviceAccountName"] == "no-mount"
    missing = server.request("POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "orphan"},
                                            "spec": {"serviceAccountName": "missing",
                                                     "containers": [{"name": "c", "image": "x"}]}})
    assert missing.status == 403
    assert missing.json()["message"] == ('pods "orphan" is forbidden: error looking up service account '
                                         'default/missing: serviceaccount "missing" not found')


def test_mountable_secrets_are_enforced_when_annotated(server):
    create_sa(server, "strict", metadata={"name": "strict", "annotations": {
        "kubernetes.io/enforce-mountable-secrets": "true"}}, secrets=[{"name": "allowed"}])
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sneaky"},
            "spec": {"serviceAccountName": "strict", "containers": [{"name": "c", "image": "x"}],
                     "volumes": [{"name": "v", "secret": {"secretName": "other"}}]}}
    refused = server.request("POST", PODS, body)
    assert refused.status == 403
    assert refused.json()["message"] == ('pods "sneaky" is forbidden: volume with secret.secretName="other" is not '
                                         "allowed because service account strict does not reference that secret")
    body["spec"]["volumes"][0]["secret"]["secretName"] = "allowed"
    assert server.request("POST", PODS, body).status == 201


def test_openid_discovery_documents(server):
    config = server.request("GET", "/.well-known/openid-configuration")
    assert config.status == 200
    assert config.headers["content-type"] == "application/json"
    assert config.headers["cache-control"] == "public, max-age=3600"
    assert config.json() == {"issuer": ISSUER, "jwks_uri": f"https://127.0.0.1:{server.port}/openid/v1/jwks",
                             "response_types_supported": ["id_token"], "subject_types_supported": ["public"],
                             "id_token_signing_alg_values_supported": ["RS256"]}
    jwks = server.request("GET", "/openid/v1/jwks")
    assert jwks.headers["content-type"] == "application/jwk-set+json"
    [key] = jwks.json()["keys"]
    assert list(key) == ["use", "kty", "kid", "alg", "n", "e"]
    assert (key["use"], key["kty"], key["alg"], key["e"]) == ("sig", "RSA", "RS256", "AQAB")
    # Not among what anonymous users may read.
    assert server.request("GET", "/.well-known/openid-configuration", token=None).status == 401
    assert "/.well-known/openid-configuration" in server.request("GET", "/").json()["paths"]


def test_the_signing_key_is_generated_once_and_kept(tmp_path):
    path = keys.ensure_signing_key(str(tmp_path))
    assert path == str(tmp_path / "sa.key") and oct(os.stat(path).st_mode)[-3:] == "600"
    first = (tmp_path / "sa.key").read_bytes()
    assert keys.ensure_signing_key(str(tmp_path)) == path and (tmp_path / "sa.key").read_bytes() == first


def test_tokens_outlive_a_restart(tmp_path):
    srv = Server(str(tmp_path)).start()
    try:
        create_sa(srv, "survivor")
        token = token_for(srv, "survivor")
    finally:
        srv.stop()
    srv = Server(str(tmp_path)).start()
    try:
        assert whoami_status(srv, token) == 200
    finally:
        srv.stop()


def test_service_account_flags_are_validated(tmp_path):
    def errors(*args: str) -> list[str]:
        opts = ServerRunOptions.parse(["--data-dir", str(tmp_path), *args])
        return opts.complete().validate()

    assert errors() == []
    assert os.path.exists(tmp_path / "pki" / "sa.key")
    assert "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds" in errors(
        "--service-account-max-token-expiration=10m")
    assert 'service-account-issuer "https://a" is already specified' in errors(
        "--service-account-issuer=https://a", "--service-account-issuer=https://a")
    assert any(e.startswith("failed to parse service-account-issuer-key-file: ") for e in errors(
        "--service-account-signing-key-file", str(tmp_path / "nope.key")))


@pytest.fixture(scope="module")
def ec_server(tmp_path_factory):
    """RBAC, an ECDSA signing key, two issuers, own API audiences and a maximum token lifetime."""
    data_dir = tmp_path_factory.mktemp("ec-apiserver")
    key_file = data_dir / "issuer.key"
    key_file.write_bytes(ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    srv = Server(str(data_dir), args=[
        "--authorization-mode=RBAC", "--service-account-signing-key-file", str(key_file),
        "--service-account-key-file", str(key_file), "--service-account-issuer", "https://issuer.example",
        "--service-account-issuer", "https://old.example", "--api-audiences", "api,https://issuer.example",
        "--service-account-max-token-expiration", "2h"]).start()
    yield srv
    srv.stop()


def test_service_account_identity_under_rbac(ec_server):
    create_sa(ec_server, "robot")
    created = token_request(ec_server, "robot", expirationSeconds=3 * 3600)
    assert "requested expiration of 10800 seconds shortened to 7200 seconds" in created.headers.get("warning", "")
    token = created.json()["status"]["token"]
    header, claims = segment(token, 0), segment(token, 1)
    assert header["alg"] == "ES256" and claims["iss"] == "https://issuer.example"
    assert claims["aud"] == ["api", "https://issuer.example"] and claims["exp"] - claims["iat"] == 7200
    denied = ec_server.request("GET", "/api/v1/namespaces/default/configmaps", token=token)
    assert denied.status == 403
    assert denied.json()["message"] == ('configmaps is forbidden: User "system:serviceaccount:default:robot" cannot '
                                        'list resource "configmaps" in API group "" in the namespace "default"')
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "cm-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "sas"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
               "subjects": [{"kind": "Group", "name": "system:serviceaccounts:default"}]}
    rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/default"
    assert ec_server.request("POST", f"{rbac}/roles", role).status == 201
    assert ec_server.request("POST", f"{rbac}/rolebindings", binding).status == 201
    assert wait_for(lambda: whoami_status(ec_server, token) == 200)
    # system:serviceaccounts may read the issuer discovery documents, system:authenticated the API discovery.
    config = ec_server.request("GET", "/.well-known/openid-configuration", token=token).json()
    assert config["issuer"] == "https://issuer.example" and config["id_token_signing_alg_values_supported"] == ["ES256"]
    [key] = ec_server.request("GET", "/openid/v1/jwks", token=token).json()["keys"]
    assert (list(key), key["crv"], key["kid"]) == (["use", "kty", "kid", "crv", "alg", "x", "y"], "P-256",
                                                   header["kid"])
    assert ec_server.request("GET", "/api", token=token).status == 200
    # Tokens of the older issuer are accepted too; other audiences are not.
    key_file = os.path.join(ec_server.data_dir, "issuer.key")
    old = TokenGenerator("https://old.example", keys.load_private_key(key_file))
    assert whoami_status(ec_server, old.generate(claims)) == 200
    assert whoami_status(ec_server, old.generate({**claims, "aud": ["elsewhere"]})) == 401
