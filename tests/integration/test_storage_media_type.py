"""--storage-media-type on the embedded SQLite store: a data directory written as JSON (every one before the
flag) is served unchanged by a server writing protobuf, which stores built-in kinds in kube-apiserver's
protobuf envelope and custom resources as JSON."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from conftest import Server

PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.media.example.com"},
    "spec": {
        "group": "media.example.com",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


def configmap(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": name}}


def stored_value(data_dir: str, key: str) -> bytes:
    with sqlite3.connect(f"file:{Path(data_dir) / 'state.db'}?mode=ro", uri=True) as db:
        row = db.execute("SELECT value FROM current WHERE key = ?", (key,)).fetchone()
    assert row is not None, key
    return bytes(row[0])


def wait_served(server: Server, path: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while server.request("GET", path).status != 200:
        assert time.monotonic() < deadline, f"{path} not served"
        time.sleep(0.1)


def test_a_json_data_directory_is_served_and_extended_in_protobuf(tmp_path: Path) -> None:
    data_dir = str(tmp_path)
    first = Server(data_dir).start()
    try:
        assert (
            first.request("POST", "/api/v1/namespaces/default/configmaps", configmap("before")).status == 201
        )
        before = first.request("GET", "/api/v1/namespaces/default/configmaps/before").json()
    finally:
        first.stop()
    assert stored_value(data_dir, "/registry/configmaps/default/before").startswith(b"{")

    second = Server(data_dir, [f"--storage-media-type={PROTOBUF}"]).start()
    try:
        assert second.request("GET", "/api/v1/namespaces/default/configmaps/before").json() == before
        assert (
            second.request("POST", "/api/v1/namespaces/default/configmaps", configmap("after")).status == 201
        )
        assert (
            second.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD).status
            == 201
        )
        wait_served(second, "/apis/media.example.com/v1/namespaces/default/widgets")
        widget = {
            "apiVersion": "media.example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w"},
            "size": 3,
        }
        created = second.request("POST", "/apis/media.example.com/v1/namespaces/default/widgets", widget)
        assert created.status == 201, created.body
        listed = second.request("GET", "/api/v1/namespaces/default/configmaps").json()
        assert {"before", "after"} <= {item["metadata"]["name"] for item in listed["items"]}
    finally:
        second.stop()
    assert stored_value(data_dir, "/registry/configmaps/default/before").startswith(b"{")  # not rewritten
    assert stored_value(data_dir, "/registry/configmaps/default/after").startswith(MAGIC)
    assert stored_value(data_dir, "/registry/media.example.com/widgets/default/w").startswith(b"{")
    crd_value = stored_value(
        data_dir, "/registry/apiextensions.k8s.io/customresourcedefinitions/" + CRD["metadata"]["name"]
    )
    assert crd_value.startswith(MAGIC)
