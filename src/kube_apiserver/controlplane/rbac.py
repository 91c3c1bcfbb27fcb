"""RBAC for the control plane: the rule source the authorizer reads (the rbac group's storage, served
from the watch cache) and the bootstrap roles the post-start hook `rbac/bootstrap-roles` keeps."""

from __future__ import annotations

import logging
from typing import Any

from ..apimachinery import errors
from ..registry.context import Context, UserInfo
from ..registry.options import ListQuery

log = logging.getLogger("kube_apiserver.controlplane")
Object = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
SYSTEM = Context(user=UserInfo("system:apiserver", groups=("system:masters",)))
BOOTSTRAP_META = {"annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
                  "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}
READ = ["get"]
CLUSTER_ROLES = {
    "cluster-admin": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                      {"nonResourceURLs": ["*"], "verbs": ["*"]}],
    "system:discovery": [{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                              "/openapi", "/openapi/*", "/readyz", "/version", "/version/"],
                          "verbs": READ}],
    "system:basic-user": [{"apiGroups": ["authorization.k8s.io"], "verbs": ["create"],
                           "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
                          {"apiGroups": ["authentication.k8s.io"], "verbs": ["create"],
                           "resources": ["selfsubjectreviews"]}],
    "system:public-info-viewer": [{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
                                   "verbs": READ}],
    "system:service-account-issuer-discovery": [{"nonResourceURLs": [
        "/.well-known/openid-configuration", "/.well-known/openid-configuration/", "/openid/v1/jwks",
        "/openid/v1/jwks/"], "verbs": READ}],
}
CLUSTER_ROLE_BINDINGS = {
    "cluster-admin": ("cluster-admin", ["system:masters"]),
    "system:discovery": ("system:discovery", ["system:authenticated"]),
    "system:basic-user": ("system:basic-user", ["system:authenticated"]),
    "system:public-info-viewer": ("system:public-info-viewer", ["system:authenticated", "system:unauthenticated"]),
    # Service accounts read their issuer's discovery documents; nobody else by default.
    "system:service-account-issuer-discovery": ("system:service-account-issuer-discovery",
                                                ["system:serviceaccounts"]),
}


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


def bootstrap_objects() -> list[tuple[str, Object]]:
    objects: list[tuple[str, Object]] = []
    for name, rules in CLUSTER_ROLES.items():
        objects.append(("clusterroles", {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
                                         "metadata": {"name": name, **BOOTSTRAP_META}, "rules": rules}))
    for name, (role, groups) in CLUSTER_ROLE_BINDINGS.items():
        objects.append(("clusterrolebindings", {
            "apiVersion": f"{GROUP}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name, **BOOTSTRAP_META},
            "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": g} for g in groups]}))
    return objects


async def bootstrap_roles(source: RegistryRuleSource) -> None:
    """Creates the bootstrap cluster roles and bindings that are missing (post-start hook)."""
    for resource, obj in bootstrap_objects():
        store = source.stores.get(resource)
        if store is None:
            return
        try:
            await store.create(SYSTEM, obj)
            log.info("created %s %s", obj["kind"], obj["metadata"]["name"])
        except errors.StatusError as err:
            if err.code != 409:
                raise
