"""/openapi/v2 against the real server: JSON and protobuf, ETag/304/406, and kubectl's client-side
validation of `kind: List` (which kubectl always does with the v2 document)."""

from __future__ import annotations

import json

import pytest

PROTO_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
PROTO_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def config_map(name: str, **extra: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}, **extra}


def write_list(tmp_path, *items: dict[str, object]) -> str:
    path = tmp_path / "list.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)}))
    return str(path)


def test_json_document(server):
    resp = server.request("GET", "/openapi/v2")
    assert resp.status == 200 and resp.headers["content-type"] == "application/json"
    assert resp.headers["vary"] == "Accept" and resp.headers["etag"].startswith('"')
    doc = resp.json()
    assert doc["swagger"] == "2.0" and doc["info"]["title"] == "Kubernetes"
    config_map_def = doc["definitions"]["io.k8s.api.core.v1.ConfigMap"]
    assert config_map_def["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "ConfigMap",
                                                                  "version": "v1"}]
    post = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["post"]
    assert post["parameters"][0]["schema"] == {"$ref": "#/definitions/io.k8s.api.core.v1.ConfigMap"}
    assert "/openapi/v2" in server.request("GET", "/").json()["paths"]


def test_protobuf_document_shares_the_etag(server):
    json_resp = server.request("GET", "/openapi/v2", headers={"Accept": "application/json"})
    proto = server.request("GET", "/openapi/v2", headers={"Accept": PROTO_ACCEPT})
    assert proto.status == 200 and proto.headers["content-type"] == PROTO_TYPE
    assert proto.body.startswith(b"\x0a\x032.0")  # Document.swagger = "2.0"
    assert proto.headers["etag"] == json_resp.headers["etag"]


def test_not_modified_and_not_acceptable(server):
    etag = server.request("GET", "/openapi/v2").headers["etag"]
    cached = server.request("GET", "/openapi/v2", headers={"Accept": PROTO_ACCEPT, "If-None-Match": etag})
    assert cached.status == 304 and cached.body == b"" and cached.headers["etag"] == etag
    assert server.request("GET", "/openapi/v2", headers={"If-None-Match": '"stale"'}).status == 200
    refused = server.request("GET", "/openapi/v2", headers={"Accept": "text/html"})
    assert refused.status == 406 and refused.headers["vary"] == "Accept"


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_creates_a_list(server, tmp_path):
    manifest = write_list(tmp_path, config_map("v2-list-a"), config_map("v2-list-b"))
    proc = server.kubectl("create", "-f", manifest)
    assert "configmap/v2-list-a created" in proc.stdout and "configmap/v2-list-b created" in proc.stdout
    assert "error validating" not in proc.stderr


@pytest.mark.usefixtures("kubectl_available")
@pytest.mark.parametrize(("item", "message"), [
    ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "v2-bad", "namee": "x"}},
     'unknown field "namee" in io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'),
    (config_map("v2-bad", data=5), 'invalid type for io.k8s.api.core.v1.ConfigMap.data: got "integer"'),
])
def test_kubectl_rejects_an_invalid_list_client_side(server, tmp_path, item, message):
    proc = server.kubectl("create", "-f", write_list(tmp_path, item), check=False)
    assert proc.returncode != 0
    assert "error validating data" in proc.stderr and message in proc.stderr
    assert server.request("GET", "/api/v1/namespaces/default/configmaps/v2-bad").status == 404
