"""RBAC for the control plane: the rule source the authorizer reads (the rbac group's shared informers)
and the rbac/bootstrap-roles post-start hook (k8s pkg/registry/rbac/rest
storage_rbac.go EnsureRBACPolicy), which creates the bootstrap policy and reconciles what exists through
the loopback client."""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

from ..apimachinery import errors
from ..client.informers import Lister, SharedInformerFactory
from ..client.rest import Client, ResourceClient
from . import bootstrappolicy as policy
from .rbacreconcile import CREATE, NONE, RECREATE, UPDATE, Result, reconcile_binding, reconcile_role

log = logging.getLogger("kube_apiserver.controlplane")
Object = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
ATTEMPTS = 3
# EnsureRBACPolicy polls every second for 30 seconds before the hook fails
RETRY_SECONDS, RETRY_TIMEOUT = 1.0, 30.0
# the bootstrap hook waits (this long at most, looking this often) for the authorizer to see its writes
CATCH_UP_SECONDS, CATCH_UP_POLL = 10.0, 0.01
KINDS = {
    "clusterroles": "clusterrole",
    "clusterrolebindings": "clusterrolebinding",
    "roles": "role",
    "rolebindings": "rolebinding",
}


class InformerRuleSource:
    """Roles and bindings as the RBAC authorizer reads them (k8s plugin/pkg/auth/authorizer/rbac's
    listers): from the rbac group's shared informers on the loopback client. They start with the factory
    (the server's informer-sync readiness check waits for their first list); a lookup before then waits
    for that list."""

    def __init__(self, informers: SharedInformerFactory):
        self.informers = {resource: informers.for_resource(GROUP, "v1", resource) for resource in KINDS}

    async def _list(self, resource: str, namespace: str = "") -> list[Object]:
        return await Lister(self.informers[resource]).list(namespace)

    async def _get(self, resource: str, name: str, namespace: str = "") -> Object | None:
        return await Lister(self.informers[resource]).get(name, namespace)

    async def cluster_role_bindings(self) -> list[Object]:
        return await self._list("clusterrolebindings")

    async def role_bindings(self, namespace: str) -> list[Object]:
        return await self._list("rolebindings", namespace)

    async def cluster_role(self, name: str) -> Object | None:
        return await self._get("clusterroles", name)

    async def role(self, namespace: str, name: str) -> Object | None:
        return await self._get("roles", name, namespace)

    async def wait_for(self, written: dict[str, int], timeout: float = CATCH_UP_SECONDS) -> None:
        """Waits until each resource's informer has seen the writes up to the resourceVersion given."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        for resource, resource_version in written.items():
            informer = self.informers[resource]
            while (
                _revision(informer.last_sync_resource_version) < resource_version and loop.time() < deadline
            ):
                await asyncio.sleep(CATCH_UP_POLL)


def _revision(resource_version: str | None) -> int:
    try:
        return int(resource_version or 0)
    except ValueError:
        return 0


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
        self.written: dict[str, int] = {}  # per resource, the newest resourceVersion written

    def _record(self, resource: str, obj: Object) -> None:
        revision = _revision((obj.get("metadata") or {}).get("resourceVersion"))
        self.written[resource] = max(self.written.get(resource, 0), revision)

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
            # One list instead of a get per object (~130 of them: most of a restart's loopback requests). What
            # changes after the list fails its write with a conflict, and that object is read again.
            listed = await self._list(resource)
            # independent objects: reconciled together, so one commit carries many of them
            await asyncio.gather(*(self._reconcile(resource, obj, listed) for obj in objects))

    async def _list(self, resource: str) -> dict[tuple[str, str], Object]:
        """The objects of `resource` in every namespace, by namespace and name, each with its kind (a list's
        items have none, and a write of one needs it)."""
        listed = await self.client.resource(GROUP, "v1", resource).list()
        kind = str(listed.get("kind") or "").removesuffix("List")
        objects: dict[tuple[str, str], Object] = {}
        for item in listed.get("items") or []:
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", listed.get("apiVersion"))
            objects[(item["metadata"].get("namespace", ""), item["metadata"]["name"])] = item
        return objects

    async def _reconcile(
        self,
        resource: str,
        expected: Object,
        listed: dict[tuple[str, str], Object] | None = None,
        attempt: int = 1,
    ) -> None:
        """ReconcileRoleOptions/ReconcileRoleBindingOptions.Run with Confirm and nothing removed. `listed`: the
        objects as the first attempt finds them (a retry, given none, reads the object again)."""
        if attempt > ATTEMPTS:
            raise errors.internal_error(RuntimeError("exceeded maximum attempts"))
        meta = expected["metadata"]
        namespace = meta.get("namespace", "")
        if listed is not None:
            existing = listed.get((namespace, meta["name"]))
        else:
            existing = await self._get(resource, meta["name"], namespace)
        compute = reconcile_binding if resource.endswith("bindings") else reconcile_role
        # the policy's objects are built for this run and the client only serializes them: no copy to create one
        result = Result(expected, CREATE) if existing is None else compute(existing, expected)
        if result.protected:
            if result.operation != NONE:
                log.warning(
                    "skipped reconcile-protected %s with missing permissions: %s",
                    _describe(resource, expected),
                    result.missing,
                )
            return
        try:
            await self._write(resource, result)
        except errors.StatusError as err:
            # created, changed or deleted since it was read: look again
            if err.code not in (404, 409):
                raise
            await self._reconcile(resource, expected, attempt=attempt + 1)

    async def _write(self, resource: str, result: Result) -> None:
        obj, name = result.obj, result.obj["metadata"]["name"]
        api = self._api(resource, obj["metadata"].get("namespace", ""))
        if result.operation in (CREATE, RECREATE) and obj["metadata"].get("namespace"):
            await self._ensure_namespace(obj["metadata"]["namespace"])
        if result.operation == CREATE:
            self._record(resource, await api.create(obj))
            log.info("created %s", _describe(resource, obj))
        elif result.operation == UPDATE:
            self._record(resource, await api.update(obj))
            log.info("updated %s with additional permissions: %s", _describe(resource, obj), result.missing)
        elif result.operation == RECREATE:
            await api.delete(name)
            recreated = copy.deepcopy(obj)
            recreated["metadata"].pop("resourceVersion", None)
            self._record(resource, await api.create(recreated))
            log.info("recreated %s", _describe(resource, obj))

    async def _ensure_namespace(self, namespace: str) -> None:
        """tryEnsureNamespace: kube-system and kube-public may not exist yet."""
        if namespace in self._namespaces:
            return
        try:
            await self.client.resource("", "v1", "namespaces").create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            )
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
            migrated["metadata"] = {
                k: v for k, v in existing["metadata"].items() if k in ("labels", "annotations")
            } | {"name": new_name}
            self._record("clusterroles", await self._api("clusterroles").create(migrated))

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
            self._record("clusterrolebindings", await self._api("clusterrolebindings").create(split))


async def bootstrap_roles(client: Client, source: InformerRuleSource | None = None) -> None:
    """The rbac/bootstrap-roles post-start hook, through the loopback client: retried every second for 30
    seconds, then it fails. It is done when the RBAC authorizer (`source`) sees what it wrote, so the
    bootstrap policy is in force once the server reports ready."""
    if not await _rbac_served(client):
        return  # the rbac group is disabled
    loop = asyncio.get_running_loop()
    deadline = loop.time() + RETRY_TIMEOUT
    ensurer = PolicyEnsurer(client)  # one for every attempt: it remembers what the earlier ones wrote
    while True:
        try:
            await ensurer.run()
            break
        except errors.StatusError as err:
            if loop.time() >= deadline:
                raise RuntimeError(f"unable to initialize RBAC policy: {err.message}") from err
            log.info("unable to initialize RBAC policy, retrying: %s", err.message)
            await asyncio.sleep(RETRY_SECONDS)
    if source is not None:
        await source.wait_for(ensurer.written)


async def _rbac_served(client: Client) -> bool:
    """Whether the server serves rbac.authorization.k8s.io/v1 (its discovery document exists)."""
    try:
        await client.discovery.resources_for(f"{GROUP}/v1")
    except errors.StatusError as err:
        if err.code == 404:
            return False
        raise
    return True
