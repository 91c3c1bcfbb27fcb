"""Stored bytes shared with kube-apiserver (issue 10, item 2): the reference kube-apiserver v1.20.2
(../shared/reference) on a real etcd. What it writes (protobuf, its default) is read by this server's storage
codec as it serves it, under the keys this server uses; what this codec writes (protobuf and JSON) under those
keys is served by it. The kinds both versions have: namespaces, configmaps, secrets, services, deployments, RBAC.

Skipped when the reference binary or etcd is not installed (CI machines may have neither)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from etcd import etcd_get, etcd_put
from kube_apiserver.storage.codec import JSON, PROTOBUF, YAML, StorageCodec, decode_value

REFERENCE = Path(os.environ.get("KUBE_REF_BIN", os.path.expanduser("~/.cache/kube-reference/bin")))
KUBE_APISERVER = REFERENCE / "kube-apiserver"
TOKEN = "interoptoken"
TESTS = Path(__file__).resolve().parents[1]
STORED = json.loads((TESTS / "data" / "storage" / "stored-objects.json").read_text())
MAGIC = b"k8s\x00"
STARTUP_TIMEOUT = 120.0

pytestmark = pytest.mark.skipif(
    not KUBE_APISERVER.exists() or shutil.which("etcd") is None,
    reason="the reference kube-apiserver (../shared/reference/build.sh) or etcd is not installed",
)


# ---- the reference kube-apiserver ----


@dataclass
class Reference:
    url: str
    process: subprocess.Popen
    log_path: str

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, data = self.raw(method, path, body)
        return status, json.loads(data or b"null")

    def raw(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.url}{path}",
            data,
            method=method,
            headers={
                "Authorization": f"Bearer {TOKEN}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30, context=ctx) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def create(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        status, body = self.request("POST", path, obj)
        assert status == 201, body
        return body

    def get(self, path: str) -> dict[str, Any]:
        status, body = self.request("GET", path)
        assert status == 200, body
        return body

    def log_tail(self) -> str:
        with open(self.log_path, "rb") as f:
            return f.read()[-3000:].decode(errors="replace")


def _service_account_keys(directory: Path) -> tuple[str, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private, public = directory / "sa.key", directory / "sa.pub"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return str(private), str(public)


def start_reference(directory: Path, etcd_servers: str, *extra_args: str) -> Reference:
    """kube-apiserver v1.20.2 as ../shared/reference/refcluster.sh starts it, on a free port and our etcd."""
    from etcd import free_port

    directory.mkdir(parents=True, exist_ok=True)
    private, public = _service_account_keys(directory)
    tokens = directory / "tokens.csv"
    tokens.write_text(f"{TOKEN},admin,admin,system:masters\n")
    port = free_port()
    log_path = str(directory / "apiserver.log")
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                str(KUBE_APISERVER),
                f"--etcd-servers={etcd_servers}",
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                f"--cert-dir={directory / 'certs'}",
                f"--token-auth-file={tokens}",
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={public}",
                f"--service-account-signing-key-file={private}",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--insecure-port=0",
                # Its bootstrap writes flowcontrol v1beta1 and discovery.k8s.io/v1beta1 objects, versions v1.34 no
                # longer reads (upgrades go one minor version at a time, migrating storage): kept out of the etcd
                # this server shares.
                "--feature-gates=APIPriorityAndFairness=false",
                "--runtime-config=flowcontrol.apiserver.k8s.io/v1beta1=false,discovery.k8s.io/v1beta1=false",
                *extra_args,
            ],
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    reference = Reference(f"https://127.0.0.1:{port}", process, log_path)
    try:
        _wait_ready(reference)
    except BaseException:
        stop_reference(reference)  # never left running when the test fails
        raise
    return reference


def _wait_ready(reference: Reference) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        assert reference.process.poll() is None, f"kube-apiserver exited: {reference.log_tail()}"
        assert time.monotonic() < deadline, f"kube-apiserver not ready: {reference.log_tail()}"
        try:
            if reference.raw("GET", "/readyz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)


def stop_reference(reference: Reference) -> None:
    reference.process.terminate()
    try:
        reference.process.wait(20)
    except subprocess.TimeoutExpired:
        reference.process.kill()
        reference.process.wait(10)


@pytest.fixture(scope="module")
def reference(etcd: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reference]:
    ref = start_reference(tmp_path_factory.mktemp("reference"), etcd.endpoints)
    yield ref
    stop_reference(ref)


# ---- comparing ----


def go_zero(value: Any) -> bool:
    return value in (None, "", 0, False, [], {})


def differences(
    expected: Any, actual: Any, path: str = "", lost_ok: frozenset[str] = frozenset()
) -> list[str]:
    """What differs beyond Go's zero values (a zero field left out, or written as {} or null) and the fields
    in `lost_ok` (paths one version does not have)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key in expected.keys() | actual.keys():
            child = f"{path}.{key}"
            if key not in actual:
                out += [] if go_zero(expected[key]) or child in lost_ok else [f"{child} lost"]
            elif key not in expected:
                out += [] if _only_zeros(actual[key]) else [f"{child} added: {actual[key]!r}"]
            else:
                out += differences(expected[key], actual[key], child, lost_ok)
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [
            d for a, b in zip(expected, actual, strict=True) for d in differences(a, b, f"{path}[]", lost_ok)
        ]
    return [] if expected == actual else [f"{path}: {expected!r} -> {actual!r}"]


