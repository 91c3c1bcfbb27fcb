"""The quota evaluator of the ResourceQuota admission plugin
(k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go): a request is checked against every
quota of its namespace that applies to it, and its usage is added to those quotas' status.used before it
is admitted. Requests of one namespace are checked one at a time; quota status is written with the
resourceVersion it was computed from, and on a conflict the quotas are read again and checked again."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from ...apimachinery import errors
from ..interfaces import CREATE, UPDATE, Attributes, forbidden
from . import resources as rl
from .accessor import QuotaAccessor
from .generic import Evaluator, Registry, hard_names, matches
from .resources import ResourceList

Object = dict[str, Any]
RETRIES = 3
# Virtual resources that are not stored, and events (install.DefaultIgnoredResources).
IGNORED = frozenset({
    ("", "bindings"), ("", "componentstatuses"), ("authentication.k8s.io", "tokenreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"), ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"), ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"), ("", "events"), ("events.k8s.io", "events"),
})


def used_of(quota: Object) -> ResourceList:
    return rl.parse((quota.get("status") or {}).get("used"))


def hard_of(quota: Object) -> ResourceList:
    return rl.parse((quota.get("status") or {}).get("hard"))


def _has_usage_stats(quota: Object, interesting: list[str]) -> bool:
    used = (quota.get("status") or {}).get("used") or {}
    return all(name in used for name in hard_names(quota) if name in interesting)


def _interesting(quotas: list[Object], attrs: Attributes, evaluator: Evaluator) -> list[int]:
    """The quotas that apply to the object, refusing it when one cannot take it (constraints, no usage)."""
    obj, indexes = attrs.object or {}, []
    for i, quota in enumerate(quotas):
        if not matches(evaluator, quota, obj):
            continue
        name = quota["metadata"]["name"]
        restricted = evaluator.matching_resources(hard_names(quota))
        why = evaluator.constraints(restricted, obj)
        if why is not None:
            raise forbidden(attrs, f"failed quota: {name}: {why}")
        if not _has_usage_stats(quota, restricted):
            raise forbidden(attrs, f"status unknown for quota: {name}, resources: "
                                   f"{rl.pretty_print_names(restricted)}")
        indexes.append(i)
    return indexes


def _deltas(quotas: list[Object], indexes: list[int], attrs: Attributes, evaluator: Evaluator,
            usage: ResourceList) -> dict[int, ResourceList]:
    """The usage each applicable quota is charged: the object's, or on update what it adds."""
    deltas = {i: usage for i in indexes}
    if attrs.operation == UPDATE:
        old = attrs.old_object
        if old is None:
            raise forbidden(attrs, "unable to get previous usage since prior version of object was not found")
        if (old.get("metadata") or {}).get("resourceVersion"):
            delta = rl.subtract_non_negative(usage, evaluator.usage(old))
            deltas.update({i: delta for i in indexes if matches(evaluator, quotas[i], old)})
    nonzero = {i: rl.remove_zeros(delta) for i, delta in deltas.items()}
    return {i: delta for i, delta in nonzero.items() if delta}


def _charge(quota: Object, delta: ResourceList, attrs: Attributes) -> Object:
    """The quota with its usage raised by `delta`, or the exceeded-quota refusal."""
    hard = hard_of(quota)
    requested = rl.mask(delta, hard)
    used = used_of(quota)
    new_used = rl.add(used, requested)
    if attrs.subresource != "status":
        allowed, exceeded = rl.less_than_or_equal(rl.mask(new_used, requested), hard)
        if not allowed:
            raise forbidden(attrs, f"exceeded quota: {quota['metadata']['name']}, "
                                   f"requested: {rl.pretty_print(rl.mask(requested, exceeded))}, "
                                   f"used: {rl.pretty_print(rl.mask(used, exceeded))}, "
                                   f"limited: {rl.pretty_print(rl.mask(hard, exceeded))}")
    charged = copy.deepcopy(quota)
    charged.setdefault("status", {})["used"] = rl.to_strings(new_used)
    return charged


def check_request(quotas: list[Object], attrs: Attributes, evaluator: Evaluator) -> list[Object]:
    """CheckRequest: the quotas as they would be with the request admitted (not yet written)."""
    if not evaluator.handles(attrs):
        return quotas
    indexes = _interesting(quotas, attrs, evaluator)
    if not indexes:
        return quotas
    obj = attrs.object or {}
    if attrs.namespace and isinstance(obj.get("metadata"), dict):
        obj["metadata"].setdefault("namespace", attrs.namespace)
    usage = evaluator.usage(obj)
    if negative := rl.negative(usage):
        raise forbidden(attrs, f"quota usage is negative for resource(s): {rl.pretty_print_names(negative)}")
    deltas = _deltas(quotas, indexes, attrs, evaluator, usage)
    out = list(quotas)
    for i, delta in deltas.items():
        out[i] = _charge(quotas[i], delta, attrs)
    return out


class QuotaEvaluator:
    def __init__(self, accessor: QuotaAccessor, registry: Registry):
        self.accessor = accessor
        self.registry = registry
        self.locks: dict[str, asyncio.Lock] = {}

    async def evaluate(self, attrs: Attributes) -> None:
        if (attrs.group, attrs.resource) in IGNORED or attrs.operation not in (CREATE, UPDATE):
            return
        evaluator = self.registry.get(attrs.group, attrs.resource)
        if not evaluator.handles(attrs):
            return
        if not await self.accessor.get_quotas(attrs.namespace):
            return  # no quota in the namespace: nothing to check, nothing to charge
        lock = self.locks.setdefault(attrs.namespace, asyncio.Lock())
        async with lock:
            quotas = await self.accessor.get_quotas(attrs.namespace)
            await self._check_quotas(quotas, attrs, evaluator, RETRIES)

    async def _check_quotas(self, quotas: list[Object], attrs: Attributes, evaluator: Evaluator,
                            retries: int) -> None:
        charged = check_request(quotas, attrs, evaluator)
        if attrs.dry_run:
            return
        changed = [new for old, new in zip(quotas, charged, strict=True)
                   if not rl.equals(used_of(old), used_of(new))]
        failed, last_error = [], None
        for quota in changed:
            try:
                await self.accessor.update_status(quota)
            except errors.StatusError as err:
                failed.append(quota["metadata"]["name"])
                last_error = err
        if not failed:
            return
        if retries <= 0 or last_error is None:
            raise last_error or errors.internal_error(RuntimeError("quota update failed"))
        fresh = await self.accessor.get_quotas(attrs.namespace, live=True)
        await self._check_quotas([q for q in fresh if q["metadata"]["name"] in failed], attrs, evaluator,
                                 retries - 1)
