"""What quota knows of one kind of object (k8s.io/apiserver/pkg/quota/v1: the Evaluator interface, the
generic object-count evaluator, Matches, CalculateUsageStats and CalculateUsage)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from ...apimachinery import quantity
from ..interfaces import CREATE, Attributes
from . import resources as rl
from .resources import ResourceList

Object = dict[str, Any]
Selector = dict[str, Any]  # a ScopedResourceSelectorRequirement: scopeName, operator, values
ItemsFunc = Callable[["Evaluator", str], Awaitable[list[Object]]]  # (evaluator, namespace) -> objects


class Evaluator(Protocol):
    group: str
    resource: str

    def constraints(self, required: list[str], obj: Object) -> str | None:
        """Why the object cannot be admitted under quotas limiting `required`, or None."""

    def handles(self, attrs: Attributes) -> bool: ...

    def matching_resources(self, names: Iterable[str]) -> list[str]: ...

    def scope_matches(self, selector: Selector, obj: Object) -> bool: ...

    def usage(self, obj: Object) -> ResourceList: ...


def object_count_name(group: str, resource: str) -> str:
    """ObjectCountQuotaResourceNameFor: count/<resource>[.<group>]."""
    return f"count/{resource}.{group}" if group else f"count/{resource}"


def scope_selectors(quota: Object) -> list[Selector]:
    """getScopeSelectorsFromQuota: spec.scopes as Exists requirements, then the scope selector's."""
    spec = quota.get("spec") or {}
    selectors = [{"scopeName": scope, "operator": "Exists"} for scope in spec.get("scopes") or []]
    return selectors + list((spec.get("scopeSelector") or {}).get("matchExpressions") or [])


def hard_names(quota: Object) -> list[str]:
    return list((quota.get("status") or {}).get("hard") or {})


def matches(evaluator: Evaluator, quota: Object, obj: Object) -> bool:
    """The quota limits a resource of this kind and every one of its scopes matches the object."""
    if not evaluator.matching_resources(hard_names(quota)):
        return False
    return all(evaluator.scope_matches(selector, obj) for selector in scope_selectors(quota))


def usage_stats(evaluator: Evaluator, items: list[Object], selectors: list[Selector],
                names: list[str]) -> ResourceList:
    """CalculateUsageStats: each tracked resource from zero, plus the usage of every matching item."""
    used: ResourceList = {name: quantity.ZERO for name in names}
    for item in items:
        if all(evaluator.scope_matches(selector, item) for selector in selectors):
            used = rl.add(used, evaluator.usage(item))
    return used


async def calculate_usage(namespace: str, quota: Object, hard: ResourceList, evaluators: list[Evaluator],
                          items: ItemsFunc) -> ResourceList:
    """CalculateUsage: the observed usage of every resource of `hard` some evaluator tracks."""
    selectors = scope_selectors(quota)
    matched = rl.intersection(hard, [n for e in evaluators for n in e.matching_resources(hard)])
    usage: ResourceList = {}
    for evaluator in evaluators:
        tracked = evaluator.matching_resources(matched)
        if tracked:
            found = await items(evaluator, namespace)
            usage = rl.add(usage, usage_stats(evaluator, found, selectors, tracked))
    return rl.mask(usage, matched)


def no_scope(selector: Selector, obj: Object) -> bool:
    """MatchesNoScopeFunc."""
    return False


class ObjectCountEvaluator:
    """Counts the objects of one resource (count/<resource>.<group>, and a legacy alias like `secrets`)."""

    def __init__(self, group: str, resource: str, alias: str = ""):
        self.group, self.resource = group, resource
        self.names = [object_count_name(group, resource)] + ([alias] if alias else [])

    def constraints(self, required: list[str], obj: Object) -> str | None:
        return None

    def handles(self, attrs: Attributes) -> bool:
        return attrs.operation == CREATE and not attrs.subresource

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return rl.intersection(names, self.names)

    def scope_matches(self, selector: Selector, obj: Object) -> bool:
        return no_scope(selector, obj)

    def usage(self, obj: Object) -> ResourceList:
        return {name: quantity.from_int(1) for name in self.names}


class Registry:
    """The evaluators by group and resource; an unknown resource gets an object-count evaluator."""

    def __init__(self, evaluators: Iterable[Evaluator]):
        self.evaluators = {(e.group, e.resource): e for e in evaluators}

    def get(self, group: str, resource: str) -> Evaluator:
        evaluator = self.evaluators.get((group, resource))
        if evaluator is None:
            evaluator = self.evaluators[(group, resource)] = ObjectCountEvaluator(group, resource)
        return evaluator

    def known(self) -> list[Evaluator]:
        return list(self.evaluators.values())
