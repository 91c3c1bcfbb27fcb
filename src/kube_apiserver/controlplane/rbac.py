"""RBAC for the control plane: the rule source the authorizer reads (the rbac group's storage, served
from the watch cache) and the rbac/bootstrap-roles post-start hook (k8s pkg/registry/rbac/rest
storage_rbac.go EnsureRBACPolicy), which creates the bootstrap policy and reconciles what exists through
the loopback client."""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

from ..apimachinery import errors
from ..client.rest import Client, ResourceClient
from ..registry.context import Context, UserInfo
from ..registry.options import ListQuery
from . import bootstrappolicy as policy
from .rbacreconcile import CREATE, NONE, RECREATE, UPDATE, Result, reconcile_binding, reconcile_role

log = logging.getLogger("kube_apiserver.controlplane")
Object = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
SYSTEM = Context(user=UserInfo("system:apiserver", groups=("system:masters",)))
ATTEMPTS = 3
# EnsureRBACPolicy polls every second for 30 seconds before the hook fails
RETRY_SECONDS, RETRY_TIMEOUT = 1.0, 30.0
KINDS = {"clusterroles": "clusterrole", "clusterrolebindings": "clusterrolebinding", "roles": "role",
         "rolebindings": "rolebinding"}


class RegistryRuleSource:
    """Roles and bindings read from the rbac group's stores (bound once the server chain exists)."""

    def __init__(self) -> None:
        self.stores: dict[str, Any] = {}

    def bind(self, group_versions: dict[tuple[str, str], dict[str, Any]]) -> None:
        routes = group_versions.get((GROUP, "v1"), {})
        self.stores = {name: route.scope.storage for name, route in routes.items() if "/" not in name}

    async def _list(self, resource: str, namespace: str = "") -> list[Object]:
        store = self.stores.get(resource)
        if store is None:
            return []
        return (await store.list(Context(namespace, SYSTEM.user), ListQuery(resource_version="0")))["items"]

    async def _get(self, resource: str, name: str, namespace: str = "") -> Object | None:
        store = self.stores.get(resource)
        if store is None:
            return None
        try:
            return await store.get(Context(namespace, SYSTEM.user), name)
        except errors.StatusError:
            return None

    async def cluster_role_bindings(self) -> list[Object]:
        return await self._list("clusterrolebindings")

    async def role_bindings(self, namespace: str) -> list[Object]:
        return await self._list("rolebindings", namespace)

    async def cluster_role(self, name: str) -> Object | None:
        return await self._get("clusterroles", name)

    async def role(self, namespace: str, name: str) -> Object | None:
        return await self._get("roles", name, namespace)


def _describe(resource: str, obj: Object) -> str:
    meta = obj["metadata"]
    where = f" in {meta['namespace']}" if meta.get("namespace") else ""
    return f"{KINDS[resource]}.{GROUP}/{meta['name']}{where}"


