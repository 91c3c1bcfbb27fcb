"""The ResourceQuota admission plugin (k8s.io/apiserver/pkg/admission/plugin/resourcequota): creates and
updates in a namespace are charged to the namespace's quotas, and refused when a quota would be exceeded."""

from __future__ import annotations

from ..interfaces import CREATE, UPDATE, Attributes
from .accessor import QuotaAccessor
from .controller import QuotaEvaluator
from .generic import Evaluator, ObjectCountEvaluator, Registry

__all__ = ["Evaluator", "ObjectCountEvaluator", "QuotaAccessor", "Registry", "ResourceQuota"]


class ResourceQuota:
    name = "ResourceQuota"

    def __init__(self, accessor: QuotaAccessor, registry: Registry):
        self.accessor = accessor
        self.evaluator = QuotaEvaluator(accessor, registry)

    def handles(self, operation: str) -> bool:
        return operation in (CREATE, UPDATE)

    async def validate(self, attrs: Attributes) -> None:
        # Cluster-scoped objects, and the creation of a namespace, are never charged.
        if not attrs.namespace or (attrs.operation == CREATE and attrs.kind == "Namespace" and not attrs.group):
            return
        await self.evaluator.evaluate(attrs)
