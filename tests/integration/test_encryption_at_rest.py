"""Encryption at rest (--encryption-provider-config): a Secret's stored value (the raw SQLite row, the raw etcd
value) starts with the provider's prefix and holds no plain data; it reads back after a restart; a key rotation
(a new first key, `kubectl get secrets -A -o json | kubectl replace -f -`, the old key removed) keeps every
secret readable; a configuration without the key gives kube-apiserver's internal error; a bad file stops the
start with one line; with automatic reload an edited file takes effect and a broken one is ignored."""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import Server, wait_for
from etcd import etcd_get

KEY1 = base64.b64encode(b"a" * 32).decode()
KEY2 = base64.b64encode(b"b" * 32).decode()
PLAIN = "c2VjcmV0LXZhbHVl"  # base64 of "secret-value": never in a stored value
RELOADS = "apiserver_encryption_config_controller_automatic_reloads_total{"


def write_config(path: Path, *providers: dict[str, Any], resources: tuple[str, ...] = ("secrets",)) -> str:
    config = {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "EncryptionConfiguration",
        "resources": [{"resources": list(resources), "providers": list(providers)}],
    }
    path.write_text(json.dumps(config))
    return str(path)


def aescbc(*names_and_secrets: tuple[str, str]) -> dict[str, Any]:
    return {"aescbc": {"keys": [{"name": n, "secret": s} for n, s in names_and_secrets]}}


def aesgcm(name: str, secret: str) -> dict[str, Any]:
    return {"aesgcm": {"keys": [{"name": name, "secret": secret}]}}


def raw_sqlite(data_dir: str, key: str) -> bytes:
    with sqlite3.connect(f"file:{Path(data_dir) / 'state.db'}?mode=ro", uri=True) as db:
        row = db.execute("SELECT value FROM current WHERE key = ?", (key,)).fetchone()
    assert row is not None, key
    return bytes(row[0])


def create_secret(srv: Server, namespace: str, name: str) -> None:
    body = {"metadata": {"name": name}, "data": {"k": PLAIN}}
    response = srv.request("POST", f"/api/v1/namespaces/{namespace}/secrets", body)
    assert response.status == 201, response.body


def read_secret(srv: Server, namespace: str, name: str) -> Any:
    return srv.request("GET", f"/api/v1/namespaces/{namespace}/secrets/{name}")


def test_secret_encrypted_in_sqlite_and_read_after_restart(tmp_path: Path) -> None:
    data_dir = str(tmp_path / "data")
    config = write_config(tmp_path / "enc.yaml", aescbc(("key1", KEY1)))
    srv = Server(data_dir, [f"--encryption-provider-config={config}"]).start()
    try:
        create_secret(srv, "default", "one")
        srv.request(
            "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "cm"}, "data": {"k": "v"}}
        )
        stored = raw_sqlite(data_dir, "/registry/secrets/default/one")
        assert stored.startswith(b"k8s:enc:aescbc:v1:key1:")
        assert PLAIN.encode() not in stored and b"secret-value" not in stored and b'"one"' not in stored
        assert raw_sqlite(data_dir, "/registry/configmaps/default/cm").startswith(
            b"{"
        )  # only secrets configured
        assert read_secret(srv, "default", "one").json()["data"] == {"k": PLAIN}
        metrics = srv.request("GET", "/metrics").body.decode()
        assert (
            'apiserver_storage_transformation_operations_total{resource="secrets",status="OK",'
            'transformation_type="to_storage",transformer_prefix="k8s:enc:aescbc:v1:"}'
        ) in metrics
        assert "apiserver_storage_transformation_duration_seconds_bucket{" in metrics
    finally:
        srv.stop()
    srv = Server(data_dir, [f"--encryption-provider-config={config}"]).start()
    try:
        assert read_secret(srv, "default", "one").json()["data"] == {"k": PLAIN}
    finally:
        srv.stop()
    # Without the key (another provider only): kube-apiserver's internal error, never the stored bytes.
    other = write_config(tmp_path / "other.yaml", {"secretbox": {"keys": [{"name": "k", "secret": KEY2}]}})
    srv = Server(data_dir, [f"--encryption-provider-config={other}"]).start()
    try:
        response = read_secret(srv, "default", "one")
        assert response.status == 500
        status = response.json()
        assert (status["reason"], status["message"]) == (
            "InternalError",
            "Internal error occurred: no matching prefix found",
        )
        assert status["details"]["causes"] == [{"message": "no matching prefix found"}]
    finally:
        srv.stop()


def stored_prefixes(data_dir: str, keys: list[str]) -> set[bytes]:
    return {raw_sqlite(data_dir, key)[: len("k8s:enc:aescbc:v1:key1:")] for key in keys}


