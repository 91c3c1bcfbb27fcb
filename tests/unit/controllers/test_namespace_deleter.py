"""The namespace controller's content deletion over discovery (upstream's namespaced_resources_deleter):
aggregated resources through their proxy handler, a failed group version as the discovery-failure
condition, and the other conditions' texts."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from kube_apiserver.apimachinery import errors
from kube_apiserver.controllers.aggregated import ProxiedResource, aggregated_resources
from kube_apiserver.controllers.discovery import Discovered, DiscoveredResource, ServerResources
from kube_apiserver.controllers.namespace import NamespaceController
from kube_apiserver.endpoints.http import Response

Object = dict[str, Any]


class FakeBackend:
    """An aggregated server behind a proxy handler: flunders in namespace "doomed", one held by a finalizer."""

    def __init__(self) -> None:
        self.flunders: list[Object] = [{"metadata": {"name": "a"}},
                                       {"metadata": {"name": "b", "finalizers": ["example.com/hold"]}}]
        self.requests: list[tuple[str, str, Object]] = []

    async def serve(self, req: Any) -> Response:
        body = orjson.loads(await req.body() or b"{}")
        self.requests.append((req.method, req.path, body))
        assert req.user is not None and req.info.namespace == "doomed"
        if req.method == "DELETE":
            self.flunders = [f for f in self.flunders if f["metadata"].get("finalizers")]
            return Response(200, orjson.dumps({"kind": "Status", "status": "Success"}))
        return Response(200, orjson.dumps({"kind": "FlunderList", "items": self.flunders}))


def api_service(name: str, available: bool) -> Object:
    version, group = name.split(".", 1)
    return {"metadata": {"name": name},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": 100, "versionPriority": 10,
                     "service": {"namespace": "default", "name": "api", "port": 443}},
            "status": {"conditions": [{"type": "Available", "status": "True" if available else "False"}]}}


class FakeAggregator:
    def __init__(self, backend: FakeBackend) -> None:
        services = [api_service("v1alpha1.wardle.example.com", True), api_service("v1beta1.metrics.example.com", False),
                    {"metadata": {"name": "v1.apps"}, "spec": {"group": "apps", "version": "v1"}}]  # local: skipped
        self.lister = type("Lister", (), {"list": lambda _self: services})()
        self.proxy_handlers = {s["metadata"]["name"]: backend for s in services}
        flunders = {"resource": "flunders", "scope": "Namespaced",
                    "verbs": ["delete", "deletecollection", "get", "list"]}
        fischers = {"resource": "fischers", "scope": "Cluster", "verbs": ["delete", "list"]}
        self.remote_discovery = type("Remote", (), {"entries": {
            ("wardle.example.com", "v1alpha1"): ({"version": "v1alpha1", "freshness": "Current",
                                                  "resources": [flunders, fischers]}, None)}})()


def controller(discovery: ServerResources) -> NamespaceController:
    return NamespaceController(None, discovery)  # type: ignore[arg-type]


def test_aggregated_resources_and_failed_group_versions():
    found = aggregated_resources(FakeAggregator(FakeBackend()))()
    assert [(r.group, r.version, r.resource, r.namespaced) for r in found.resources] == [
        ("wardle.example.com", "v1alpha1", "flunders", True), ("wardle.example.com", "v1alpha1", "fischers", False)]
    assert found.failed == {"metrics.example.com/v1beta1": "the server is currently unable to handle the request"}
    assert found.error() == ("unable to retrieve the complete list of server APIs: metrics.example.com/v1beta1: "
                             "the server is currently unable to handle the request")


def test_aggregated_content_is_deleted_through_the_proxy_and_failures_are_conditions():
    backend = FakeBackend()
    discovery = ServerResources(aggregated_resources(FakeAggregator(backend)))
    content = asyncio.run(controller(discovery)._delete_all_content("doomed", "2025-01-01T00:00:00Z"))
    path = "/apis/wardle.example.com/v1alpha1/namespaces/doomed/flunders"
    assert [(method, p) for method, p, _ in backend.requests] == [("DELETE", path), ("GET", path)]
    assert backend.requests[0][2]["propagationPolicy"] == "Background"
    assert content.conditions() == {
        "NamespaceDeletionDiscoveryFailure": (
            "DiscoveryFailed", "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of "
                               "server APIs: metrics.example.com/v1beta1: the server is currently unable to handle "
                               "the request"),
        "NamespaceContentRemaining": (
            "SomeResourcesRemain", "Some resources are remaining: flunders.wardle.example.com has 1 resource instances"),
        "NamespaceFinalizersRemaining": (
            "SomeFinalizerRemain", "Some finalizers are remaining: example.com/hold in 1 resource instances"),
    }
    assert content.estimate == 15


class Stubborn:
    """A resource whose objects stay without a finalizer, and one whose deletion fails."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    async def list(self, namespace: str) -> list[Object]:
        return [{"metadata": {"name": "x"}}]

    async def delete_collection(self, namespace: str) -> None:
        if self.fail:
            raise RuntimeError("etcdserver: request timed out")

    async def delete(self, namespace: str, name: str) -> None:
        raise AssertionError("deletecollection is a verb: not called")


def test_unexpected_remaining_objects_and_failed_deletions_are_content_failures():
    verbs = frozenset({"delete", "deletecollection", "list"})
    resources = [DiscoveredResource("", "v1", "configmaps", True, verbs, Stubborn()),
                 DiscoveredResource("apps", "v1", "deployments", True, verbs, Stubborn(fail=True)),
                 DiscoveredResource("", "v1", "bindings", True, frozenset({"create"}), Stubborn(fail=True))]
    discovery = ServerResources(lambda: Discovered(resources))
    content = asyncio.run(controller(discovery)._delete_all_content("doomed", "2025-01-01T00:00:00Z"))
    reason, message = content.conditions()["NamespaceDeletionContentFailure"]
    assert reason == "ContentDeletionFailed"
    assert message == ("Failed to delete all resource types, 2 remaining: etcdserver: request timed out, "
                       "unexpected items still remain in namespace: doomed for gvr: /v1, Resource=configmaps")
    assert content.conditions()["NamespaceContentRemaining"][1] == \
        "Some resources are remaining: configmaps. has 1 resource instances"


def test_proxied_errors_read_the_status():
    async def answer(req: Any) -> Response:
        return Response(403, orjson.dumps({"kind": "Status", "reason": "Forbidden", "message": "no"}))

    client = ProxiedResource(type("H", (), {"serve": staticmethod(answer)})(), "g", "v1", "things")
    with pytest.raises(errors.StatusError) as raised:
        asyncio.run(client.delete_collection("ns"))
    assert (raised.value.code, raised.value.reason, raised.value.message) == (403, "Forbidden", "no")
