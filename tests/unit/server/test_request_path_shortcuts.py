"""The director's root lookup and the request's empty-query shortcut give what the scans gave."""

from __future__ import annotations

from kube_apiserver.endpoints.discovery import DiscoveryManager
from kube_apiserver.endpoints.handlers.responses import warning_headers
from kube_apiserver.endpoints.http import Request
from kube_apiserver.registry.store import path_segment_errors
from kube_apiserver.server.restful import APIContainer


def scanned(roots: set[str], path: str) -> bool:
    """The rule as it was written first: any root on a path boundary, /apis only exactly."""
    if path in ("/apis", "/apis/"):
        return "/apis" in roots
    return any(r != "/apis" and path.startswith(r) and (len(path) == len(r) or path[len(r)] == "/") for r in roots)


def test_claims_agrees_with_the_scan():
    container = APIContainer(DiscoveryManager())
    container.add_group_version("", "v1", {})
    container.add_group_version("apps", "v1", {})
    container.root_paths |= {"/api", "/apis"}
    paths = ["/", "", "/api", "/api/", "/api/v1", "/api/v1/", "/api/v1/namespaces/a/pods/b", "/api/v2", "/apis",
             "/apis/", "/apis/apps", "/apis/apps/", "/apis/apps/v1", "/apis/apps/v1/deployments", "/apis/apps/v2",
             "/apis/appsx/v1", "/apisx", "//api", "/api/v1x", "/healthz", "/apis/apps/v1/namespaces/a/x/y/z"]
    for path in paths:
        assert container.claims(path) == scanned(container.root_paths, path), path
    container.remove_group_version("apps", "v1")
    assert not container.claims("/apis/apps/v1/deployments")


def test_empty_query_and_its_parameters():
    req = Request("GET", "/api/v1/pods", b"", {})
    assert (req.query, req.param("limit"), req.param("x", "d")) == ({}, "", "d")
    req = Request("GET", "/api/v1/pods", b"watch=1&limit=5&dryRun=All&dryRun=All&empty", {})
    assert req.query == {"watch": ["1"], "limit": ["5"], "dryRun": ["All", "All"], "empty": [""]}


def test_no_warnings_and_valid_names():
    req = Request("GET", "/", b"", {})
    assert warning_headers(req) == []
    req.values["warnings"] = ["a", "", "a", "b"]
    assert warning_headers(req) == [("warning", '299 - "a"'), ("warning", '299 - "b"')]
    assert path_segment_errors("cm-0") == []
    assert path_segment_errors("a/b%") == ["may not contain '/'", "may not contain '%'"]
    assert path_segment_errors("..") == ["may not be '..'"]
