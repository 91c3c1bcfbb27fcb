"""Whether a request falls under a policy's matchConstraints or a binding's matchResources
(k8s.io/apiserver/pkg/admission/plugin/policy/matching), for the admission policy plugins: selectors,
excluded rules, then the resource rules (with resourceNames), equivalent resources under matchPolicy
Equivalent. Answers the resource and kind the request matched as."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...apimachinery import errors
from .predicates import NamespaceLabels, match_namespace_selector, match_object_selector, parse_selector
from .resources import ResourceMapper
from .rules import GVK, GVR, Request, rule_matches

Object = dict[str, Any]


@dataclass(frozen=True)
class Match:
    resource: GVR
    kind: GVK


def _named_rule_matches(rule: Object, request: Request) -> bool:
    if not rule_matches(rule, request):
        return False
    names = rule.get("resourceNames") or []
    return not names or request.name in names


def matches_resource_rules(rules: list[Any], match_policy: str | None, request: Request,
                           mapper: ResourceMapper) -> Match | None:
    """matchesResourceRules: as the request is, else (Equivalent) as an equivalent resource."""
    named = [rule for rule in rules if isinstance(rule, dict)]
    if any(_named_rule_matches(rule, request) for rule in named):
        return Match(request.resource, request.kind)
    if match_policy in (None, "Exact"):
        return None
    for rule in named:
        for equivalent in mapper.equivalents(request.resource, request.subresource):
            if equivalent == request.resource or not _named_rule_matches(rule, request.with_resource(equivalent)):
                continue
            kind = mapper.kind_for(equivalent, request.subresource)
            if kind is None:
                raise errors.internal_error(f"unable to convert to {equivalent}: unknown kind")
            return Match(equivalent, kind)
    return None


async def matches(match_resources: Object, request: Request, namespaces: NamespaceLabels,
                  mapper: ResourceMapper) -> Match | None:
    """Matcher.Matches. Rules are checked before the selectors (cheaper; a selector error only counts
    when the rules match, as upstream). The selectors are parsed per call; callers may cache them."""
    policy = match_resources.get("matchPolicy")
    if matches_resource_rules(match_resources.get("excludeResourceRules") or [], policy, request, mapper):
        return None
    rules = match_resources.get("resourceRules") or []
    found = matches_resource_rules(rules, policy, request, mapper) if rules else Match(request.resource, request.kind)
    if found is None:
        return None
    if not await match_namespace_selector(parse_selector(match_resources.get("namespaceSelector")), request,
                                          namespaces):
        return None
    if not match_object_selector(parse_selector(match_resources.get("objectSelector")), request):
        return None
    return found
