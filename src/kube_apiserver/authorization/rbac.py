"""The RBAC authorizer (k8s plugin/pkg/auth/authorizer/rbac): a request is allowed when a rule of a
role bound to the user, one of its groups or its service account covers it. Roles and bindings come
from a RuleSource (the registry, through the watch cache)."""

from __future__ import annotations

from typing import Any, Protocol

from .authorizer import ALLOW, NO_OPINION, Attributes

Object = dict[str, Any]
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


class RuleSource(Protocol):
    async def cluster_role_bindings(self) -> list[Object]: ...

    async def role_bindings(self, namespace: str) -> list[Object]: ...

    async def cluster_role(self, name: str) -> Object | None: ...

    async def role(self, namespace: str, name: str) -> Object | None: ...


def subject_matches(subject: Object, user: Any, binding_namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return user.name == f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"
    return False


def _has(values: list[str] | None, value: str) -> bool:
    return bool(values) and ("*" in values or value in values)  # type: ignore[operator]


def resource_matches(rule: Object, resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for candidate in rule.get("resources") or []:
        if candidate in ("*", combined):
            return True
        if subresource and candidate == f"*/{subresource}":
            return True
    return False


def non_resource_url_matches(rule: Object, path: str) -> bool:
    for url in rule.get("nonResourceURLs") or []:
        if url in ("*", path) or (url.endswith("*") and path.startswith(url[:-1])):
            return True
    return False


def rule_allows(rule: Object, attrs: Attributes) -> bool:
    if not _has(rule.get("verbs"), attrs.verb):
        return False
    if not attrs.is_resource_request:
        return non_resource_url_matches(rule, attrs.path)
    if not _has(rule.get("apiGroups"), attrs.api_group):
        return False
    if not resource_matches(rule, attrs.resource, attrs.subresource):
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


class RBACAuthorizer:
    def __init__(self, source: RuleSource):
        self.source = source

    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        for binding in await self.source.cluster_role_bindings():
            if await self._binding_allows(binding, attrs, ""):
                return ALLOW, ""
        if attrs.namespace:
            for binding in await self.source.role_bindings(attrs.namespace):
                if await self._binding_allows(binding, attrs, attrs.namespace):
                    return ALLOW, ""
        return NO_OPINION, ""

    async def _binding_allows(self, binding: Object, attrs: Attributes, namespace: str) -> bool:
        if not any(subject_matches(s, attrs.user, namespace) for s in binding.get("subjects") or []):
            return False
        ref = binding.get("roleRef") or {}
        if ref.get("kind") == "ClusterRole":
            role = await self.source.cluster_role(ref.get("name", ""))
        else:
            role = await self.source.role(namespace, ref.get("name", ""))
        return role is not None and any(rule_allows(rule, attrs) for rule in role.get("rules") or [])