def _only_zeros(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_only_zeros(v) for v in value.values())
    return go_zero(value)


# ---- kube-apiserver writes, this codec reads ----

NS = "interop"
# (path to create at, key it is stored under, object)
WRITTEN_BY_REFERENCE: list[tuple[str, str, dict[str, Any]]] = [
    (
        "/api/v1/namespaces",
        f"/registry/namespaces/{NS}",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": {"team": "a"}}},
    ),
    (
        f"/api/v1/namespaces/{NS}/configmaps",
        f"/registry/configmaps/{NS}/settings",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "annotations": {"a": "b"}},
            "data": {"LOG_LEVEL": "debug", "empty": ""},
            "binaryData": {"blob": "AAEC"},
        },
    ),
    (
        f"/api/v1/namespaces/{NS}/secrets",
        f"/registry/secrets/{NS}/token",
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "token"},
            "type": "Opaque",
            "data": {"password": "c2VjcmV0"},
            "stringData": {"user": "admin"},
        },
    ),
    (
        f"/api/v1/namespaces/{NS}/services",
        f"/registry/services/specs/{NS}/web",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web"},
            "spec": {
                "selector": {"app": "web"},
                "ports": [{"name": "http", "port": 80, "targetPort": "http"}],
            },
        },
    ),
    (
        f"/apis/apps/v1/namespaces/{NS}/deployments",
        f"/registry/deployments/{NS}/web",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "web",
                                "image": "nginx:1.25",
                                "ports": [{"containerPort": 8080}],
                                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                            }
                        ]
                    },
                },
            },
        },
    ),
    (
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles",
        f"/registry/roles/{NS}/reader",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}],
        },
    ),
    (
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings",
        f"/registry/rolebindings/{NS}/reader",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "jane"}],
        },
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        "/registry/clusterroles/interop-reader",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "interop-reader"},
            "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}],
        },
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        "/registry/clusterrolebindings/interop-reader",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "interop-reader"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "interop-reader",
            },
            "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "devs"}],
        },
    ),
]


def test_what_kube_apiserver_stores_is_read_as_it_serves_it(reference: Reference, etcd: Any) -> None:
    codec = StorageCodec(JSON)  # the media type written does not matter to reading
    for path, key, obj in WRITTEN_BY_REFERENCE:
        created = reference.create(path, obj)
        served = reference.get(f"{path}/{created['metadata']['name']}")
        value, revision = etcd_get(etcd.client_url(0), key)  # the key this server uses for the kind
        assert value.startswith(MAGIC), key  # protobuf: kube-apiserver's default for built-in kinds
        decoded = codec.decode(value, revision)
        assert (decoded["apiVersion"], decoded["kind"]) == (served["apiVersion"], served["kind"])
        assert decoded["metadata"] == {k: v for k, v in served["metadata"].items() if k != "selfLink"}, key
        assert differences(served, decoded) == [], key


def test_what_kube_apiserver_stores_as_yaml_is_read(tmp_path: Path) -> None:
    """--storage-media-type=application/yaml on kube-apiserver: its YAML values (sigs.k8s.io/yaml, YAML 1.1
    quoting of strings that would read as something else) are read as it serves them."""
    from etcd import EtcdCluster

    with EtcdCluster(str(tmp_path / "etcd")) as etcd:
        ref = start_reference(tmp_path / "reference", etcd.endpoints, "--storage-media-type=application/yaml")
        try:
            ref.create(
                "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
            )
            values = (
                "0755",
                "yes",
                "off",
                "1e3",
                "1.5",
                "null",
                "~",
                "2024-01-01",
                "0x1F",
                "",
                "a: b",
                "- x",
            )
            tricky = {f"k{i}": value for i, value in enumerate(values)}
            path = f"/api/v1/namespaces/{NS}/configmaps"
            cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "yaml"}, "data": tricky}
            ref.create(path, cm)
            deployment_path, key, deployment = WRITTEN_BY_REFERENCE[4]
            ref.create(deployment_path, deployment)
            for served_path, stored_key in (
                (f"{path}/yaml", f"/registry/configmaps/{NS}/yaml"),
                (f"{deployment_path}/web", key),
            ):
                served = ref.get(served_path)
                value, revision = etcd_get(etcd.client_url(0), stored_key)
                assert value.startswith(b"apiVersion: "), value[:40]
                decoded = StorageCodec(JSON).decode(value, revision)
                assert decoded["metadata"] == {k: v for k, v in served["metadata"].items() if k != "selfLink"}
                assert differences(served, decoded) == [], stored_key
                assert decoded.get("data", tricky) == tricky
        finally:
            stop_reference(ref)


