"""Users and groups for RBAC tests, in one call: `create_user(server, "alice", groups=["dev"])` gives a kubeconfig
(dict and file), raw-HTTP credentials and an official `kubernetes` ApiClient acting as alice.

Two mechanisms, each as kube-apiserver authenticates in production:
- a client certificate (CN=user, O=groups) signed by a client CA the server trusts: start the server with
  `client_ca_args(directory)` among its args (it writes the CA there and returns `--client-ca-file ...`);
- a bearer token the server issues from /debug/testing/users (servers started with --enable-testing-endpoints).
create_user gives whichever the server supports (both when it supports both; the kubeconfig then uses the
certificate). `grant` binds RBAC rules or a cluster role to a user or group and returns once they are in effect."""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import ssl
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import yaml

from .certs import CertificateAuthority, write_pair

CLIENT_CA_CERT = "client-ca.crt"
CLIENT_CA_KEY = "client-ca.key"  # next to the certificate: how create_user finds the CA of --client-ca-file
USERS_PATH = "/debug/testing/users"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


class CredentialsUnavailable(RuntimeError):
    """The server trusts neither a client CA this library can sign with nor tokens from its testing endpoint."""


def client_ca_args(directory: str) -> list[str]:
    """The server args that make it trust the client CA kept in `directory` (created on first use): add them to
    the server's start args, then create_user signs certificates with that CA."""
    load_client_ca(directory)
    return ["--client-ca-file", os.path.join(directory, CLIENT_CA_CERT)]


def load_client_ca(directory: str) -> CertificateAuthority:
    """The client CA kept in `directory`, generated when there is none yet."""
    cert_file, key_file = os.path.join(directory, CLIENT_CA_CERT), os.path.join(directory, CLIENT_CA_KEY)
    if os.path.exists(cert_file) and os.path.exists(key_file):
        return CertificateAuthority.load(cert_file, key_file)
    os.makedirs(directory, exist_ok=True)
    ca = CertificateAuthority.generate("kube-apiserver-testing-client-ca")
    ca.write(cert_file, key_file)
    return ca


def server_url(server: Any) -> str:
    url = getattr(server, "url", "")
    return url or f"https://127.0.0.1:{server.port}"


def _client_ca_of(server: Any) -> CertificateAuthority | None:
    """The CA in the server's `client_ca_dir` (a server class that passes client_ca_args itself says where), or
    the one whose key sits next to the --client-ca-file among its args (as client_ca_args leaves it)."""
    directory = getattr(server, "client_ca_dir", "")
    if directory:
        return load_client_ca(str(directory))
    args = [str(a) for a in getattr(server, "args", None) or []]
    for i, arg in enumerate(args):
        path = ""
        if arg == "--client-ca-file" and i + 1 < len(args):
            path = args[i + 1]
        elif arg.startswith("--client-ca-file="):
            path = arg.split("=", 1)[1]
        if path and os.path.exists(os.path.join(os.path.dirname(path), CLIENT_CA_KEY)):
            return CertificateAuthority.load(path, os.path.join(os.path.dirname(path), CLIENT_CA_KEY))
    return None


