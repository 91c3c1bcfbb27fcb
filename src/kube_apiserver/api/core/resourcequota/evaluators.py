"""The quota evaluators of the core group (pkg/quota/v1/evaluator/core): pods, services (their count,
node ports and load balancers), persistentvolumeclaims (count and storage, per storage class too), and
the legacy object counts (configmaps, secrets, resourcequotas, replicationcontrollers)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ....admission.interfaces import CREATE, UPDATE, Attributes
from ....admission.resourcequota import Evaluator, ObjectCountEvaluator
from ....admission.resourcequota import resources as rl
from ....admission.resourcequota.generic import Selector, no_scope, object_count_name
from ....admission.resourcequota.resources import ResourceList
from ....apimachinery import quantity
from ..podspec.resources import parsed
from .pods import PodEvaluator

Object = dict[str, Any]
SERVICE_COUNT = object_count_name("", "services")
SERVICE_RESOURCES = (SERVICE_COUNT, "services", "services.nodeports", "services.loadbalancers")
PVC_COUNT = object_count_name("", "persistentvolumeclaims")
PVC_RESOURCES = (PVC_COUNT, "persistentvolumeclaims", "requests.storage")
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
LEGACY_COUNTS = ("configmaps", "resourcequotas", "replicationcontrollers", "secrets")


class ServiceEvaluator:
    group, resource = "", "services"

    def constraints(self, required: list[str], obj: Object) -> str | None:
        return None

    def handles(self, attrs: Attributes) -> bool:
        return attrs.operation in (CREATE, UPDATE) and not attrs.subresource

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return rl.intersection(names, SERVICE_RESOURCES)

    def scope_matches(self, selector: Selector, obj: Object) -> bool:
        return no_scope(selector, obj)

    def usage(self, obj: Object) -> ResourceList:
        spec = obj.get("spec") or {}
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        one = quantity.from_int(1)
        result = {SERVICE_COUNT: one, "services": one, "services.loadbalancers": quantity.ZERO,
                  "services.nodeports": quantity.ZERO}
        if spec.get("type") == "NodePort":
            result["services.nodeports"] = quantity.from_int(len(ports))
        elif spec.get("type") == "LoadBalancer":
            counted = [p for p in ports if p.get("nodePort")] if spec.get("allocateLoadBalancerNodePorts") is False \
                else ports
            result["services.nodeports"] = quantity.from_int(len(counted))
            result["services.loadbalancers"] = one
        return result


def _storage_class(pvc: Object) -> str:
    annotation = ((pvc.get("metadata") or {}).get("annotations") or {}).get("volume.beta.kubernetes.io/storage-class")
    if annotation is not None:
        return annotation
    return (pvc.get("spec") or {}).get("storageClassName") or ""


class PersistentVolumeClaimEvaluator:
    group, resource = "", "persistentvolumeclaims"

    def constraints(self, required: list[str], obj: Object) -> str | None:
        return None

    def handles(self, attrs: Attributes) -> bool:
        return not attrs.subresource and attrs.operation in (CREATE, UPDATE)

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        names = list(names)
        by_class = [n for n in names if STORAGE_CLASS_SUFFIX in n and
                    n.split(STORAGE_CLASS_SUFFIX, 1)[1] in ("persistentvolumeclaims", "requests.storage")]
        return rl.intersection(names, PVC_RESOURCES) + by_class

    def scope_matches(self, selector: Selector, obj: Object) -> bool:
        return no_scope(selector, obj)

    def usage(self, obj: Object) -> ResourceList:
        one = quantity.from_int(1)
        result: ResourceList = {PVC_COUNT: one, "persistentvolumeclaims": one}
        storage_class = _storage_class(obj)
        if storage_class:
            result[f"{storage_class}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"] = one
        requested = parsed(((obj.get("spec") or {}).get("resources") or {}).get("requests")).get("storage")
        allocated = parsed((obj.get("status") or {}).get("allocatedResources")).get("storage")
        if allocated is not None and (requested is None or allocated.value > requested.value):
            requested = allocated
        if requested is not None:
            result["requests.storage"] = requested
            if storage_class:
                result[f"{storage_class}{STORAGE_CLASS_SUFFIX}requests.storage"] = requested
        return result


def new_evaluators() -> list[Evaluator]:
    """NewEvaluators: the evaluators with their own rules, and the legacy object counts."""
    evaluators: list[Evaluator] = [PodEvaluator(), ServiceEvaluator(), PersistentVolumeClaimEvaluator()]
    evaluators += [ObjectCountEvaluator("", resource, resource) for resource in LEGACY_COUNTS]
    return evaluators
