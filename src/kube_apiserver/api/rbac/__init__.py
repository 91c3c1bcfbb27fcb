"""rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding (pkg/apis/rbac,
pkg/registry/rbac).

Writes go through the policy-based storage (pkg/registry/rbac/*/policybased): roles and bindings may
only grant what their author holds (policybased.py). The RBAC authorizer and the rbac/bootstrap-roles
post-start hook live in authorization/ and controlplane/."""

from __future__ import annotations

from ...authorization.authorizer import Authorizer
from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from .bindings import (
    CLUSTER_ROLE_BINDING_INFO,
    CLUSTER_ROLE_BINDING_TABLE,
    ROLE_BINDING_INFO,
    ROLE_BINDING_TABLE,
    ClusterRoleBindingStrategy,
    RoleBindingStrategy,
)
from .policybased import BindingStore, RoleStore
from .resolver import RuleResolver
from .roles import CLUSTER_ROLE_INFO, GROUP, ROLE_INFO, ClusterRoleStrategy, RoleStrategy

# the server's authorizer answers whether a user may `escalate` on roles or `bind` a role
DEPENDENCIES = ("authorizer",)


def new_api_group_info(storage: StorageFactory, authorizer: Authorizer | None = None) -> APIGroupInfo:
    stores = {
        "roles": RoleStore(ROLE_INFO, RoleStrategy(ROLE_INFO), storage, "/registry/roles"),
        "rolebindings": BindingStore(ROLE_BINDING_INFO, RoleBindingStrategy(ROLE_BINDING_INFO), storage,
                                     "/registry/rolebindings", ROLE_BINDING_TABLE),
        "clusterroles": RoleStore(CLUSTER_ROLE_INFO, ClusterRoleStrategy(CLUSTER_ROLE_INFO), storage,
                                  "/registry/clusterroles"),
        "clusterrolebindings": BindingStore(CLUSTER_ROLE_BINDING_INFO,
                                            ClusterRoleBindingStrategy(CLUSTER_ROLE_BINDING_INFO), storage,
                                            "/registry/clusterrolebindings", CLUSTER_ROLE_BINDING_TABLE),
    }
    # the rules a user holds are read from these same registries
    resolver = RuleResolver(dict(stores))
    for store in stores.values():
        store.guard(authorizer, resolver)
    return APIGroupInfo(GROUP, {"v1": dict(stores)})
