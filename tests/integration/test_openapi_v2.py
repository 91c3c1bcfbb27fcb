"""/openapi/v2 against the real server: JSON and protobuf, ETag/304/406, and kubectl's client-side
validation of `kind: List` (which kubectl always does with the v2 document)."""

from __future__ import annotations

import json

import pytest

from conftest import wait_for
from kube_apiserver.endpoints.openapi_v2_proto import encode_document

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


def _crd(plural: str, kind: str, schema: dict[str, object]) -> dict[str, object]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.v2.example.com"},
            "spec": {"group": "v2.example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


def _v2_definitions(server, *names: str) -> dict[str, object]:
    def published() -> dict[str, object] | None:
        doc = server.request("GET", "/openapi/v2").json()
        return doc if all(name in doc["definitions"] for name in names) else None

    return wait_for(published)["definitions"]


def test_crd_preserving_unknown_fields_publishes_only_its_kind(server):
    """builder.go with opts.V2: a root x-kubernetes-preserve-unknown-fields schema is {type: object} plus
    the GVK, nothing else (kubectl would otherwise refuse every field it does not list)."""
    crd = _crd("blobs", "Blob", {"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    assert server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).status == 201
    definitions = _v2_definitions(server, "com.example.v2.v1.Blob")
    assert definitions["com.example.v2.v1.Blob"] == {
        "type": "object", "x-kubernetes-group-version-kind": [{"group": "v2.example.com", "kind": "Blob",
                                                               "version": "v1"}]}
    v3 = server.request("GET", "/openapi/v3/apis/v2.example.com/v1").json()["components"]["schemas"]
    assert v3["com.example.v2.v1.Blob"]["x-kubernetes-preserve-unknown-fields"] is True
    assert set(v3["com.example.v2.v1.Blob"]["properties"]) == {"apiVersion", "kind", "metadata"}
    json_doc = server.request("GET", "/openapi/v2").json()
    proto = server.request("GET", "/openapi/v2", headers={"Accept": PROTO_ACCEPT})
    assert proto.status == 200 and proto.body == encode_document(json_doc)


def test_crd_nested_schemas_are_converted_as_to_structural_openapi_v2(server):
    spec = {"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "string", "nullable": True},
        "b": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
              "properties": {"c": {"type": "string"}}},
        "d": {"type": "array", "x-kubernetes-preserve-unknown-fields": True, "items": {"type": "string"}},
        "e": {"type": "integer", "anyOf": [{"minimum": 1}, {"maximum": -1}]}}}
    crd = _crd("gadgets", "Gadget", {"type": "object", "properties": {"spec": spec}})
    assert server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).status == 201
    published = _v2_definitions(server, "com.example.v2.v1.Gadget")["com.example.v2.v1.Gadget"]
    assert set(published["properties"]) == {"apiVersion", "kind", "metadata", "spec"}
    assert published["properties"]["spec"] == {"type": "object", "required": ["b"], "properties": {
        "a": {}, "b": {"x-kubernetes-preserve-unknown-fields": True},
        "d": {"x-kubernetes-preserve-unknown-fields": True}, "e": {"type": "integer"}}}
