"""The policy source: bound policies only, in name order with their bindings; lists re-read only when
a watch cache moved; a policy compiled again only when its resourceVersion changed."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from kube_apiserver.admission.policy.source import PolicySource


class CachedStore:
    """A registry store over a watch cache whose revision the test moves."""

    def __init__(self, items: list[dict[str, Any]]):
        self.items = items
        self.lists = 0
        self.storage = SimpleNamespace(cache=SimpleNamespace(resource_version=1))

    async def list(self, ctx: Any, query: Any) -> dict[str, Any]:
        assert query.resource_version == "0"  # from the cache
        self.lists += 1
        return {"items": list(self.items)}

    def changed(self) -> None:
        self.storage.cache.resource_version += 1


def named(name: str, version: str = "1", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": version}, "spec": spec}


def source(policies: CachedStore, bindings: CachedStore) -> PolicySource:
    built = PolicySource()
    built.policies.store, built.bindings.store = policies, bindings
    return built


def test_hooks_are_bound_policies_in_name_order() -> None:
    policies = CachedStore([named("b", validations=[{"expression": "true"}]), named("a"), named("unbound")])
    bindings = CachedStore([named("x", policyName="b"), named("y", policyName="a"), named("z", policyName="b"),
                            named("w", policyName="missing")])
    hooks = asyncio.run(source(policies, bindings).hooks())
    assert [(h.name, [b["metadata"]["name"] for b in h.bindings]) for h in hooks] == [("a", ["y"]), ("b", ["x", "z"])]


def test_lists_and_compilations_are_reused_until_something_changes() -> None:
    policies = CachedStore([named("p", validations=[{"expression": "true"}])])
    bindings = CachedStore([named("b", policyName="p")])
    built = source(policies, bindings)
    first = asyncio.run(built.hooks())
    assert asyncio.run(built.hooks()) is first and (policies.lists, bindings.lists) == (1, 1)
    bindings.changed()
    second = asyncio.run(built.hooks())
    assert second[0].compiled is first[0].compiled and policies.lists == 1
    policies.items = [named("p", "2", validations=[{"expression": "false"}])]
    policies.changed()
    third = asyncio.run(built.hooks())
    assert third[0].compiled is not first[0].compiled
    assert third[0].compiled.validations[0].expression.text == "false"
    bindings.items = []
    bindings.changed()
    assert asyncio.run(built.hooks()) == [] and built.compiled == {}
