"""--authorization-mode: the authorizers, in the order given, after the system:masters rule."""

from __future__ import annotations

from .authorizer import AlwaysAllow, AlwaysDeny, Authorizer, PrivilegedGroups, UnionAuthorizer
from .rbac import RBACAuthorizer, RuleSource


def new_authorizer(modes: list[str], rbac_source: RuleSource | None = None, *,
                   webhook: Authorizer | None = None, node: Authorizer | None = None) -> Authorizer:
    authorizers: list[Authorizer] = [PrivilegedGroups()]
    for mode in modes:
        if mode == "AlwaysAllow":
            authorizers.append(AlwaysAllow())
        elif mode == "AlwaysDeny":
            authorizers.append(AlwaysDeny())
        elif mode == "RBAC":
            assert rbac_source is not None, "RBAC needs the roles and bindings"
            authorizers.append(RBACAuthorizer(rbac_source))
        elif mode == "Node":
            assert node is not None, "Node needs the node graph"
            authorizers.append(node)
        elif mode == "Webhook":
            assert webhook is not None, "Webhook needs its configuration"
            authorizers.append(webhook)
        else:
            raise ValueError(f"authorization mode {mode} is not implemented")
    return UnionAuthorizer(authorizers)
