"""The roles and role bindings kube-apiserver keeps in kube-system and kube-public (k8s bootstrappolicy
namespace_policy.go, v1.34: the leader-locking roles still carry their configmap rules, which v1.35
removed)."""

from __future__ import annotations

from .helpers import (
    CONTROLLER_ROLE_PREFIX,
    COORDINATION,
    KUBE_PUBLIC,
    KUBE_SYSTEM,
    LEGACY,
    READ,
    Object,
    events_rule,
    role,
    role_binding,
    rule,
    service_accounts,
    users,
)

LEASE_VERBS = ("get", "watch", "list", "create", "update")


def _leader_locking(component: str) -> Object:
    return role(f"system::leader-locking-{component}", KUBE_SYSTEM, [
        rule(["watch"], [LEGACY], ["configmaps"]),
        rule(["get", "update"], [LEGACY], ["configmaps"], [component]),
        rule(LEASE_VERBS, [COORDINATION], ["leases"]),
        rule(LEASE_VERBS, [COORDINATION], ["leasecandidates"]),
    ])


def namespace_roles() -> list[Object]:
    """NamespaceRoles(), kube-public first as the testdata lists them."""
    return [
        role(CONTROLLER_ROLE_PREFIX + "bootstrap-signer", KUBE_PUBLIC, [
            rule(READ, [LEGACY], ["configmaps"]),
            rule(["update"], [LEGACY], ["configmaps"], ["cluster-info"]),
            events_rule(),
        ]),
        # the configmap holding the authentication configuration extension API servers start from
        role("extension-apiserver-authentication-reader", KUBE_SYSTEM, [
            rule(READ, [LEGACY], ["configmaps"], ["extension-apiserver-authentication"])]),
        _leader_locking("kube-controller-manager"),
        _leader_locking("kube-scheduler"),
        role(CONTROLLER_ROLE_PREFIX + "bootstrap-signer", KUBE_SYSTEM, [rule(READ, [LEGACY], ["secrets"])]),
        # deprecated since 1.10, kept under the GA deprecation policy
        role(CONTROLLER_ROLE_PREFIX + "cloud-provider", KUBE_SYSTEM, [
            rule(["create", "get", "list", "watch"], [LEGACY], ["configmaps"])]),
        role(CONTROLLER_ROLE_PREFIX + "token-cleaner", KUBE_SYSTEM, [
            rule(["delete", "get", "list", "watch"], [LEGACY], ["secrets"]), events_rule()]),
    ]


def namespace_role_bindings() -> list[Object]:
    """NamespaceRoleBindings()."""
    signer = CONTROLLER_ROLE_PREFIX + "bootstrap-signer"
    return [
        role_binding(signer, KUBE_PUBLIC, service_accounts(KUBE_SYSTEM, "bootstrap-signer")),
        role_binding("extension-apiserver-authentication-reader", KUBE_SYSTEM,
                     users("system:kube-controller-manager", "system:kube-scheduler"),
                     name="system::extension-apiserver-authentication-reader"),
        role_binding("system::leader-locking-kube-controller-manager", KUBE_SYSTEM, [
            *users("system:kube-controller-manager"),
            *service_accounts(KUBE_SYSTEM, "kube-controller-manager", "leader-election-controller")]),
        role_binding("system::leader-locking-kube-scheduler", KUBE_SYSTEM, [
            *users("system:kube-scheduler"), *service_accounts(KUBE_SYSTEM, "kube-scheduler")]),
        role_binding(signer, KUBE_SYSTEM, service_accounts(KUBE_SYSTEM, "bootstrap-signer")),
        role_binding(CONTROLLER_ROLE_PREFIX + "cloud-provider", KUBE_SYSTEM,
                     service_accounts(KUBE_SYSTEM, "cloud-provider")),
        role_binding(CONTROLLER_ROLE_PREFIX + "token-cleaner", KUBE_SYSTEM,
                     service_accounts(KUBE_SYSTEM, "token-cleaner")),
    ]
