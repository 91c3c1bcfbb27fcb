"""TaintNodesByCondition: a new node is tainted not-ready (NoSchedule) until its controller finds it ready
(plugin/pkg/admission/nodetaint)."""

from __future__ import annotations

from .interfaces import CREATE, Attributes

NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


class TaintNodesByCondition:
    name = "TaintNodesByCondition"

    def handles(self, operation: str) -> bool:
        return operation == CREATE

    async def admit(self, attrs: Attributes) -> None:
        if attrs.group or attrs.resource != "nodes" or attrs.subresource or not isinstance(attrs.object, dict):
            return
        spec = attrs.object.setdefault("spec", {})
        taints = spec.get("taints") if isinstance(spec.get("taints"), list) else []
        if not any(isinstance(t, dict) and (t.get("key"), t.get("effect")) == tuple(NOT_READY.values())
                   for t in taints):
            spec["taints"] = [*taints, dict(NOT_READY)]
