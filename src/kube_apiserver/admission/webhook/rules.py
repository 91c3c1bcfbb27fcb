"""What a request is to the matchers, and rule matching
(k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules). Shared by the webhook plugins and
the admission policies."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..interfaces import Attributes

Object = dict[str, Any]
GROUP = "admissionregistration.k8s.io"
# IsExemptAdmissionConfigurationResource: admission never calls out for its own configuration.
EXEMPT_KINDS = frozenset(("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                          "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                          "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"))


@dataclass(frozen=True, slots=True)
class GVR:
    group: str
    version: str
    resource: str

    def as_dict(self) -> Object:
        return {"group": self.group, "version": self.version, "resource": self.resource}

    def __str__(self) -> str:
        return f"{self.group}/{self.version}, Resource={self.resource}"  # schema.GroupVersionResource.String


@dataclass(frozen=True, slots=True)
class GVK:
    group: str
    version: str
    kind: str

    def as_dict(self) -> Object:
        return {"group": self.group, "version": self.version, "kind": self.kind}

    def __str__(self) -> str:
        return f"{self.group}/{self.version}, Kind={self.kind}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass(frozen=True, slots=True)
class Request:
    """The parts of admission.Attributes that matching reads."""

    operation: str
    resource: GVR
    subresource: str
    kind: GVK
    namespace: str
    name: str
    object: Object | None
    old_object: Object | None

    def with_resource(self, resource: GVR) -> Request:
        """attrWithResourceOverride: the request as if made to an equivalent resource."""
        return replace(self, resource=resource)


def request_of(attrs: Attributes) -> Request:
    """The attributes name the kind's group/version; for a subresource of another kind (scale) the
    served resource's group/version differs: ResourceMapper.served_resource puts it right."""
    return Request(attrs.operation, GVR(attrs.group, attrs.version, attrs.resource), attrs.subresource,
                   GVK(attrs.group, attrs.version, attrs.kind), attrs.namespace, attrs.name, attrs.object,
                   attrs.old_object)


def is_exempt(request: Request) -> bool:
    return request.kind.group == GROUP and request.kind.kind in EXEMPT_KINDS


def _exact_or_wildcard(items: Any, requested: str) -> bool:
    return isinstance(items, list) and ("*" in items or requested in items)


def _scope_matches(scope: Any, request: Request) -> bool:
    if scope in (None, "*"):
        return True
    is_namespace = request.resource == NAMESPACES
    if scope == "Namespaced":
        return not is_namespace and request.namespace != ""
    if scope == "Cluster":
        return is_namespace or request.namespace == ""
    return False


NAMESPACES = GVR("", "v1", "namespaces")


def _resource_matches(resources: Any, request: Request) -> bool:
    for entry in resources if isinstance(resources, list) else ():
        res, _, sub = str(entry).partition("/")
        if res in ("*", request.resource.resource) and sub in ("*", request.subresource):
            return True
    return False


def rule_matches(rule: Object, request: Request) -> bool:
    """rules.Matcher.Matches for one RuleWithOperations (a dict with operations and the Rule inline)."""
    operations = rule.get("operations")
    return (_scope_matches(rule.get("scope"), request)
            and isinstance(operations, list) and ("*" in operations or request.operation in operations)
            and _exact_or_wildcard(rule.get("apiGroups"), request.resource.group)
            and _exact_or_wildcard(rule.get("apiVersions"), request.resource.version)
            and _resource_matches(rule.get("resources"), request))


def any_rule_matches(rules: Any, request: Request) -> bool:
    return any(rule_matches(rule, request) for rule in rules if isinstance(rule, dict)) \
        if isinstance(rules, list) else False
