"""rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding (pkg/apis/rbac,
pkg/registry/rbac).

Served as plain storage: the RBAC authorizer, the escalation checks of the policy-based storage
(pkg/registry/rbac/*/policybased) and the rbac/bootstrap-roles post-start hook are not part of this group."""

from __future__ import annotations

from ...registry.store import Store
from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from . import proto  # noqa: F401 - registers the protobuf kinds
from .bindings import (
    CLUSTER_ROLE_BINDING_INFO,
    CLUSTER_ROLE_BINDING_TABLE,
    ROLE_BINDING_INFO,
    ROLE_BINDING_TABLE,
    ClusterRoleBindingStrategy,
    RoleBindingStrategy,
)
from .roles import CLUSTER_ROLE_INFO, GROUP, ROLE_INFO, ClusterRoleStrategy, RoleStrategy


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    return APIGroupInfo(GROUP, {"v1": {
        "roles": Store(ROLE_INFO, RoleStrategy(ROLE_INFO), storage, "/registry/roles"),
        "rolebindings": Store(ROLE_BINDING_INFO, RoleBindingStrategy(ROLE_BINDING_INFO), storage,
                              "/registry/rolebindings", ROLE_BINDING_TABLE),
        "clusterroles": Store(CLUSTER_ROLE_INFO, ClusterRoleStrategy(CLUSTER_ROLE_INFO), storage,
                              "/registry/clusterroles"),
        "clusterrolebindings": Store(CLUSTER_ROLE_BINDING_INFO, ClusterRoleBindingStrategy(CLUSTER_ROLE_BINDING_INFO),
                                     storage, "/registry/clusterrolebindings", CLUSTER_ROLE_BINDING_TABLE),
    }})