def test_key_rotation_with_kubectl_replace_and_automatic_reload(
    tmp_path: Path, kubectl_available: None
) -> None:
    data_dir = str(tmp_path / "data")
    config_path = tmp_path / "enc.yaml"
    config = write_config(config_path, aescbc(("key1", KEY1)))
    args = [f"--encryption-provider-config={config}", "--encryption-provider-config-automatic-reload"]
    srv = Server(data_dir, args).start()
    try:
        srv.request("POST", "/api/v1/namespaces", {"metadata": {"name": "rotate"}})
        keys = []
        for namespace, name in (("default", "a"), ("rotate", "b"), ("rotate", "c")):
            create_secret(srv, namespace, name)
            keys.append(f"/registry/secrets/{namespace}/{name}")
        assert stored_prefixes(data_dir, keys) == {b"k8s:enc:aescbc:v1:key1:"}

        # 1. the new key first, the old one still there to read: new writes use key2
        write_config(config_path, aescbc(("key2", KEY2), ("key1", KEY1)))
        probe = iter(range(1000))

        def writes_with_key2() -> bool:
            name = f"probe{next(probe)}"
            create_secret(srv, "default", name)
            return raw_sqlite(data_dir, f"/registry/secrets/default/{name}").startswith(
                b"k8s:enc:aescbc:v1:key2:"
            )

        assert wait_for(writes_with_key2, timeout=30, interval=0.3)
        assert stored_prefixes(data_dir, keys) == {b"k8s:enc:aescbc:v1:key1:"}  # nothing rewritten by itself

        # 2. rewrite every secret: unchanged objects are written again, with the first key
        listed = srv.kubectl("get", "secrets", "-A", "-o", "json").stdout
        srv.kubectl("replace", "-f", "-", input_text=listed)
        assert stored_prefixes(data_dir, keys) == {b"k8s:enc:aescbc:v1:key2:"}

        # 3. a broken file is not loaded: the configuration in force stays
        config_path.write_text("kind: [")
        time.sleep(2.5)  # two polls of the file: neither may drop key2
        create_secret(srv, "default", "after-broken")
        assert raw_sqlite(data_dir, "/registry/secrets/default/after-broken").startswith(
            b"k8s:enc:aescbc:v1:key2:"
        )

        # 4. the old key removed: everything still reads
        write_config(config_path, aesgcm("key3", KEY1), aescbc(("key2", KEY2)))

        def writes_with_key3() -> bool:
            name = f"probe{next(probe)}"
            create_secret(srv, "default", name)
            return raw_sqlite(data_dir, f"/registry/secrets/default/{name}").startswith(
                b"k8s:enc:aesgcm:v1:key3:"
            )

        assert wait_for(writes_with_key3, timeout=30, interval=0.3)
        metrics = srv.request("GET", "/metrics").body.decode()
        reloads = [line for line in metrics.splitlines() if line.startswith(RELOADS)]
        assert any('status="success"} 2' in line for line in reloads), reloads
        assert any('status="failure"} 1' in line for line in reloads), reloads
        info = config_path.read_bytes()
        assert f'hash="sha256:{hashlib.sha256(info).hexdigest()}"}} 1' in metrics
        for key in keys:
            namespace, name = key.split("/")[-2:]
            assert read_secret(srv, namespace, name).json()["data"] == {"k": PLAIN}
        names = srv.kubectl("get", "secrets", "-A", "-o", "name").stdout.split()
        assert {"secret/a", "secret/b", "secret/c"} <= set(names)
    finally:
        srv.stop()


def test_a_bad_config_stops_the_start_with_one_line(tmp_path: Path) -> None:
    short = base64.b64encode(b"short").decode()
    config = write_config(tmp_path / "bad.yaml", aescbc(("key1", short)))
    with pytest.raises(SystemExit) as caught:
        Server(str(tmp_path / "data"), [f"--encryption-provider-config={config}"]).start()
    assert str(caught.value) == (
        'Error: error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": '
        "secret is not of the expected length, got 5, expected one of [16 24 32]"
    )


def test_reload_flag_needs_the_config_flag() -> None:
    from kube_apiserver.cmd.options import ServerRunOptions

    errors = ServerRunOptions.parse(["--encryption-provider-config-automatic-reload"]).complete().validate()
    assert (
        "--encryption-provider-config-automatic-reload must be set with --encryption-provider-config"
        in errors
    )


def test_etcd_raw_value_is_encrypted(etcd: Any, tmp_path: Path) -> None:
    config = write_config(tmp_path / "enc.yaml", aesgcm("key1", KEY1), resources=("secrets", "*.apps"))
    args = [
        "--storage-backend=etcd3",
        f"--etcd-servers={etcd.endpoints}",
        f"--encryption-provider-config={config}",
    ]
    srv = Server(str(tmp_path / "data"), args).start()
    try:
        create_secret(srv, "default", "in-etcd")
        stored, _ = etcd_get(etcd.endpoints.split(",")[0], "/registry/secrets/default/in-etcd")
        assert stored.startswith(b"k8s:enc:aesgcm:v1:key1:") and PLAIN.encode() not in stored
        assert read_secret(srv, "default", "in-etcd").json()["data"] == {"k": PLAIN}
    finally:
        srv.stop()


