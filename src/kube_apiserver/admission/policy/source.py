"""The policies and their bindings as the dispatcher sees them (policy/generic policy_source.go): read
from the two resources' watch caches, re-read only when a cache has moved, each policy compiled once
per resourceVersion. Only policies with at least one binding are hooks."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ...registry.context import Context
from ...registry.options import ListQuery
from ..lister import ADMISSION_USER, RouteTable, route_storage
from ..webhook.rules import GROUP
from .compile import CompiledPolicy, compile_policy

Object = dict[str, Any]
UNCACHED_REFRESH_SECONDS = 1.0


@dataclass
class PolicyHook:
    policy: Object
    bindings: list[Object]
    compiled: CompiledPolicy

    @property
    def name(self) -> str:
        return (self.policy.get("metadata") or {}).get("name") or ""


class CachedList:
    """One cluster-scoped resource's objects, re-listed from its watch cache when the cache moved (at
    most once a second without a watch cache, as an informer lags)."""

    def __init__(self, resource: str):
        self.resource = resource
        self.store: Any = None
        self.version: Any = None
        self.items: list[Object] = []

    def bind(self, group_versions: RouteTable) -> None:
        self.store = route_storage(group_versions, GROUP, self.resource)

    def cache_version(self) -> Any:
        cache = getattr(getattr(self.store, "storage", None), "cache", None)
        if cache is None:
            return ("uncached", int(time.monotonic() / UNCACHED_REFRESH_SECONDS))
        return cache.resource_version

    async def refresh(self) -> bool:
        """Whether the list changed since the last call."""
        if self.store is None:
            return False
        version = self.cache_version()
        if version == self.version:
            return False
        listed = await self.store.list(Context("", ADMISSION_USER), ListQuery(resource_version="0"))
        self.items = sorted(listed["items"], key=lambda o: (o.get("metadata") or {}).get("name") or "")
        self.version = version
        return True


def _name(obj: Object) -> str:
    return (obj.get("metadata") or {}).get("name") or ""


@dataclass
class PolicySource:
    policies: CachedList = field(default_factory=lambda: CachedList("validatingadmissionpolicies"))
    bindings: CachedList = field(default_factory=lambda: CachedList("validatingadmissionpolicybindings"))
    compiled: dict[str, tuple[str, CompiledPolicy]] = field(default_factory=dict)
    _hooks: list[PolicyHook] = field(default_factory=list)

    def bind(self, group_versions: RouteTable) -> None:
        self.policies.bind(group_versions)
        self.bindings.bind(group_versions)

    async def hooks(self) -> list[PolicyHook]:
        changed = await self.policies.refresh()
        changed = await self.bindings.refresh() or changed
        if changed:
            self._hooks = self._calculate()
        return self._hooks

    def _compile(self, policy: Object) -> CompiledPolicy:
        name, version = _name(policy), (policy.get("metadata") or {}).get("resourceVersion") or ""
        cached = self.compiled.get(name)
        if cached is None or cached[0] != version:
            cached = self.compiled[name] = (version, compile_policy(policy))
        return cached[1]

    def _calculate(self) -> list[PolicyHook]:
        """calculatePolicyData: each bound policy with its bindings, in name order."""
        by_policy: dict[str, list[Object]] = {}
        for binding in self.bindings.items:
            by_policy.setdefault((binding.get("spec") or {}).get("policyName") or "", []).append(binding)
        hooks = [PolicyHook(policy, by_policy[_name(policy)], self._compile(policy))
                 for policy in self.policies.items if _name(policy) in by_policy]
        for name in set(self.compiled) - {hook.name for hook in hooks}:
            del self.compiled[name]
        return hooks
