"""Warning headers on every answer, errors included, as kube-apiserver's warning recorder writes them
(deduplicated, truncated past 4 KiB), the deprecation warnings of the v1.34 built-in kinds served by default
(v1 Endpoints and ComponentStatus), and the request's options object in the admission attributes
(CreateOptions, UpdateOptions, DeleteOptions as the handlers decode them)."""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Iterator
from typing import Any

import pytest
from test_admission_webhooks import BEHAVIOURS, Registry, WebhookServer, configmap, scoped

from kube_apiserver.endpoints.handlers.responses import warning_headers
from kube_apiserver.endpoints.http import Request

ENDPOINTS_WARNING = '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"'
COMPONENTSTATUS_WARNING = '299 - "v1 ComponentStatus is deprecated in v1.19+"'


def raw(server: Any, method: str, path: str, body: Any = None,
        content_type: str = "application/json") -> tuple[int, list[str], bytes]:
    """A request whose every Warning header is kept (the fixture's response folds repeated headers)."""
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=30,
                                       context=ssl.create_default_context(cafile=server.ca_file))
    headers = {"Authorization": f"Bearer {server.token}"}
    if body is not None:
        headers["Content-Type"] = content_type
        body = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, resp.msg.get_all("warning") or [], data


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookServer]:
    srv = WebhookServer()
    srv.behaviours.update(BEHAVIOURS)
    yield srv
    srv.stop()


@pytest.fixture
def registry(server: Any, hooks: WebhookServer) -> Iterator[Registry]:
    reg = Registry(server, hooks)
    yield reg
    reg.cleanup()


# ---- warnings ----

def test_errors_carry_the_warnings_gathered_before_them(server, registry):
    ns = registry.namespace()
    registry.configure(True, "warn-then-deny-m", registry.webhook("warn.example.com", "/warn", **scoped(registry, ns)))
    registry.configure(False, "warn-then-deny-v", registry.webhook("deny.example.com", "/deny", **scoped(registry, ns)))
    registry.wait_called("/deny", ns)
    status, warnings, _ = raw(server, "POST", f"/api/v1/namespaces/{ns}/configmaps", configmap("refused"))
    assert status == 403
    assert warnings == ['299 - "careful now"', '299 - "mind the gap"']


def test_decoding_warnings_come_with_a_conflict(server):
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "twice"}, "data": {"a": "b"}}
    assert raw(server, "POST", "/api/v1/namespaces/default/configmaps", body)[0] == 201
    status, warnings, _ = raw(server, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Warn",
                              {**body, "bogus": 1})
    assert status == 409
    assert warnings == ['299 - "unknown field \\"bogus\\""']


def test_deprecated_kinds_warn_on_every_answer(server):
    status, warnings, _ = raw(server, "GET", "/api/v1/namespaces/default/endpoints/nowhere")
    assert (status, warnings) == (404, [ENDPOINTS_WARNING])
    status, warnings, _ = raw(server, "POST", "/api/v1/namespaces/default/endpoints", b"{not json")
    assert (status, warnings) == (400, [ENDPOINTS_WARNING])
    status, warnings, _ = raw(server, "GET", "/api/v1/componentstatuses/nowhere")
    assert (status, warnings) == (500, [COMPONENTSTATUS_WARNING])
    status, warnings, _ = raw(server, "GET", "/api/v1/componentstatuses")
    assert (status, warnings) == (200, [COMPONENTSTATUS_WARNING])
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=30,
                                       context=ssl.create_default_context(cafile=server.ca_file))
    conn.request("GET", "/api/v1/namespaces/default/endpoints?watch=true&timeoutSeconds=1",
                 headers={"Authorization": f"Bearer {server.token}"})
    watch = conn.getresponse()
    assert watch.msg.get_all("warning") == [ENDPOINTS_WARNING]
    watch.read()
    conn.close()


def test_deleting_a_service_does_not_warn_about_its_endpoints(server):
    service = {"metadata": {"name": "quiet"}, "spec": {"ports": [{"port": 80}]}}
    assert raw(server, "POST", "/api/v1/namespaces/default/services", service)[0] == 201
    assert raw(server, "POST", "/api/v1/namespaces/default/endpoints", {"metadata": {"name": "quiet"}})[0] == 201
    status, warnings, _ = raw(server, "DELETE", "/api/v1/namespaces/default/services/quiet")
    assert (status, warnings) == (200, [])


def _request_with_warnings(warnings: list[str]) -> Request:
    req = Request("GET", "/", b"", {})
    req.values["warnings"] = warnings
    return req


def test_warning_headers_are_deduplicated_and_truncated():
    assert warning_headers(_request_with_warnings(["a", "", "b", "a"])) == [("warning", '299 - "a"'),
                                                                            ("warning", '299 - "b"')]
    assert warning_headers(_request_with_warnings(['say "hi" \\ bye'])) == [
        ("warning", '299 - "say \\"hi\\" \\\\ bye"')]
    # 20 warnings of 300 characters pass 4096: each is cut to 256 until 4096 are written
    long = [f"{i:02d}" + "x" * 298 for i in range(20)]
    headers = warning_headers(_request_with_warnings(long))
    assert len(headers) == 16
    assert all(value == f'299 - "{text[:256]}"' for (_, value), text in zip(headers, long, strict=False))


# ---- admission options ----

def test_admission_gets_the_request_options(server, registry, hooks):
    ns = registry.namespace()
    registry.configure(False, "options-cfg", registry.webhook("options.example.com", "/allow", **scoped(registry, ns)))
    registry.wait_called("/allow", ns)
    base = f"/api/v1/namespaces/{ns}/configmaps"

    def last(name: str) -> dict:
        return [r for r in hooks.received["/allow"] if r["request"]["name"] == name][-1]["request"]

    meta = {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
    created = raw(server, "POST", f"{base}?fieldManager=probe&fieldValidation=Strict", configmap("opts"))
    assert created[0] == 201
    assert last("opts")["options"] == {**meta, "fieldManager": "probe", "fieldValidation": "Strict"}
    assert raw(server, "POST", f"{base}?dryRun=All", configmap("dry"))[0] == 201
    assert last("dry")["options"] == {**meta, "dryRun": ["All"]}
    applied = raw(server, "PATCH", f"{base}/applied?fieldManager=applier&force=true",
                  json.dumps(configmap("applied")).encode(), "application/apply-patch+yaml")
    assert applied[0] == 201
    assert last("applied")["options"] == {**meta, "fieldManager": "applier"}  # patchToCreateOptions: no force
    updated = raw(server, "PATCH", f"{base}/opts?fieldManager=editor", {"data": {"k": "w"}},
                  "application/merge-patch+json")
    assert updated[0] == 200
    assert last("opts")["options"] == {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1",
                                       "fieldManager": "editor"}
    deleted = raw(server, "DELETE", f"{base}/opts", {"kind": "DeleteOptions", "apiVersion": "v1",
                                                     "propagationPolicy": "Foreground", "gracePeriodSeconds": 0})
    assert deleted[0] == 200
    # The DELETE's own review: the garbage collector's update that ends the foreground deletion (the
    # finalizer removed) is reviewed too, and may arrive before this reads the last one.
    deletes = [r["request"] for r in hooks.received["/allow"]
               if r["request"]["name"] == "opts" and r["request"]["operation"] == "DELETE"]
    assert deletes[-1]["options"] == {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                                       "gracePeriodSeconds": 0, "propagationPolicy": "Foreground"}
