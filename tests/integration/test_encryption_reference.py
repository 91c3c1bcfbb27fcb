"""Encryption at rest shared with kube-apiserver (issue 14): with the same EncryptionConfiguration on one etcd,
the reference kube-apiserver v1.20.2 reads the secrets (aescbc) and configmaps (aesgcm) this server encrypted,
and this server reads what the reference encrypted. Skipped when the reference binary or etcd is missing."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from test_reference_interop import KUBE_APISERVER, start_reference, stop_reference

from conftest import Server
from etcd import etcd_get

pytestmark = pytest.mark.skipif(
    not KUBE_APISERVER.exists(),
    reason="the reference kube-apiserver (../shared/reference/build.sh) is not installed",
)

CBC_KEY = base64.b64encode(bytes(range(32))).decode()
GCM_KEY = base64.b64encode(bytes(range(32, 48))).decode()
VALUE = base64.b64encode(b"shared-secret").decode()


def write_config(path: Path) -> str:
    config = {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "EncryptionConfiguration",
        "resources": [
            {
                "resources": ["secrets"],
                "providers": [{"aescbc": {"keys": [{"name": "cbc", "secret": CBC_KEY}]}}],
            },
            {
                "resources": ["configmaps"],
                "providers": [{"aesgcm": {"keys": [{"name": "gcm", "secret": GCM_KEY}]}}],
            },
        ],
    }
    path.write_text(json.dumps(config))
    return str(path)


def test_each_server_reads_what_the_other_encrypted(etcd: Any, tmp_path: Path) -> None:
    config = write_config(tmp_path / "enc.json")
    endpoint = etcd.endpoints.split(",")[0]
    ours_args = [
        "--storage-backend=etcd3",
        f"--etcd-servers={etcd.endpoints}",
        f"--encryption-provider-config={config}",
    ]
    ours = Server(str(tmp_path / "ours"), ours_args).start()
    try:
        secret = {"metadata": {"name": "from-ours"}, "data": {"k": VALUE}}
        assert ours.request("POST", "/api/v1/namespaces/default/secrets", secret).status == 201
        configmap = {"metadata": {"name": "from-ours"}, "data": {"k": "plain-text"}}
        assert ours.request("POST", "/api/v1/namespaces/default/configmaps", configmap).status == 201
    finally:
        ours.stop()
    assert etcd_get(endpoint, "/registry/secrets/default/from-ours")[0].startswith(b"k8s:enc:aescbc:v1:cbc:")
    assert etcd_get(endpoint, "/registry/configmaps/default/from-ours")[0].startswith(
        b"k8s:enc:aesgcm:v1:gcm:"
    )

    reference = start_reference(
        tmp_path / "reference", etcd.endpoints, f"--encryption-provider-config={config}"
    )
    try:
        assert reference.get("/api/v1/namespaces/default/secrets/from-ours")["data"] == {"k": VALUE}
        assert reference.get("/api/v1/namespaces/default/configmaps/from-ours")["data"] == {"k": "plain-text"}
        reference.create(
            "/api/v1/namespaces/default/secrets", {"metadata": {"name": "from-ref"}, "data": {"k": VALUE}}
        )
        reference.create(
            "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "from-ref"}, "data": {"k": "x"}}
        )
    finally:
        stop_reference(reference)
    assert etcd_get(endpoint, "/registry/secrets/default/from-ref")[0].startswith(b"k8s:enc:aescbc:v1:cbc:")
    assert etcd_get(endpoint, "/registry/configmaps/default/from-ref")[0].startswith(
        b"k8s:enc:aesgcm:v1:gcm:"
    )

    ours = Server(str(tmp_path / "ours-again"), ours_args).start()
    try:
        got = ours.request("GET", "/api/v1/namespaces/default/secrets/from-ref")
        assert got.status == 200, got.body
        assert got.json()["data"] == {"k": VALUE}
        assert ours.request("GET", "/api/v1/namespaces/default/configmaps/from-ref").json()["data"] == {
            "k": "x"
        }
    finally:
        ours.stop()
