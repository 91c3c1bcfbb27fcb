"""The rbac/bootstrap-roles reconcile reads each resource with one list (not a get per policy object: ~130
loopback requests at every restart), and an object changed after that list is read again and reconciled."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from kube_apiserver.apimachinery import errors
from kube_apiserver.controlplane import bootstrappolicy as policy
from kube_apiserver.controlplane.rbac import PolicyEnsurer

KINDS = {
    "clusterroles": "ClusterRole",
    "clusterrolebindings": "ClusterRoleBinding",
    "roles": "Role",
    "rolebindings": "RoleBinding",
    "namespaces": "Namespace",
}


class FakeStore:
    """Objects by (resource, namespace, name) with resourceVersions, and the requests made."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.requests: list[tuple[str, str, str]] = []  # (verb, resource, name)
        self.revision = 0
        self.after_list: Any = None  # called once after the next list answers (a concurrent writer)

    def put(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        self.revision += 1
        stored = copy.deepcopy(obj)
        stored["metadata"]["resourceVersion"] = str(self.revision)
        meta = stored["metadata"]
        self.objects[(resource, meta.get("namespace", ""), meta["name"])] = stored
        return copy.deepcopy(stored)


class FakeResource:
    def __init__(self, store: FakeStore, resource: str, namespace: str = ""):
        self.store, self.resource, self.ns = store, resource, namespace

    def namespace(self, namespace: str) -> FakeResource:
        return FakeResource(self.store, self.resource, namespace)

    def _key(self, name: str) -> tuple[str, str, str]:
        return (self.resource, self.ns, name)

    async def list(self, **params: Any) -> dict[str, Any]:
        self.store.requests.append(("list", self.resource, ""))
        items = [
            {k: v for k, v in copy.deepcopy(o).items() if k not in ("kind", "apiVersion")}
            for (resource, _, _), o in sorted(self.store.objects.items())
            if resource == self.resource
        ]
        answer = {
            "kind": KINDS[self.resource] + "List",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"resourceVersion": str(self.store.revision)},
            "items": items,
        }
        if self.store.after_list is not None:
            changed, self.store.after_list = self.store.after_list, None
            changed()
        return answer

    async def get(self, name: str, **params: Any) -> dict[str, Any]:
        self.store.requests.append(("get", self.resource, name))
        found = self.store.objects.get(self._key(name))
        if found is None:
            raise errors.not_found(self.resource, "rbac.authorization.k8s.io", name)
        return copy.deepcopy(found)

    async def create(self, obj: dict[str, Any], **params: Any) -> dict[str, Any]:
        name = obj["metadata"]["name"]
        self.store.requests.append(("create", self.resource, name))
        if self._key(name) in self.store.objects:
            raise errors.already_exists(self.resource, "rbac.authorization.k8s.io", name)
        return self.store.put(
            self.resource, {**obj, "metadata": {**obj["metadata"], "namespace": self.ns}} if self.ns else obj
        )

    async def update(self, obj: dict[str, Any], **params: Any) -> dict[str, Any]:
        name = obj["metadata"]["name"]
        self.store.requests.append(("update", self.resource, name))
        current = self.store.objects.get(self._key(name))
        if current is None:
            raise errors.not_found(self.resource, "rbac.authorization.k8s.io", name)
        if obj["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
            raise errors.conflict(
                self.resource, "rbac.authorization.k8s.io", name, "the object has been modified"
            )
        return self.store.put(self.resource, obj)


class FakeClient:
    def __init__(self, store: FakeStore):
        self.store = store

    def resource(self, group: str, version: str, resource: str) -> FakeResource:
        return FakeResource(self.store, resource)


def _bootstrapped() -> FakeStore:
    store = FakeStore()
    asyncio.run(PolicyEnsurer(FakeClient(store)).run())
    store.requests.clear()
    return store


def test_a_restart_lists_each_resource_once_and_writes_nothing():
    store = _bootstrapped()
    asyncio.run(PolicyEnsurer(FakeClient(store)).run())
    per_object_gets = [r for r in store.requests if r[0] == "get"]
    # the primes look up their few renamed roles and bindings by name; the policy's ~130 objects are listed
    assert len(per_object_gets) <= len(policy.cluster_roles_to_aggregate()) + len(
        policy.cluster_role_bindings_to_split()
    )
    assert sorted(r[1] for r in store.requests if r[0] == "list") == [
        "clusterrolebindings",
        "clusterroles",
        "rolebindings",
        "roles",
    ]
    assert not [r for r in store.requests if r[0] in ("create", "update")]


def test_an_object_changed_after_the_list_is_read_again_and_reconciled():
    store = _bootstrapped()
    name = policy.cluster_roles()[0]["metadata"]["name"]
    key = ("clusterroles", "", name)
    expected_rules = copy.deepcopy(store.objects[key]["rules"])
    store.put("clusterroles", {**store.objects[key], "rules": []})  # lost its rules: the reconcile adds them

    def concurrent_write() -> None:  # after the list: the listed resourceVersion is stale
        store.put(
            "clusterroles",
            {
                **store.objects[key],
                "metadata": {**store.objects[key]["metadata"], "labels": {"changed": "after-list"}},
            },
        )

    store.after_list = concurrent_write
    asyncio.run(PolicyEnsurer(FakeClient(store)).run())
    assert ("get", "clusterroles", name) in store.requests  # the conflict made it look again
    assert store.objects[key]["rules"] == expected_rules
    assert store.objects[key]["metadata"]["labels"]["changed"] == "after-list"
