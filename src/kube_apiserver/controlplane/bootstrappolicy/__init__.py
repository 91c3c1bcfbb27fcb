"""The RBAC bootstrap policy of kube-apiserver v1.34 (k8s plugin/pkg/auth/authorizer/rbac/bootstrappolicy):
the objects the rbac/bootstrap-roles post-start hook creates and reconciles. Every call builds fresh
objects, so callers may change what they get."""

from .controller_policy import controller_role_bindings, controller_roles
from .helpers import AUTOUPDATE_ANNOTATION
from .namespace_policy import namespace_role_bindings, namespace_roles
from .policy import (
           cluster_role_bindings,
           cluster_role_bindings_to_split,
           cluster_roles,
           cluster_roles_to_aggregate,
)

__all__ = ["AUTOUPDATE_ANNOTATION", "cluster_role_bindings", "cluster_role_bindings_to_split", "cluster_roles",
           "cluster_roles_to_aggregate", "controller_role_bindings", "controller_roles", "namespace_role_bindings",
           "namespace_roles"]