# ---- this codec writes, kube-apiserver serves ----

# (resource path, key) of this server's stored objects (tests/data/storage/stored-objects.json) to write.
WRITTEN_HERE = [
    ("/api/v1/namespaces/{ns}", "/registry/namespaces/{ns}", "/registry/namespaces/corpus"),
    (
        "/api/v1/namespaces/{ns}/configmaps/web-config",
        "/registry/configmaps/{ns}/web-config",
        "/registry/configmaps/corpus/web-config",
    ),
    (
        "/api/v1/namespaces/{ns}/secrets/registry-credentials",
        "/registry/secrets/{ns}/registry-credentials",
        "/registry/secrets/corpus/registry-credentials",
    ),
    (
        "/api/v1/namespaces/{ns}/services/web",
        "/registry/services/specs/{ns}/web",
        "/registry/services/specs/corpus/web",
    ),
    (
        "/apis/apps/v1/namespaces/{ns}/deployments/web",
        "/registry/deployments/{ns}/web",
        "/registry/deployments/corpus/web",
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles/config-editor",
        "/registry/roles/{ns}/config-editor",
        "/registry/roles/corpus/config-editor",
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings/config-editor",
        "/registry/rolebindings/{ns}/config-editor",
        "/registry/rolebindings/corpus/config-editor",
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/{ns}-reader",
        "/registry/clusterroles/{ns}-reader",
        "/registry/clusterroles/corpus-node-reader",
    ),
    (
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{ns}-reader",
        "/registry/clusterrolebindings/{ns}-reader",
        "/registry/clusterrolebindings/corpus-node-reader",
    ),
]
# Fields of these objects that v1.34 has and v1.20 does not know: the reference drops them when it reads.
UNKNOWN_TO_V1_20 = frozenset({".spec.internalTrafficPolicy"})


