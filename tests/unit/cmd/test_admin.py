"""The bootstrap admin token and kubeconfig."""

from __future__ import annotations

import base64
import os
import stat

import yaml

from kube_apiserver.cmd import admin
from kube_apiserver.server import certs


def test_token_is_created_once_and_reused(tmp_path):
    token = admin.ensure_admin_credential(str(tmp_path / "data"))
    path = tmp_path / "data" / "admin.token"
    assert len(token) >= 32
    assert path.read_text().strip() == token
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert admin.ensure_admin_credential(str(tmp_path / "data")) == token


def test_empty_token_file_is_replaced(tmp_path):
    (tmp_path / "admin.token").write_text("\n")
    assert admin.ensure_admin_credential(str(tmp_path))


def test_kubeconfig(tmp_path):
    ca_file = certs.ensure_self_signed_serving_certs(str(tmp_path / "pki"), [], []).ca_file
    path = tmp_path / "kube" / "admin.kubeconfig"
    admin.write_admin_kubeconfig(str(path), "https://127.0.0.1:6443", ca_file, "secret-token")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    config = yaml.safe_load(path.read_text())
    assert config["current-context"] == "kube-apiserver"
    (cluster,) = config["clusters"]
    assert cluster["name"] == "kube-apiserver"
    assert cluster["cluster"]["server"] == "https://127.0.0.1:6443"
    assert base64.b64decode(cluster["cluster"]["certificate-authority-data"]) == open(ca_file, "rb").read()
    assert "insecure-skip-tls-verify" not in cluster["cluster"]
    assert config["users"] == [{"name": "admin", "user": {"token": "secret-token"}}]
    assert config["contexts"] == [
        {"name": "kube-apiserver", "context": {"cluster": "kube-apiserver", "user": "admin"}}
    ]