def test_kms_v2_plugin_over_a_unix_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kms_plugin import KMSPlugin
    from kube_apiserver.storage.value import kmsv2

    monkeypatch.setattr(kmsv2, "POSITIVE_INTERVAL", 0.2)  # the status probe: every minute upstream
    monkeypatch.setattr(kmsv2, "HEALTHZ_POSITIVE_TTL", 0.1)  # /healthz/kms-providers: a fresh probe each time
    data_dir = str(tmp_path / "data")
    with KMSPlugin(str(tmp_path / "kms.sock")) as plugin:
        kms = {"kms": {"apiVersion": "v2", "name": "testkms", "endpoint": plugin.endpoint, "timeout": "5s"}}
        config = write_config(tmp_path / "enc.yaml", kms, {"identity": {}})
        srv = Server(data_dir, [f"--encryption-provider-config={config}"]).start()
        try:
            for name in ("k1", "k2"):
                create_secret(srv, "default", name)
            stored = raw_sqlite(data_dir, "/registry/secrets/default/k1")
            assert stored.startswith(b"k8s:enc:kms:v2:testkms:") and PLAIN.encode() not in stored
            envelope = kmsv2.EncryptedObject.decode(stored[len(b"k8s:enc:kms:v2:testkms:") :])
            assert (envelope.key_id, envelope.source_type) == ("key-1", kmsv2.HKDF_SHA256_XNONCE_AES_GCM_SEED)
            assert plugin.calls["Encrypt"] == 1  # one DEK for every write while the key ID stays
            assert read_secret(srv, "default", "k1").json()["data"] == {"k": PLAIN}

            # the plugin's key rotates: the probe sees the new key ID, new writes get a new DEK under it
            plugin.key_id = "key-2"

            def new_key_id() -> bool:
                create_secret(srv, "default", f"probe{plugin.calls['Status']}-{time.monotonic_ns()}")
                listed = srv.request("GET", "/api/v1/namespaces/default/secrets").json()["items"]
                newest = max(listed, key=lambda s: int(s["metadata"]["resourceVersion"]))["metadata"]["name"]
                value = raw_sqlite(data_dir, f"/registry/secrets/default/{newest}")
                return (
                    kmsv2.EncryptedObject.decode(value[len(b"k8s:enc:kms:v2:testkms:") :]).key_id == "key-2"
                )

            assert wait_for(new_key_id, timeout=30, interval=0.3)
            # a value under the old key ID is stale: the same object written again moves to the new one
            current = read_secret(srv, "default", "k1").json()
            assert srv.request("PUT", "/api/v1/namespaces/default/secrets/k1", current).status == 200
            rewritten = raw_sqlite(data_dir, "/registry/secrets/default/k1")[
                len(b"k8s:enc:kms:v2:testkms:") :
            ]
            assert kmsv2.EncryptedObject.decode(rewritten).key_id == "key-2"

            # the plugin's health in /healthz and /readyz (kms-providers), not in /livez
            assert srv.request("GET", "/readyz/kms-providers").status == 200
            assert "[+]kms-providers ok" in srv.request("GET", "/healthz?verbose").body.decode()
            assert "kms-providers" not in srv.request("GET", "/livez?verbose").body.decode()
            plugin.healthz = "sick"
            assert wait_for(lambda: srv.request("GET", "/healthz/kms-providers").status == 500, timeout=10)
            assert "[-]kms-providers failed" in srv.request("GET", "/healthz?verbose").body.decode()
            plugin.healthz = "ok"
            assert wait_for(lambda: srv.request("GET", "/healthz/kms-providers").status == 200, timeout=10)
        finally:
            srv.stop()
        assert plugin.calls["Decrypt"] == 0  # the server's own DEKs were cached as it wrote with them
        srv = Server(
            data_dir, [f"--encryption-provider-config={config}"]
        ).start()  # a new server: none cached
        try:
            assert read_secret(srv, "default", "k2").json()["data"] == {"k": PLAIN}
            asked = plugin.calls["Decrypt"]
            assert 1 <= asked <= 2  # each of the two DEKs stored (key-1's, key-2's) is decrypted at most once
            for _ in range(3):
                assert read_secret(srv, "default", "k1").json()["data"] == {"k": PLAIN}
                assert read_secret(srv, "default", "k2").json()["data"] == {"k": PLAIN}
            assert plugin.calls["Decrypt"] == 2
        finally:
            srv.stop()