def _renamed(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    """A stored object moved to `namespace` (a cluster-scoped one renamed after it)."""
    obj = copy.deepcopy(obj)
    meta = obj["metadata"]
    if obj["kind"] == "Namespace":
        meta["name"] = namespace
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = namespace
        obj["spec"] = {"finalizers": ["kubernetes"]}
    elif "namespace" in meta:
        meta["namespace"] = namespace
    else:
        meta["name"] = f"{namespace}-reader"
        if obj["kind"] == "ClusterRoleBinding":
            obj["roleRef"]["name"] = f"{namespace}-reader"
    if obj["kind"] == "Service":  # an address of its own in the reference's range
        ip = {"json": "10.0.0.201", "pb": "10.0.0.202", "yaml": "10.0.0.203"}[namespace.rsplit("-", 1)[1]]
        obj["spec"]["clusterIP"], obj["spec"]["clusterIPs"] = ip, [ip]
    return obj


@pytest.mark.parametrize("media_type", [PROTOBUF, JSON, YAML])
def test_what_this_codec_stores_is_served_by_kube_apiserver(
    reference: Reference, etcd: Any, media_type: str
) -> None:
    namespace = "written-" + {PROTOBUF: "pb", JSON: "json", YAML: "yaml"}[media_type]
    codec = StorageCodec(media_type)
    for path, key, source in WRITTEN_HERE:
        obj = _renamed(STORED[source], namespace)
        value = codec.encode(obj)
        assert value.startswith(MAGIC) == (media_type == PROTOBUF)
        etcd_put(etcd.client_url(0), key.format(ns=namespace), value)
        served = reference.get(path.format(ns=namespace))
        _, revision = etcd_get(etcd.client_url(0), key.format(ns=namespace))
        assert served["metadata"]["resourceVersion"] == str(revision)
        expected = decode_value(value)
        expected["metadata"]["resourceVersion"] = str(revision)
        assert differences(expected, served, lost_ok=UNKNOWN_TO_V1_20) == [], path
    status, listed = reference.request("GET", f"/api/v1/namespaces/{namespace}/configmaps")
    assert status == 200 and [i["metadata"]["name"] for i in listed["items"]] == ["web-config"]


# ---- both servers on one etcd ----


@pytest.fixture(scope="module")
def ours(reference: Reference, etcd: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """This server with --storage-backend=etcd3 on the reference's etcd, writing protobuf."""
    from conftest import Server

    args = ["--storage-backend=etcd3", f"--etcd-servers={etcd.endpoints}", f"--storage-media-type={PROTOBUF}"]
    server = Server(str(tmp_path_factory.mktemp("ours")), args).start()
    yield server
    server.stop()


def test_each_server_serves_what_the_other_wrote(reference: Reference, ours: Any, etcd: Any) -> None:
    namespace = "shared"
    reference.create(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    )
    reference.create(
        f"/api/v1/namespaces/{namespace}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-reference"}, "data": {"a": "1"}},
    )
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "from-ours"},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "x", "image": "x"}]},
            },
        },
    }
    created = ours.request("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", deployment)
    assert created.status == 201, created.body
    value, _ = etcd_get(etcd.client_url(0), f"/registry/deployments/{namespace}/from-ours")
    assert value.startswith(MAGIC)  # --storage-media-type

    # ours reads the reference's configmap (the watch cache catches up with etcd's revision)
    got = ours.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/from-reference")
    assert got.status == 200, got.body
    served = reference.get(f"/api/v1/namespaces/{namespace}/configmaps/from-reference")
    assert got.json()["metadata"]["resourceVersion"] == served["metadata"]["resourceVersion"]
    assert differences(served, got.json()) == []
    listed = ours.request("GET", f"/api/v1/namespaces/{namespace}/configmaps")
    assert "from-reference" in [item["metadata"]["name"] for item in listed.json()["items"]]

    # the reference reads ours
    theirs = reference.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/from-ours")
    mine = created.json()
    assert theirs["metadata"]["resourceVersion"] == mine["metadata"]["resourceVersion"]
    assert differences(mine, theirs, lost_ok=UNKNOWN_TO_V1_20) == []

    # an update through either is read by the other
    theirs["spec"]["replicas"] = 3
    status, body = reference.request(
        "PUT", f"/apis/apps/v1/namespaces/{namespace}/deployments/from-ours", theirs
    )
    assert status == 200, body
    got = ours.request("GET", f"/apis/apps/v1/namespaces/{namespace}/deployments/from-ours")
    assert got.json()["spec"]["replicas"] == 3
    assert got.json()["metadata"]["resourceVersion"] == body["metadata"]["resourceVersion"]
    configmap = ours.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/from-reference").json()
    configmap["data"]["a"] = "2"
    updated = ours.request("PUT", f"/api/v1/namespaces/{namespace}/configmaps/from-reference", configmap)
    assert updated.status == 200, updated.body
    served = reference.get(f"/api/v1/namespaces/{namespace}/configmaps/from-reference")
    assert served["data"] == {"a": "2"}
    assert served["metadata"]["resourceVersion"] == updated.json()["metadata"]["resourceVersion"]


def _names(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    """One of WRITTEN_BY_REFERENCE's objects for `namespace`: cluster-scoped ones named after it."""
    obj = copy.deepcopy(obj)
    if obj["kind"] in ("ClusterRole", "ClusterRoleBinding"):
        obj["metadata"]["name"] = f"{namespace}-reader"
        if obj["kind"] == "ClusterRoleBinding":
            obj["roleRef"]["name"] = f"{namespace}-reader"
    elif obj["kind"] == "Namespace":
        obj["metadata"]["name"] = namespace
    return obj


def _collection(path: str, namespace: str) -> str:
    return path.replace(f"/namespaces/{NS}/", f"/namespaces/{namespace}/")


def test_every_shared_kind_written_through_one_server_is_served_by_the_other(
    reference: Reference, ours: Any
) -> None:
    """Namespaces, configmaps, secrets, services, deployments and RBAC: created through the reference and read
    through this server, then created through this server and read through the reference."""
    for writer, namespace in (("reference", "by-reference"), ("ours", "by-ours")):
        for path, _key, source in WRITTEN_BY_REFERENCE:
            obj = _names(source, namespace)
            collection = _collection(path, namespace)
            if writer == "reference":
                created = reference.create(collection, obj)
            else:
                response = ours.request("POST", collection, obj)
                assert response.status == 201, response.body
                created = response.json()
            item = f"{collection}/{created['metadata']['name']}"
            from_reference = reference.get(item)
            response = ours.request("GET", item)
            assert response.status == 200, (item, response.body)
            from_ours = response.json()
            assert (
                from_ours["metadata"]["resourceVersion"] == from_reference["metadata"]["resourceVersion"]
            ), item
            assert from_ours["metadata"]["uid"] == from_reference["metadata"]["uid"], item
            if writer == "reference":
                assert differences(from_reference, from_ours) == [], item
            else:
                assert differences(from_ours, from_reference, lost_ok=UNKNOWN_TO_V1_20) == [], item
