"""The policies and their bindings as the dispatcher sees them (policy/generic policy_source.go): read
from the two resources' shared informers, re-read only when an informer has moved, each policy compiled once
per resourceVersion. Only policies with at least one binding are hooks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...apimachinery import errors
from ...client.informers import Lister, SharedIndexInformer, SharedInformerFactory
from ..webhook.rules import GROUP
from .compile import CompiledPolicy, compile_policy

Object = dict[str, Any]


@dataclass
class PolicyHook:
    policy: Object
    bindings: list[Object]
    compiled: CompiledPolicy

    @property
    def name(self) -> str:
        return (self.policy.get("metadata") or {}).get("name") or ""


class CachedList:
    """One cluster-scoped resource's objects, re-read from its informer when the informer moved."""

    def __init__(self, resource: str):
        self.resource = resource
        self.informer: SharedIndexInformer | None = None
        self.version: Any = None
        self.items: list[Object] = []

    def set_informers(self, informers: SharedInformerFactory) -> None:
        self.informer = informers.for_resource(GROUP, "v1", self.resource)

    async def refresh(self) -> bool:
        """Whether the list changed since the last call."""
        if self.informer is None:
            return False
        if not await Lister(self.informer).ready():  # the dispatcher's "not yet ready to handle request"
            raise errors.StatusError(403, "Forbidden", "not yet ready to handle request")
        version = self.informer.version
        if version == self.version:
            return False
        items = self.informer.indexer.list()
        self.items = sorted(items, key=lambda o: (o.get("metadata") or {}).get("name") or "")
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

    def set_informers(self, informers: SharedInformerFactory) -> None:
        self.policies.set_informers(informers)
        self.bindings.set_informers(informers)

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