class PolicyEnsurer:
    """EnsureRBACPolicy through the loopback client: the writes are the API server's own (system:apiserver,
    field manager kube-apiserver), admitted and audited as any other."""

    def __init__(self, client: Client):
        self.client = client
        self._namespaces: set[str] = set()

    def _api(self, resource: str, namespace: str = "") -> ResourceClient:
        return self.client.resource(GROUP, "v1", resource).namespace(namespace)

    async def run(self) -> None:
        await self._prime_aggregated_cluster_roles()
        await self._prime_split_cluster_role_bindings()
        phases: list[tuple[str, list[Object]]] = [
            ("clusterroles", policy.cluster_roles() + policy.controller_roles()),
            ("clusterrolebindings", policy.cluster_role_bindings() + policy.controller_role_bindings()),
            ("roles", policy.namespace_roles()),
            ("rolebindings", policy.namespace_role_bindings()),
        ]
        for resource, objects in phases:
            # independent objects: reconciled together, so one commit carries many of them
            await asyncio.gather(*(self._reconcile(resource, obj) for obj in objects))

    async def _reconcile(self, resource: str, expected: Object, attempt: int = 1) -> None:
        """ReconcileRoleOptions/ReconcileRoleBindingOptions.Run with Confirm and nothing removed."""
        if attempt > ATTEMPTS:
            raise errors.internal_error(RuntimeError("exceeded maximum attempts"))
        meta = expected["metadata"]
        existing = await self._get(resource, meta["name"], meta.get("namespace", ""))
        compute = reconcile_binding if resource.endswith("bindings") else reconcile_role
        result = Result(copy.deepcopy(expected), CREATE) if existing is None else compute(existing, expected)
        if result.protected:
            if result.operation != NONE:
                log.warning("skipped reconcile-protected %s with missing permissions: %s",
                            _describe(resource, expected), result.missing)
            return
        try:
            await self._write(resource, result)
        except errors.StatusError as err:
            # created, changed or deleted since it was read: look again
            if err.code not in (404, 409):
                raise
            await self._reconcile(resource, expected, attempt + 1)

    async def _write(self, resource: str, result: Result) -> None:
        obj, name = result.obj, result.obj["metadata"]["name"]
        api = self._api(resource, obj["metadata"].get("namespace", ""))
        if result.operation in (CREATE, RECREATE) and obj["metadata"].get("namespace"):
            await self._ensure_namespace(obj["metadata"]["namespace"])
        if result.operation == CREATE:
            await api.create(obj)
            log.info("created %s", _describe(resource, obj))
        elif result.operation == UPDATE:
            await api.update(obj)
            log.info("updated %s with additional permissions: %s", _describe(resource, obj), result.missing)
        elif result.operation == RECREATE:
            await api.delete(name)
            recreated = copy.deepcopy(obj)
            recreated["metadata"].pop("resourceVersion", None)
            await api.create(recreated)
            log.info("recreated %s", _describe(resource, obj))

    async def _ensure_namespace(self, namespace: str) -> None:
        """tryEnsureNamespace: kube-system and kube-public may not exist yet."""
        if namespace in self._namespaces:
            return
        try:
            await self.client.resource("", "v1", "namespaces").create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        except errors.StatusError as err:
            if err.code != 409:
                raise
        self._namespaces.add(namespace)

    async def _get(self, resource: str, name: str, namespace: str = "") -> Object | None:
        try:
            return await self._api(resource, namespace).get(name)
        except errors.StatusError as err:
            if err.code != 404:
                raise
            return None

    async def _prime_aggregated_cluster_roles(self) -> None:
        """primeAggregatedClusterRoles: the custom rules of a pre-aggregation admin/edit/view move to its
        system:aggregate-to-* role, before the role itself becomes aggregated."""
        for old_name, new_name in policy.cluster_roles_to_aggregate().items():
            if await self._get("clusterroles", new_name) is not None:
                continue
            existing = await self._get("clusterroles", old_name)
            if existing is None:
                continue
            if existing.get("aggregationRule") is not None:
                return  # already migrated: no custom rules to move
            log.info("migrating %s to %s", old_name, new_name)
            migrated = copy.deepcopy(existing)
            migrated["metadata"] = {k: v for k, v in existing["metadata"].items()
                                    if k in ("labels", "annotations")} | {"name": new_name}
            await self._api("clusterroles").create(migrated)

    async def _prime_split_cluster_role_bindings(self) -> None:
        """primeSplitClusterRoleBindings: a new binding split from an existing one starts with its subjects,
        labels and annotations."""
        for old_name, template in policy.cluster_role_bindings_to_split().items():
            new_name = template["metadata"]["name"]
            if await self._get("clusterrolebindings", new_name) is not None:
                continue
            existing = await self._get("clusterrolebindings", old_name)
            if existing is None:
                continue
            split = copy.deepcopy(template)
            split["subjects"] = copy.deepcopy(existing.get("subjects") or [])
            for key in ("labels", "annotations"):
                split["metadata"][key] = dict(existing["metadata"].get(key) or {})
            log.info("splitting %s into %s", old_name, new_name)
            await self._api("clusterrolebindings").create(split)


async def bootstrap_roles(source: RegistryRuleSource, client: Client) -> None:
    """The rbac/bootstrap-roles post-start hook, through the loopback client: retried every second for 30
    seconds, then it fails."""
    if "clusterroles" not in source.stores:
        return  # the rbac group is disabled
    loop = asyncio.get_running_loop()
    deadline = loop.time() + RETRY_TIMEOUT
    while True:
        try:
            await PolicyEnsurer(client).run()
            return
        except errors.StatusError as err:
            if loop.time() >= deadline:
                raise RuntimeError(f"unable to initialize RBAC policy: {err.message}") from err
            log.info("unable to initialize RBAC policy, retrying: %s", err.message)
            await asyncio.sleep(RETRY_SECONDS)