@dataclass
class User:
    """A user's credentials against one server: `cert_file`/`key_file` (a client certificate) and/or `token`."""

    name: str
    groups: tuple[str, ...]
    url: str
    ca_file: str
    directory: str
    cert_file: str = ""
    key_file: str = ""
    token: str = ""
    kubeconfig_dict: dict[str, Any] = field(default_factory=dict)
    kubeconfig: str = ""

    @property
    def headers(self) -> dict[str, str]:
        """The Authorization header of the user's token (empty when it has a certificate only)."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def ssl_context(self) -> ssl.SSLContext:
        """Trusting the server's CA, presenting the user's client certificate when it has one."""
        context = ssl.create_default_context(cafile=self.ca_file)
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file)
        return context

    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
        """Raw HTTP as this user: a Response with status, headers, body and .json()."""
        parts = urlsplit(self.url)
        conn = http.client.HTTPSConnection(
            parts.hostname or "127.0.0.1", parts.port or 443, context=self.ssl_context(), timeout=30
        )
        sent = {**self.headers, **(headers or {})}
        if body is not None and not isinstance(body, bytes | str):
            body = json.dumps(body)
            sent.setdefault("Content-Type", "application/json")
        try:
            conn.request(method, path, body=body, headers=sent)
            resp = conn.getresponse()
            return UserResponse(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
        finally:
            conn.close()

    def api_client(self) -> Any:
        """An official `kubernetes.client.ApiClient` acting as this user."""
        from kubernetes import client

        configuration = client.Configuration()
        configuration.host = self.url
        configuration.ssl_ca_cert = self.ca_file
        if self.cert_file:
            configuration.cert_file, configuration.key_file = self.cert_file, self.key_file
        else:
            configuration.api_key = {"authorization": f"Bearer {self.token}"}
        return client.ApiClient(configuration)


@dataclass
class UserResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def create_user(
    server: Any,
    name: str,
    groups: list[str] | tuple[str, ...] = (),
    *,
    uid: str = "",
    directory: str | None = None,
    client_ca: CertificateAuthority | str | None = None,
) -> User:
    """Credentials for `name` in `groups` against `server`: a client certificate signed by `client_ca` (a
    CertificateAuthority or the directory given to client_ca_args; by default the CA next to the server's
    --client-ca-file) and, when the server has testing endpoints, a token. Files go to `directory` (a new
    temporary one by default)."""
    if isinstance(groups, str):
        raise TypeError(f"groups is a list of group names, not the string {groups!r}")
    directory = directory or tempfile.mkdtemp(prefix=f"user-{_safe(name)}-")
    os.makedirs(directory, exist_ok=True)
    ca = load_client_ca(client_ca) if isinstance(client_ca, str) else client_ca or _client_ca_of(server)
    user = User(name, tuple(groups), server_url(server), server.ca_file, directory)
    if ca is not None:
        cert_pem, key_pem = ca.issue(name, tuple(groups), client=True)
        user.cert_file, user.key_file = write_pair(directory, _safe(name), cert_pem, key_pem)
    user.token = _issue_token(server, name, tuple(groups), uid)
    if not user.cert_file and not user.token:
        raise CredentialsUnavailable(
            "the server trusts no client CA known here and issues no testing tokens: start it with "
            "client_ca_args(directory) among its args or with --enable-testing-endpoints"
        )
    user.kubeconfig_dict = _kubeconfig(user)
    user.kubeconfig = os.path.join(directory, "kubeconfig")
    with open(user.kubeconfig, "w") as f:
        yaml.safe_dump(user.kubeconfig_dict, f)
    return user


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64] or "user"


def _issue_token(server: Any, name: str, groups: tuple[str, ...], uid: str) -> str:
    """A token from the server's /debug/testing/users, or "" when it has no testing endpoints (404)."""
    body: dict[str, Any] = {"name": name, "groups": list(groups)}
    if uid:
        body["uid"] = uid
    resp = server.request("POST", USERS_PATH, body)
    if resp.status == 404:
        return ""
    if resp.status != 201:
        raise CredentialsUnavailable(f"the server refused the testing user: {resp.status} {resp.body!r}")
    return str(resp.json()["token"])


def _kubeconfig(user: User) -> dict[str, Any]:
    with open(user.ca_file, "rb") as f:
        ca_data = base64.b64encode(f.read()).decode()
    credentials: dict[str, Any]
    if user.cert_file:
        credentials = {"client-certificate": user.cert_file, "client-key": user.key_file}
    else:
        credentials = {"token": user.token}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": user.name,
        "preferences": {},
        "clusters": [
            {"name": "testing", "cluster": {"server": user.url, "certificate-authority-data": ca_data}}
        ],
        "users": [{"name": user.name, "user": credentials}],
        "contexts": [{"name": user.name, "context": {"cluster": "testing", "user": user.name}}],
    }


