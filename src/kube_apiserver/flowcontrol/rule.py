"""Which FlowSchema a request matches (k8s.io/apiserver pkg/util/flowcontrol/rule.go), the order they are
tried in, and the flow a request belongs to within its schema."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Object = dict[str, Any]
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
BY_USER, BY_NAMESPACE = "ByUser", "ByNamespace"


@dataclass(frozen=True)
class RequestDigest:
    """What classification reads: the user and the request's info (its verb, path, resource...)."""

    user_name: str
    groups: tuple[str, ...]
    is_resource_request: bool
    verb: str
    path: str = ""
    api_group: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _list(obj: Any, key: str) -> list[Any]:
    value = _get(obj, key)
    return value if isinstance(value, list) else []


def matches_flow_schema(digest: RequestDigest, spec: Object) -> bool:
    return CompiledRules(spec).matches(digest)


def _names(listed: list[Any], wildcard: str) -> frozenset[str] | None:
    """containsString's list as a set; None when it is the wildcard alone (everything matches)."""
    return None if listed == [wildcard] else frozenset(item for item in listed if isinstance(item, str))


def _within(value: str, names: frozenset[str] | None) -> bool:
    return names is None or value in names


class _Subjects:
    """matchesASubject: users, groups and service accounts by name ("*": any), service accounts by namespace."""

    def __init__(self, subjects: list[Any]):
        self.any_user = False
        self.users: set[str] = set()
        self.groups: set[str] = set()
        self.account_prefixes: list[str] = []
        for subject in subjects:
            kind = _get(subject, "kind")
            if kind == "User" and isinstance(name := _get(_get(subject, "user"), "name"), str):
                self.any_user |= name == "*"
                self.users.add(name)
            elif kind == "Group" and isinstance(name := _get(_get(subject, "group"), "name"), str):
                self.any_user |= name == "*"
                self.groups.add(name)
            elif kind == "ServiceAccount":
                account = _get(subject, "serviceAccount")
                namespace, name = _get(account, "namespace"), _get(account, "name")
                if isinstance(namespace, str) and isinstance(name, str):
                    if name == "*":
                        self.account_prefixes.append(f"{SERVICE_ACCOUNT_PREFIX}{namespace}:")
                    else:
                        self.users.add(f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}")

    def match(self, digest: RequestDigest) -> bool:
        if self.any_user or digest.user_name in self.users:
            return True
        if self.groups and not self.groups.isdisjoint(digest.groups):
            return True
        return any(digest.user_name.startswith(prefix) for prefix in self.account_prefixes)


class _ResourceRule:
    def __init__(self, rule: Object):
        self.verbs = _names(_list(rule, "verbs"), "*")
        self.resources = _names(_list(rule, "resources"), "*")
        self.api_groups = _names(_list(rule, "apiGroups"), "*")
        self.cluster_scope = _get(rule, "clusterScope") is True
        self.namespaces = _names(_list(rule, "namespaces"), "*")

    def match(self, digest: RequestDigest) -> bool:
        resource = f"{digest.resource}/{digest.subresource}" if digest.subresource else digest.resource
        if not (
            _within(digest.verb, self.verbs)
            and _within(resource, self.resources)
            and _within(digest.api_group, self.api_groups)
        ):
            return False
        if not digest.namespace:
            return self.cluster_scope
        return _within(digest.namespace, self.namespaces)


class _NonResourceRule:
    def __init__(self, rule: Object):
        self.verbs = _names(_list(rule, "verbs"), "*")
        urls = [url for url in _list(rule, "nonResourceURLs") if isinstance(url, str)]
        self.any_url = "*" in urls
        self.urls = frozenset(urls)
        # "/a/*" and "/a" both match below "/a/"
        self.prefixes = tuple({_slashed(url.removesuffix("*")) for url in urls})

    def match(self, digest: RequestDigest) -> bool:
        if not _within(digest.verb, self.verbs):
            return False
        return self.any_url or digest.path in self.urls or digest.path.startswith(self.prefixes)


def _slashed(prefix: str) -> str:
    return prefix if prefix.endswith("/") else prefix + "/"


class _PolicyRule:
    def __init__(self, rule: Object):
        self.subjects = _Subjects(_list(rule, "subjects"))
        self.resource_rules = [_ResourceRule(r) for r in _list(rule, "resourceRules")]
        self.non_resource_rules = [_NonResourceRule(r) for r in _list(rule, "nonResourceRules")]

    def match(self, digest: RequestDigest) -> bool:
        if not self.subjects.match(digest):
            return False
        rules = self.resource_rules if digest.is_resource_request else self.non_resource_rules
        return any(rule.match(digest) for rule in rules)


class CompiledRules:
    """A FlowSchema's rules, read once when the configuration changes (matchesFlowSchema)."""

    def __init__(self, spec: Object):
        self.rules = [_PolicyRule(rule) for rule in _list(spec, "rules")]

    def matches(self, digest: RequestDigest) -> bool:
        return any(rule.match(digest) for rule in self.rules)


def precedence_order(schema: Object) -> tuple[int, str]:
    """FlowSchemaSequence: by matchingPrecedence, then by name."""
    precedence = _get(schema.get("spec"), "matchingPrecedence")
    return (precedence if isinstance(precedence, int) else 1000, schema["metadata"]["name"])


def flow_distinguisher(digest: RequestDigest, spec: Object) -> str:
    method = _get(_get(spec, "distinguisherMethod"), "type")
    if method == BY_USER:
        return digest.user_name
    if method == BY_NAMESPACE:
        return digest.namespace
    return ""
