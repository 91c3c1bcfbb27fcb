"""The policy source: bound policies only, in name order with their bindings; lists re-read only when
an informer moved; a policy compiled again only when its resourceVersion changed."""

from __future__ import annotations

import asyncio
from typing import Any

from kube_apiserver.admission.policy.source import PolicySource
from kube_apiserver.client.informers import SharedIndexInformer


class ReadCounter:
    """The informer's indexer, counting how often the source reads it."""

    def __init__(self, items: list[dict[str, Any]]):
        self.items = items
        self.lists = 0

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]:
        self.lists += 1
        return list(self.items)


class ListedInformer(SharedIndexInformer):
    """An informer that has listed `items` (never started): the test changes them and moves it."""

    def __init__(self, items: list[dict[str, Any]]):
        super().__init__(None)  # type: ignore[arg-type]
        self.indexer = ReadCounter(items)  # type: ignore[assignment]
        self.synced.set()

    @property
    def items(self) -> list[dict[str, Any]]:
        return self.indexer.items

    @items.setter
    def items(self, items: list[dict[str, Any]]) -> None:
        self.indexer.items = items

    @property
    def reads(self) -> int:
        return self.indexer.lists  # type: ignore[attr-defined]

    def changed(self) -> None:
        self.version += 1


def named(name: str, version: str = "1", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": version}, "spec": spec}


def source(policies: ListedInformer, bindings: ListedInformer) -> PolicySource:
    built = PolicySource()
    built.policies.informer, built.bindings.informer = policies, bindings
    return built


def test_hooks_are_bound_policies_in_name_order() -> None:
    policies = ListedInformer([named("b", validations=[{"expression": "true"}]), named("a"), named("unbound")])
    bindings = ListedInformer([named("x", policyName="b"), named("y", policyName="a"), named("z", policyName="b"),
                            named("w", policyName="missing")])
    hooks = asyncio.run(source(policies, bindings).hooks())
    assert [(h.name, [b["metadata"]["name"] for b in h.bindings]) for h in hooks] == [("a", ["y"]), ("b", ["x", "z"])]


def test_lists_and_compilations_are_reused_until_something_changes() -> None:
    policies = ListedInformer([named("p", validations=[{"expression": "true"}])])
    bindings = ListedInformer([named("b", policyName="p")])
    built = source(policies, bindings)
    first = asyncio.run(built.hooks())
    assert asyncio.run(built.hooks()) is first and (policies.reads, bindings.reads) == (1, 1)
    bindings.changed()
    second = asyncio.run(built.hooks())
    assert second[0].compiled is first[0].compiled and policies.reads == 1
    policies.items = [named("p", "2", validations=[{"expression": "false"}])]
    policies.changed()
    third = asyncio.run(built.hooks())
    assert third[0].compiled is not first[0].compiled
    assert third[0].compiled.validations[0].expression.text == "false"
    bindings.items = []
    bindings.changed()
    assert asyncio.run(built.hooks()) == [] and built.compiled == {}
