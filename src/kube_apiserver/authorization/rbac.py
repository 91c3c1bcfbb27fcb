"""The RBAC authorizer (k8s plugin/pkg/auth/authorizer/rbac): a request is allowed when a rule of a
role bound to the user, one of its groups or its service account covers it. Roles and bindings come
from a RuleSource (the registry, through the watch cache)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from .authorizer import ALLOW, NO_OPINION, Attributes, Rules

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


def describe_subject(subject: Object, binding_namespace: str) -> str:
    name = subject.get("name", "")
    if subject.get("kind") == "ServiceAccount":
        name = f"{name}/{subject.get('namespace') or binding_namespace}"
    return f'{subject.get("kind", "")} "{name}"'


def describe_binding(binding: Object, subject: Object, namespace: str) -> str:
    """Where an allowing rule came from, as the RBAC authorizer's reason names it."""
    ref = binding.get("roleRef") or {}
    name = binding["metadata"]["name"]
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    if namespace:
        name = f"{name}/{namespace}"
    return (f'{kind} "{name}" of {ref.get("kind", "")} "{ref.get("name", "")}" to '
            f"{describe_subject(subject, namespace)}")


class RBACAuthorizer:
    def __init__(self, source: RuleSource):
        self.source = source

    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        failures: list[str] = []
        async for rules, where in self._visit(attrs.user, attrs.namespace, failures):
            if any(rule_allows(rule, attrs) for rule in rules):
                return ALLOW, f"RBAC: allowed by {where}"
        return NO_OPINION, f"RBAC: {', '.join(failures)}" if failures else ""

    async def rules_for(self, user: Any, namespace: str) -> Rules:
        """The rules that apply to the user in the namespace (SelfSubjectRulesReview)."""
        failures: list[str] = []
        resource_rules: list[Object] = []
        non_resource_rules: list[Object] = []
        async for rules, _where in self._visit(user, namespace, failures):
            for rule in rules:
                if rule.get("resources"):
                    resource_rules.append(_resource_rule(rule))
                if rule.get("nonResourceURLs"):
                    non_resource_rules.append({"verbs": rule.get("verbs") or [],
                                               "nonResourceURLs": rule["nonResourceURLs"]})
        return Rules(resource_rules, non_resource_rules, bool(failures), ", ".join(failures))

    async def _visit(self, user: Any, namespace: str, failures: list[str]) -> AsyncIterator[tuple[list, str]]:
        """The rules of each role bound to the user (cluster-wide, then in the namespace), with the binding
        that grants them; roles that do not exist are recorded in `failures`."""
        sources = [(await self.source.cluster_role_bindings(), "")]
        if namespace:
            sources.append((await self.source.role_bindings(namespace), namespace))
        for bindings, binding_namespace in sources:
            for binding in bindings:
                subject = next((s for s in binding.get("subjects") or []
                                if subject_matches(s, user, binding_namespace)), None)
                if subject is None:
                    continue
                role = await self._role(binding.get("roleRef") or {}, binding_namespace, failures)
                if role is not None:
                    yield role.get("rules") or [], describe_binding(binding, subject, binding_namespace)

    async def _role(self, ref: Object, namespace: str, failures: list[str]) -> Object | None:
        name = ref.get("name", "")
        if ref.get("kind") == "ClusterRole":
            role, what = await self.source.cluster_role(name), "clusterrole"
        else:
            role, what = await self.source.role(namespace, name), "role"
        if role is None:
            failures.append(f'{what}.rbac.authorization.k8s.io "{name}" not found')
        return role


def _resource_rule(rule: Object) -> Object:
    out = {"verbs": rule.get("verbs") or []}
    for key in ("apiGroups", "resources", "resourceNames"):
        if rule.get(key):
            out[key] = rule[key]
    return out
