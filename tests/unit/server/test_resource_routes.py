"""The REST container routes a request as kube-apiserver's installer registers routes: by the resource's
scope and the verbs its storage offers, from the path's shape (never from a name a field selector gave
request info). 404 is no route for the path, 405 a route for the path but not the method."""

from __future__ import annotations

import asyncio

import pytest

from kube_apiserver.endpoints.discovery import DiscoveryManager
from kube_apiserver.endpoints.handlers.scope import RequestScope
from kube_apiserver.endpoints.http import Request, Response
from kube_apiserver.endpoints.installer import ResourceRoutes
from kube_apiserver.endpoints.request_info import new_request_info
from kube_apiserver.registry.rest import ResourceInfo
from kube_apiserver.server.restful import APIContainer

ALL = ("list", "watch", "create", "deletecollection", "get", "update", "patch", "delete")


async def served(scope: RequestScope, req: Request) -> Response:
    return Response(200, req.info.verb.encode(), "text/plain")


def routes(resource: str, namespaced: bool, verbs: tuple[str, ...], subresource: str = "") -> ResourceRoutes:
    info = ResourceInfo("", "v1", resource, resource.title(), resource, namespaced, subresource=subresource)
    return ResourceRoutes(RequestScope(info, storage=object()), dict.fromkeys(verbs, served))


@pytest.fixture(scope="module")
def container() -> APIContainer:
    api = APIContainer(DiscoveryManager())
    api.add_group_version("", "v1", {
        "namespaces": routes("namespaces", False, ALL),
        "namespaces/status": routes("namespaces", False, ("get", "update", "patch"), "status"),
        "configmaps": routes("configmaps", True, ALL),
        "bindings": routes("bindings", True, ("create",)),
        "tokenreviews": routes("tokenreviews", False, ("create",)),
    })
    return api


def answer(container: APIContainer, method: str, target: str) -> tuple[int, bytes]:
    path, _, query = target.partition("?")
    req = Request(method, path, query.encode(), {})
    req.info = new_request_info(method, path, req.query)
    response = asyncio.run(container.dispatch(req))
    return response.status, response.body


@pytest.mark.parametrize(("method", "path", "status"), [
    # cluster-scoped: never under a namespace, the namespaces resource included
    ("GET", "/api/v1/namespaces/a/namespaces", 404),
    ("GET", "/api/v1/namespaces/a/namespaces/b", 404),
    ("DELETE", "/api/v1/namespaces/a/namespaces/a", 404),
    ("GET", "/api/v1/namespaces/a/namespaces?watch=1", 404),
    ("GET", "/api/v1/watch/namespaces/a/namespaces", 404),
    ("POST", "/api/v1/namespaces/a/tokenreviews", 404),
    ("GET", "/api/v1/namespaces/a", 200),
    ("GET", "/api/v1/namespaces/a/status", 200),
    ("DELETE", "/api/v1/namespaces/a/status", 405),
    ("GET", "/api/v1/namespaces/a/status/extra", 404),
    ("POST", "/api/v1/namespaces/a", 405),
    ("PUT", "/api/v1/namespaces", 405),
    # namespaced: outside a namespace only a lister's list and watch
    ("GET", "/api/v1/configmaps", 200),
    ("GET", "/api/v1/configmaps?fieldSelector=metadata.name%3Dx", 200),
    ("GET", "/api/v1/configmaps?watch=1&fieldSelector=metadata.name%3Dx", 200),
    ("GET", "/api/v1/watch/configmaps", 200),
    ("GET", "/api/v1/configmaps/x", 404),
    ("GET", "/api/v1/watch/configmaps/x", 404),
    ("POST", "/api/v1/configmaps", 405),
    ("DELETE", "/api/v1/configmaps", 405),
    ("POST", "/api/v1/bindings", 404),
    ("GET", "/api/v1/namespaces/a/configmaps/x", 200),
    ("GET", "/api/v1/watch/namespaces/a/configmaps/x", 200),
    ("POST", "/api/v1/namespaces/a/configmaps/x", 405),
    ("GET", "/api/v1/namespaces/a/configmaps/x/y", 404),
    ("GET", "/api/v1/namespaces/a/configmaps/x/y/z", 404),
    # create-only: the collection's POST, no object path
    ("POST", "/api/v1/tokenreviews", 200),
    ("GET", "/api/v1/tokenreviews", 405),
    ("GET", "/api/v1/tokenreviews/x", 404),
    ("POST", "/api/v1/namespaces/a/bindings", 200),
    ("GET", "/api/v1/namespaces/a/bindings/x", 404),
])
def test_routes(container, method, path, status):
    assert answer(container, method, path)[0] == status


def test_verbs_reach_their_handlers(container):
    assert answer(container, "GET", "/api/v1/configmaps?fieldSelector=metadata.name%3Dx") == (200, b"list")
    assert answer(container, "GET", "/api/v1/watch/namespaces/a/configmaps/x") == (200, b"watch")
    assert answer(container, "DELETE", "/api/v1/namespaces/a/configmaps") == (200, b"deletecollection")
    assert answer(container, "DELETE", "/api/v1/namespaces/a") == (200, b"delete")
