"""Discovery ordering and merging, endpoint resolution, the request-header identity, the work queue."""

from __future__ import annotations

import asyncio

from kube_apiserver.admission.webhook.serviceresolution import mirrored_slices, pick_endpoint
from kube_apiserver.aggregator.discovery import AggregatedDiscovery, api_group_list
from kube_apiserver.aggregator.priorities import Priority
from kube_apiserver.aggregator.remote import convert_resources
from kube_apiserver.aggregator.transport import auth_proxy_headers, header_key_escape
from kube_apiserver.aggregator.workqueue import WorkQueue
from kube_apiserver.endpoints.discovery import DiscoveryManager, GroupVersionDiscovery
from kube_apiserver.registry.context import UserInfo


def svc(name: str, group_priority: int, version_priority: int) -> dict:
    version, _, group = name.partition(".")
    return {"metadata": {"name": name}, "spec": {"group": group, "version": version,
                                                 "groupPriorityMinimum": group_priority,
                                                 "versionPriority": version_priority}}


class Lister:
    def __init__(self, *items: dict):
        self.items = {i["metadata"]["name"]: i for i in items}

    def get(self, name: str) -> dict | None:
        return self.items.get(name)

    def list(self) -> list[dict]:
        return list(self.items.values())


def test_api_group_list_leads_with_apiregistration_and_skips_core():
    doc = api_group_list([svc("v1.", 18000, 1), svc("v1.batch", 17400, 15), svc("v1.apps", 17800, 15),
                          svc("v1beta1.batch", 17400, 9), svc("v1alpha1.z.io", 1000, 100)])
    assert [g["name"] for g in doc["groups"]] == ["apiregistration.k8s.io", "apps", "batch", "z.io"]
    batch = doc["groups"][2]
    assert [v["version"] for v in batch["versions"]] == ["v1", "v1beta1"]
    assert batch["preferredVersion"] == {"groupVersion": "batch/v1", "version": "v1"}


def test_aggregated_document_merges_remote_and_orders_by_priority():
    manager = DiscoveryManager()
    for group, version in (("apiregistration.k8s.io", "v1"), ("batch", "v1"), ("apps", "v1"),
                           ("stable.example.com", "v1"), ("autoscaling", "v1"), ("autoscaling", "v2")):
        manager.add(GroupVersionDiscovery(group, version, []))
    lister = Lister(svc("v1.stable.example.com", 1000, 100), svc("v1.metrics.k8s.io", 100, 10))
    remote = {("metrics.k8s.io", "v1"): ({"version": "v1", "resources": [], "freshness": "Current"},
                                         Priority(100, 10)),
              ("batch", "v1"): ({"version": "v1", "resources": [{"resource": "remote"}], "freshness": "Stale"},
                                Priority(17400, 15))}
    doc = AggregatedDiscovery(manager, lister, lambda: remote).document()  # type: ignore[arg-type]
    names = [i["metadata"]["name"] for i in doc["items"]]
    assert names == ["apiregistration.k8s.io", "apps", "autoscaling", "batch", "stable.example.com",
                     "metrics.k8s.io"]
    autoscaling = doc["items"][2]
    assert [v["version"] for v in autoscaling["versions"]] == ["v2", "v1"]
    assert doc["items"][3]["versions"] == [{"version": "v1", "resources": [{"resource": "remote"}],
                                            "freshness": "Stale"}]


def test_convert_legacy_resources():
    converted = convert_resources([
        {"name": "flunders", "singularName": "flunder", "namespaced": True, "kind": "Flunder", "verbs": ["get"],
         "shortNames": ["fl"]},
        {"name": "flunders/status", "namespaced": True, "kind": "Flunder", "verbs": ["get", "update"]},
        {"name": "orphans/scale", "namespaced": False, "kind": "", "verbs": ["get"]}])
    assert converted == [
        {"resource": "flunders", "responseKind": {"group": "", "version": "", "kind": "Flunder"},
         "scope": "Namespaced", "singularResource": "flunder", "verbs": ["get"], "shortNames": ["fl"],
         "subresources": [{"subresource": "status", "responseKind": {"group": "", "version": "", "kind": "Flunder"},
                           "verbs": ["get", "update"]}]},
        {"resource": "orphans", "responseKind": {}, "scope": "Cluster",
         "subresources": [{"subresource": "scale", "responseKind": {}, "verbs": ["get"]}]}]


def test_mirrored_endpoints_and_endpoint_choice():
    endpoints = {"metadata": {"name": "api"}, "subsets": [{
        "addresses": [{"ip": "10.1.0.5"}], "notReadyAddresses": [{"ip": "10.1.0.6"}],
        "ports": [{"name": "https", "port": 8443}]}]}
    slices = mirrored_slices(endpoints)
    assert slices == [{"addressType": "IPv4", "ports": [{"name": "https", "port": 8443, "protocol": "TCP"}],
                       "endpoints": [{"addresses": ["10.1.0.5"], "conditions": {"ready": True}},
                                     {"addresses": ["10.1.0.6"], "conditions": {"ready": False}}]}]
    assert pick_endpoint(slices, "https") == ("10.1.0.5", 8443)
    assert pick_endpoint(slices, "other") is None
    unnamed = [{"endpoints": [{"addresses": ["10.1.0.7"]}], "ports": [{"port": 443}]}]
    assert pick_endpoint(unnamed, "") is None  # a port without a name matches no service port
    assert mirrored_slices({"metadata": {"labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                            "subsets": endpoints["subsets"]}) == []


def test_auth_proxy_headers_replace_what_the_client_sent():
    user = UserInfo("alice", "uid-1", ("devs", "system:authenticated"), {"scopes": ["a", "b"], "a/b c": ["x"]})
    headers = auth_proxy_headers([("Accept", "application/json"), ("X-Remote-User", "mallory"),
                                  ("X-Remote-Extra-Foo", "bar"), ("x-remote-group", "admins")], user)
    assert list(headers.items()) == [
        ("Accept", "application/json"), ("X-Remote-User", "alice"), ("X-Remote-Uid", "uid-1"),
        ("X-Remote-Group", "devs"), ("X-Remote-Group", "system:authenticated"), ("X-Remote-Extra-scopes", "a"),
        ("X-Remote-Extra-scopes", "b"), ("X-Remote-Extra-a%2Fb%20c", "x")]
    assert header_key_escape("example.org/key%1") == "example.org%2Fkey%251"


def test_work_queue_deduplicates_and_requeues_keys_being_worked():
    async def main() -> list[str]:
        queue = WorkQueue("test")
        for key in ("a", "b", "a"):
            queue.add(key)
        first = await queue.get()
        queue.add(first)  # changed while being worked: worked again after
        second = await queue.get()
        queue.done(first)
        queue.done(second)
        return [first, second, await queue.get()]
    assert asyncio.run(main()) == ["a", "b", "a"]