def grant(
    server: Any,
    subject: User | str,
    rules: list[dict[str, Any]] | None = None,
    *,
    cluster_role: str = "",
    namespace: str = "",
    group: bool = False,
    name: str = "",
    timeout: float = 30.0,
) -> str:
    """Binds `rules` (a new Role, or ClusterRole without `namespace`) or the existing `cluster_role` to the user
    (or the group, with group=True) and waits until the authorizer applies it. Returns the binding's name."""
    if bool(rules) == bool(cluster_role):
        raise ValueError("grant takes either rules or a cluster_role")
    who = subject.name if isinstance(subject, User) else subject
    name = (
        name
        or f"testing-{'group' if group else 'user'}-{_safe(who).lower().replace('_', '-')}-"
        f"{os.urandom(3).hex()}"
    )
    scope = f"/namespaces/{namespace}" if namespace else ""
    role_kind = "Role" if namespace and rules else "ClusterRole"
    if rules:
        _create(
            server,
            f"{RBAC}{scope}/{role_kind.lower()}s" if namespace else f"{RBAC}/clusterroles",
            {
                "kind": role_kind,
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "metadata": {"name": name},
                "rules": rules,
            },
        )
    binding_kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    ref = {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": role_kind,
        "name": name if rules else cluster_role,
    }
    subj = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group" if group else "User", "name": who}
    _create(
        server,
        f"{RBAC}{scope}/{binding_kind.lower()}s",
        {
            "kind": binding_kind,
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": name},
            "roleRef": ref,
            "subjects": [subj],
        },
    )
    deadline = time.monotonic() + timeout
    granted = rules or _rules_of(server, cluster_role, deadline)
    if granted:
        _wait_allowed(server, who, group, granted[0], namespace, deadline)
    return name


def _create(server: Any, path: str, body: dict[str, Any]) -> None:
    resp = server.request("POST", path, body)
    if resp.status != 201:
        raise RuntimeError(f"POST {path}: {resp.status} {resp.body!r}")


def _rules_of(server: Any, cluster_role: str, deadline: float) -> list[dict[str, Any]]:
    """The ClusterRole's rules. An aggregated one (admin, edit, view) is empty until the aggregation controller
    fills it in, a moment after the server (or a copy of a template) starts: wait for its rules."""
    while True:
        resp = server.request("GET", f"{RBAC}/clusterroles/{cluster_role}")
        if resp.status != 200:
            return []
        role = resp.json()
        rules = list(role.get("rules") or [])
        if rules or not role.get("aggregationRule") or time.monotonic() > deadline:
            return rules
        time.sleep(0.02)


def _wait_allowed(
    server: Any, who: str, group: bool, rule: dict[str, Any], namespace: str, deadline: float
) -> None:
    """Until a SubjectAccessReview of the rule's first verb and resource says allowed: the RBAC authorizer reads
    bindings through informers, so a grant takes effect a moment after it is written."""
    verb = (rule.get("verbs") or ["get"])[0]
    attributes: dict[str, Any]
    if rule.get("nonResourceURLs"):
        attributes = {"nonResourceAttributes": {"verb": verb, "path": rule["nonResourceURLs"][0]}}
    else:
        resource = (rule.get("resources") or ["*"])[0]
        api_group = (rule.get("apiGroups") or [""])[0]
        attributes = {
            "resourceAttributes": {
                "verb": verb,
                "group": api_group,
                "namespace": namespace,
                "resource": resource.split("/")[0],
                "subresource": resource.partition("/")[2],
            }
        }
    # A user is authenticated: system:authenticated is among its groups, as the server adds it.
    spec = (
        {"groups": [who, "system:authenticated"]}
        if group
        else {"user": who, "groups": ["system:authenticated"]}
    )
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {**spec, **attributes},
    }
    while True:
        resp = server.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
        if resp.status == 201 and resp.json().get("status", {}).get("allowed"):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"the grant to {who} did not take effect in time: {resp.body!r}")
        time.sleep(0.02)
