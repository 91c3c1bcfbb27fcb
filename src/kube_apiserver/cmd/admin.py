"""The bootstrap administrator: a bearer token kept in <data-dir>/admin.token and a kubeconfig using it.

The token authenticates as user `admin` (uid `admin`) in group `system:masters`, which RBAC grants
everything. It is created once (mode 0600) and reused on restart; delete the file to rotate it.
"""

from __future__ import annotations

import base64
import os
import secrets

import yaml

from kube_apiserver.cli.gofile import read_bytes, write_file_atomic
from kube_apiserver.cmd.datadir import credentials_lock

ADMIN_TOKEN_FILE = "admin.token"
ADMIN_USER = "admin"
ADMIN_UID = "admin"
ADMIN_GROUPS = ("system:masters",)
KUBECONFIG_CLUSTER = "kube-apiserver"
KUBECONFIG_CONTEXT = "kube-apiserver"
KUBECONFIG_USER = "admin"


def ensure_admin_credential(data_dir: str) -> str:
    """The admin bearer token, generated on first use and persisted in <data_dir>/admin.token."""
    with credentials_lock(data_dir):
        path = os.path.join(data_dir, ADMIN_TOKEN_FILE)
        if os.path.exists(path):
            token = read_bytes(path).decode().strip()
            if token:
                return token
        token = secrets.token_urlsafe(32)
        write_file_atomic(path, (token + "\n").encode(), 0o600)
        return token


def admin_kubeconfig(server_url: str, ca_file: str, token: str) -> dict[str, object]:
    """A kubeconfig document trusting the CA in `ca_file` (never insecure-skip-tls-verify)."""
    ca_data = base64.b64encode(read_bytes(ca_file)).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": KUBECONFIG_CLUSTER,
                "cluster": {"server": server_url, "certificate-authority-data": ca_data},
            }
        ],
        "users": [{"name": KUBECONFIG_USER, "user": {"token": token}}],
        "contexts": [
            {"name": KUBECONFIG_CONTEXT, "context": {"cluster": KUBECONFIG_CLUSTER, "user": KUBECONFIG_USER}}
        ],
        "current-context": KUBECONFIG_CONTEXT,
        "preferences": {},
    }


def client_url(bind_address: str, port: int) -> str:
    """The address the admin kubeconfig gives: the bind address, loopback when it is every address."""
    host = bind_address
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"https://{host}:{port}"


def write_admin_kubeconfig(path: str, server_url: str, ca_file: str, token: str) -> None:
    """Writes the admin kubeconfig (YAML, mode 0600) to `path`, creating its directory."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
    document = yaml.safe_dump(admin_kubeconfig(server_url, ca_file, token), sort_keys=False)
    write_file_atomic(path, document.encode(), 0o600)
