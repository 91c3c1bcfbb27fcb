"""RequestInfo parsing, case for case as k8s' RequestInfoFactory."""

from __future__ import annotations

import pytest

from kube_apiserver.endpoints.request_info import new_request_info


@pytest.mark.parametrize(("method", "path", "query", "expected"), [
    ("GET", "/api/v1/namespaces", {}, ("list", "", "v1", "", "namespaces", "", "")),
    ("GET", "/api/v1/namespaces/other", {}, ("get", "", "v1", "other", "namespaces", "other", "")),
    ("GET", "/api/v1/namespaces/other/pods/foo", {}, ("get", "", "v1", "other", "pods", "foo", "")),
    ("GET", "/api/v1/namespaces/other/pods", {"watch": ["true"]}, ("watch", "", "v1", "other", "pods", "", "")),
    ("GET", "/api/v1/namespaces/other/pods", {"watch": ["false"]}, ("list", "", "v1", "other", "pods", "", "")),
    ("GET", "/api/v1/watch/namespaces/other/pods", {}, ("watch", "", "v1", "other", "pods", "", "")),
    ("GET", "/apis/apps/v1/namespaces/ns/deployments/d/scale", {},
     ("get", "apps", "v1", "ns", "deployments", "d", "scale")),
    ("PUT", "/api/v1/namespaces/ns/finalize", {}, ("update", "", "v1", "ns", "namespaces", "ns", "finalize")),
    ("PUT", "/api/v1/namespaces/ns/status", {}, ("update", "", "v1", "ns", "namespaces", "ns", "status")),
    ("POST", "/api/v1/namespaces/ns/pods", {}, ("create", "", "v1", "ns", "pods", "", "")),
    ("DELETE", "/api/v1/namespaces/ns/pods", {}, ("deletecollection", "", "v1", "ns", "pods", "", "")),
    ("PATCH", "/api/v1/nodes/n1", {}, ("patch", "", "v1", "", "nodes", "n1", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"fieldSelector": ["metadata.name=p1"]},
     ("list", "", "v1", "ns", "pods", "p1", "")),
])
def test_resource_requests(method, path, query, expected):
    info = new_request_info(method, path, query)
    assert info.is_resource_request
    assert (info.verb, info.api_group, info.api_version, info.namespace, info.resource, info.name,
            info.subresource) == expected


@pytest.mark.parametrize("path", ["/", "/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/healthz",
                                  "/openapi/v3/api/v1", "/version"])
def test_non_resource_requests(path):
    info = new_request_info("GET", path, {})
    assert not info.is_resource_request and info.verb == "get" and info.path == path
